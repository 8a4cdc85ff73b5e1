"""Task generators: layout, answers, determinism, bad input."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from livingdict.tasks import associative_recall, copy_at_offset


@settings(max_examples=30, deadline=None)
@given(
    batch=st.integers(1, 20),
    n_pairs=st.integers(1, 6),
    extra_keys=st.integers(0, 5),
    extra_values=st.integers(0, 5),
    seed=st.integers(0, 10_000),
)
def test_recall_answer_is_the_token_after_the_query(
    batch, n_pairs, extra_keys, extra_values, seed
):
    nk, nv = n_pairs + extra_keys, n_pairs + extra_values
    b = associative_recall(
        batch, n_pairs, nk, nv, generator=torch.Generator().manual_seed(seed)
    )
    t = b.tokens
    assert (
        t.shape == (batch, 2 * n_pairs + 1)
        and len(b) == batch
        and b.length == 2 * n_pairs + 1
    )
    assert b.vocab == nk + nv and t.dtype == b.targets.dtype == torch.int64
    keys, values = t[:, 0:-1:2], t[:, 1::2]
    assert (
        (keys < nk).all() and (values >= nk).all() and (values < nk + nv).all()
    )
    for row in range(
        batch
    ):  # distinct keys and values; the query is one of the keys
        assert (
            len(set(keys[row].tolist()))
            == n_pairs
            == len(set(values[row].tolist()))
        )
        i = keys[row].tolist().index(t[row, -1].item())
        assert (
            b.source[row] == 2 * i + 1 and b.targets[row] == t[row, 2 * i + 1]
        )


def test_recall_is_deterministic_and_covers_every_pair():
    a = associative_recall(
        500, 4, 8, generator=torch.Generator().manual_seed(1)
    )
    b = associative_recall(
        500, 4, 8, generator=torch.Generator().manual_seed(1)
    )
    assert torch.equal(a.tokens, b.tokens) and torch.equal(
        a.targets, b.targets
    )
    assert set(a.source.tolist()) == {1, 3, 5, 7}


def test_recall_uses_global_generator_by_default():
    torch.manual_seed(3)
    a = associative_recall(10, 3, 5)
    torch.manual_seed(3)
    assert torch.equal(associative_recall(10, 3, 5).tokens, a.tokens)


@pytest.mark.parametrize("offset", [0, 3, 6])
def test_copy_answer_sits_at_fixed_position(offset):
    b = copy_at_offset(
        50, 7, 5, offset, generator=torch.Generator().manual_seed(0)
    )
    assert b.tokens.shape == (50, 7) and b.vocab == 5
    assert (
        torch.equal(b.targets, b.tokens[:, 6 - offset])
        and (b.source == 6 - offset).all()
    )


@pytest.mark.parametrize(
    "args, match",
    [
        ((0, 2, 4), "batch >= 1"),
        ((5, 0, 4), "n_pairs >= 1"),
        ((5, 5, 4), "n_keys=4"),
        ((5, 3, 4, 2), "n_values=2"),
    ],
)
def test_recall_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        associative_recall(*args)


@pytest.mark.parametrize(
    "args, match",
    [
        ((5, 4, 3, 4), r"\[0, 4\), got 4"),
        ((5, 4, 3, -1), "got -1"),
        ((5, 0, 3, 0), "length"),
        ((5, 4, 1, 0), "vocab"),
    ],
)
def test_copy_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        copy_at_offset(*args)
