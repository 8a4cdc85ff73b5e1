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
    ],
)
def test_bad_input_raises(call):
    with pytest.raises(ValueError):
        call()


def test_error_names_the_shapes():
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(2, 4\)"):
        modern_retrieve(np.ones((2, 3)), np.ones((2, 4)), beta=1.0)
