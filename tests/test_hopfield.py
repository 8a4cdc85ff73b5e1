"""hopfield: classical and modern retrieval, their capacities, bad input."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from livingdict.hopfield import (
    classical_retrieve,
    corrupt,
    modern_retrieve,
    random_patterns,
    retrieval_capacity,
    retrieval_capacity_law,
    success_rate,
)
from livingdict.layers import attention


def test_modern_update_is_attention():
    rng = np.random.default_rng(0)
    x = random_patterns(20, 16, rng)
    q = corrupt(x[:5], 0.1, rng)
    out, _ = attention(
        torch.as_tensor(q), torch.as_tensor(x), torch.as_tensor(x), scale=0.3
    )
    np.testing.assert_allclose(
        modern_retrieve(x, q, beta=0.3), out.numpy(), atol=1e-12
    )


def test_modern_retrieves_far_beyond_classical_capacity():
    rng = np.random.default_rng(1)
    d = 64
    x = random_patterns(
        4 * d, d, rng
    )  # 4·d patterns, ~30 times the classical capacity
    q = corrupt(x[:50], 0.1, rng)
    assert success_rate(modern_retrieve(x, q, beta=1.0), x[:50]) == 1.0
    assert success_rate(classical_retrieve(x, q, rng), x[:50]) == 0.0


def test_classical_retrieves_below_capacity():
    rng = np.random.default_rng(2)
    d = 100
    x = random_patterns(3, d, rng)
    assert (
        success_rate(classical_retrieve(x, corrupt(x, 0.1, rng), rng), x)
        == 1.0
    )


def test_tiny_beta_returns_the_mean_not_a_pattern():
    rng = np.random.default_rng(3)
    x = random_patterns(50, 32, rng)
    out = modern_retrieve(x, x[:4], beta=1e-6)
    np.testing.assert_allclose(
        out, np.broadcast_to(x.mean(0), out.shape), atol=1e-3
    )


def test_success_rate_counts_wrong_bits():
    t = np.ones((4, 10))
    r = t.copy()
    r[1, :1], r[2, :2], r[3, :3] = -1, -1, -1  # 0, 1, 2, 3 wrong bits
    assert success_rate(r, t) == 0.25
    assert success_rate(r, t, max_wrong=2) == 0.75
    assert success_rate(np.zeros((4, 10)), t) == 1.0  # sign(0) = +1


def test_retrieval_capacity_matches_its_law():
    rng = np.random.default_rng(4)
    for d, flips in [(24, 6), (40, 10)]:
        law = retrieval_capacity_law(d, flips)
        measured = retrieval_capacity(d, flips, 400, rng)
        assert abs(np.log(measured / law)) < 0.25, (d, measured, law)


def test_retrieval_capacity_is_where_one_step_fails_half_the_queries():
    rng = np.random.default_rng(5)
    d, flips, n = 32, 8, 300
    p = round(retrieval_capacity_law(d, flips))
    rates = []
    for _ in range(4):
        x = random_patterns(p, d, rng)
        q = x[:n].copy() if p >= n else x.copy()
        for row in q:
            row[rng.choice(d, flips, replace=False)] *= -1
        out = modern_retrieve(x, q, beta=10.0)
        rates.append(success_rate(out, x[: len(q)]))
    assert 0.35 < np.mean(rates) < 0.65, rates


def test_capacity_law_grows_exponentially_not_as_a_power():
    ds = np.array([32, 64, 96, 128])
    logs = np.log([retrieval_capacity_law(d, d // 4) for d in ds])
    rises = np.diff(logs)
    assert rises[-1] > 0.9 * rises[0]  # a power of d would shrink to 0.42×
    assert retrieval_capacity_law(100, 10) > 1e15


@settings(max_examples=30, deadline=None)
@given(st.floats(0, 1), st.integers(0, 10_000))
def test_corrupt_flips_the_expected_bits(flip, seed):
    rng = np.random.default_rng(seed)
    x = random_patterns(4, 8, rng)
    y = corrupt(x, flip, rng)
    assert set(np.unique(y)) <= {-1.0, 1.0}
    if flip == 0:
        assert np.array_equal(x, y)
    if flip == 1:
        assert np.array_equal(x, -y)


@pytest.mark.parametrize(
    "call",
    [
        lambda: random_patterns(0, 4, np.random.default_rng()),
        lambda: corrupt(np.ones((2, 3)), 1.5, np.random.default_rng()),
        lambda: corrupt(np.full((2, 3), 0.5), 0.1, np.random.default_rng()),
        lambda: classical_retrieve(
            np.ones((2, 3)), np.ones((2, 4)), np.random.default_rng()
        ),
        lambda: modern_retrieve(np.ones((2, 3)), np.ones((2, 4)), beta=1.0),
        lambda: modern_retrieve(
            np.ones((2, 3)), np.ones((2, 3)), beta=1.0, steps=0
        ),
        lambda: modern_retrieve(np.ones((2, 3)), np.ones((2, 3)), beta=-1.0),
        lambda: success_rate(np.ones((2, 3)), np.ones((3, 3))),
        lambda: success_rate(np.ones((2, 3)), np.ones((2, 3)), -1),
        lambda: retrieval_capacity(8, 9, 10, np.random.default_rng()),
        lambda: retrieval_capacity(8, 2, 0, np.random.default_rng()),
        lambda: retrieval_capacity_law(8, 4),
        lambda: retrieval_capacity_law(0, 0),
    ],
)
def test_bad_input_raises(call):
    with pytest.raises(ValueError):
        call()


def test_error_names_the_shapes():
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(2, 4\)"):
        modern_retrieve(np.ones((2, 3)), np.ones((2, 4)), beta=1.0)
