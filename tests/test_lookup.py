"""lookup and soft_keys: agreement with plain algebra, properties, bad input."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from livingdict.lookup import hard_keys, lookup, soft_keys

finite = st.floats(min_value=-30, max_value=30, allow_nan=False, width=32)


def scores_strategy():
    return st.integers(1, 5).flatmap(
        lambda rows: st.integers(1, 7).flatmap(
            lambda cols: st.lists(
                st.lists(finite, min_size=cols, max_size=cols),
                min_size=rows,
                max_size=rows,
            )
        )
    )


def test_lookup_is_weighted_sum_of_rows():
    torch.manual_seed(0)
    w, v = torch.rand(3, 5), torch.randn(5, 4)
    manual = torch.stack(
        [sum(w[i, j] * v[j] for j in range(5)) for i in range(3)]
    )
    torch.testing.assert_close(lookup(w, v), manual)


def test_lookup_batches_broadcast():
    w, v = torch.rand(2, 3, 4, 5), torch.randn(3, 5, 6)
    assert lookup(w, v).shape == (2, 3, 4, 6)
    assert lookup(torch.rand(5), v).shape == (3, 6)


@settings(max_examples=60, deadline=None)
@given(scores_strategy(), st.floats(min_value=1e-3, max_value=50))
def test_soft_keys_rows_are_distributions(scores, beta):
    w = soft_keys(torch.tensor(scores), beta=beta)
    assert (w >= 0).all()
    torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[0]))


@settings(max_examples=60, deadline=None)
@given(scores_strategy())
def test_infinite_beta_is_one_hot_argmax(scores):
    s = torch.tensor(scores)
    w = soft_keys(s, beta=math.inf)
    assert set(w.unique().tolist()) <= {0.0, 1.0}
    assert (w.sum(-1) == 1).all()
    assert (w.argmax(-1) == s.argmax(-1)).all()


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 9), st.integers(1, 6), st.data())
def test_one_hot_row_returns_exactly_one_value_row(n, d, data):
    i = data.draw(st.integers(0, n - 1))
    v = torch.randn(n, d)
    assert torch.equal(lookup(hard_keys(i, n), v), v[i])


def test_soft_keys_dim_argument():
    s = torch.randn(4, 3)
    torch.testing.assert_close(soft_keys(s, dim=0).sum(0), torch.ones(3))


@pytest.mark.parametrize("beta", [0.0, -1.0, float("nan")])
def test_soft_keys_rejects_bad_beta(beta):
    with pytest.raises(ValueError, match="beta"):
        soft_keys(torch.randn(2, 3), beta=beta)


def test_soft_keys_rejects_empty():
    with pytest.raises(ValueError, match=r"\(2, 0\)"):
        soft_keys(torch.empty(2, 0))


def test_lookup_names_both_shapes_on_mismatch():
    with pytest.raises(ValueError, match=r"\(3, 5\).*\(4, 2\)"):
        lookup(torch.rand(3, 5), torch.rand(4, 2))


def test_lookup_rejects_1d_values_and_bad_batches():
    with pytest.raises(ValueError, match=r"\(5,\)"):
        lookup(torch.rand(5), torch.rand(5))
    with pytest.raises(ValueError, match="broadcast"):
        lookup(torch.rand(2, 3, 5), torch.rand(4, 5, 6))


def test_hard_keys_rejects_out_of_range():
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        hard_keys(torch.tensor([0, 3]), 3)
    with pytest.raises(ValueError, match="n >= 1"):
        hard_keys(0, 0)
