"""fast_weights: sum and delta rules, the crosstalk law, bad input."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from livingdict.fast_weights import (
    delta_rule,
    delta_rule_until,
    orthonormal_keys,
    random_keys,
    read,
    sum_rule,
    sum_rule_quality,
)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 12), st.integers(0, 10_000))
def test_sum_rule_is_exact_for_orthonormal_keys(n, seed):
    rng = np.random.default_rng(seed)
    k = orthonormal_keys(n, 12, rng)
    v = rng.standard_normal((n, 5))
    np.testing.assert_allclose(read(sum_rule(k, v), k), v, atol=1e-10)


def test_sum_rule_equals_unnormalised_linear_attention():
    rng = np.random.default_rng(0)
    k, v, q = (
        rng.standard_normal((7, 4)),
        rng.standard_normal((7, 3)),
        rng.standard_normal((2, 4)),
    )
    np.testing.assert_allclose(read(sum_rule(k, v), q), (q @ k.T) @ v)


def test_sum_rule_quality_law_for_random_keys():
    rng = np.random.default_rng(1)
    d = 128
    for n in (32, 128, 256):
        k, v = random_keys(n, d, rng), rng.standard_normal((n, d))
        out = read(sum_rule(k, v), k)
        cos = (
            (out * v).sum(1)
            / np.linalg.norm(out, axis=1)
            / np.linalg.norm(v, axis=1)
        )
        assert abs(cos.mean() - sum_rule_quality(n / d)) < 0.02


def test_delta_rule_writes_the_last_pair_exactly_and_converges_below_d():
    rng = np.random.default_rng(2)
    k, v = random_keys(8, 16, rng), rng.standard_normal((8, 3))
    w1 = delta_rule(k, v)
    np.testing.assert_allclose(read(w1, k[-1:]), v[-1:], atol=1e-10)
    assert np.abs(read(w1, k) - v).max() > 1e-3  # one sweep is not exact
    np.testing.assert_allclose(
        read(delta_rule(k, v, sweeps=200), k), v, atol=1e-8
    )


def test_delta_rule_until_stops_when_every_pair_is_stored():
    rng = np.random.default_rng(5)
    k, v = random_keys(8, 32, rng), rng.standard_normal((8, 4))
    w, sweeps = delta_rule_until(k, v, tol=1e-9)
    assert 1 < sweeps < 10_000 and np.abs(read(w, k) - v).max() <= 1e-9
    np.testing.assert_array_equal(w, delta_rule(k, v, sweeps=sweeps))
    _, capped = delta_rule_until(
        random_keys(40, 32, rng), rng.standard_normal((40, 4)), 1e-9, 5
    )
    assert (
        capped == 5
    )  # more keys than dimensions: never exact, stops at the cap


def test_delta_rule_equals_sum_rule_for_orthonormal_keys():
    rng = np.random.default_rng(3)
    k, v = orthonormal_keys(6, 6, rng), rng.standard_normal((6, 2))
    np.testing.assert_allclose(delta_rule(k, v), sum_rule(k, v), atol=1e-12)


def test_keys_are_unit_and_orthonormal():
    rng = np.random.default_rng(4)
    np.testing.assert_allclose(
        np.linalg.norm(random_keys(5, 9, rng), axis=1), 1.0
    )
    q = orthonormal_keys(4, 9, rng)
    np.testing.assert_allclose(q @ q.T, np.eye(4), atol=1e-12)


@pytest.mark.parametrize(
    "call",
    [
        lambda: sum_rule(np.ones((3, 4)), np.ones((2, 4))),
        lambda: sum_rule(np.ones(4), np.ones((1, 4))),
        lambda: sum_rule(np.ones((0, 4)), np.ones((0, 4))),
        lambda: delta_rule(np.ones((2, 4)), np.ones((2, 4)), sweeps=0),
        lambda: delta_rule(np.zeros((2, 4)), np.ones((2, 4))),
        lambda: delta_rule_until(
            np.ones((2, 4)), np.ones((2, 4)), tol=1e-6, max_sweeps=0
        ),
        lambda: read(np.ones((3, 4)), np.ones((2, 5))),
        lambda: orthonormal_keys(5, 4, np.random.default_rng()),
        lambda: random_keys(0, 4, np.random.default_rng()),
        lambda: sum_rule_quality(-1.0),
    ],
)
def test_bad_input_raises(call):
    with pytest.raises(ValueError):
        call()


def test_error_names_the_shapes():
    with pytest.raises(ValueError, match=r"\(3, 4\).*\(2, 4\)"):
        sum_rule(np.ones((3, 4)), np.ones((2, 4)))
