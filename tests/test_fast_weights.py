"""fast_weights: sum and delta rules, the crosstalk law, bad input."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from livingdict.fast_weights import (
    delta_rule,
    delta_rule_until,
    least_squares,
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


def _delta_loop(k, v, sweeps):
    """The delta rule written out, one write at a time (the reference)."""
    w = np.zeros((v.shape[1], k.shape[1]))
    for _ in range(sweeps):
        for ki, vi in zip(k, v, strict=True):
            w += np.outer(vi - w @ ki, ki / (ki @ ki))
    return w


@pytest.mark.parametrize("n, sweeps", [(8, 1), (8, 5), (40, 7), (40, 12)])
def test_delta_rule_equals_the_write_by_write_loop(n, sweeps):
    rng = np.random.default_rng(n + sweeps)
    k, v = random_keys(n, 16, rng), rng.standard_normal((n, 3))
    np.testing.assert_allclose(
        delta_rule(k, v, sweeps), _delta_loop(k, v, sweeps), atol=1e-10
    )


def test_delta_rule_writes_the_last_pair_exactly_and_converges_below_d():
    rng = np.random.default_rng(2)
    k, v = random_keys(8, 16, rng), rng.standard_normal((8, 3))
    w1 = delta_rule(k, v)
    np.testing.assert_allclose(read(w1, k[-1:]), v[-1:], atol=1e-10)
    assert np.abs(read(w1, k) - v).max() > 1e-3  # one sweep is not exact
    w = delta_rule(k, v, sweeps=200)
    np.testing.assert_allclose(read(w, k), v, atol=1e-8)
    # from W = 0 it converges to the minimum-norm solution, V^T (K^T)^+
    np.testing.assert_allclose(w, least_squares(k, v), atol=1e-8)


def test_delta_rule_until_stops_when_every_pair_is_stored():
    rng = np.random.default_rng(5)
    k, v = random_keys(8, 32, rng), rng.standard_normal((8, 4))
    w, sweeps = delta_rule_until(k, v, tol=1e-12)
    assert 1 < sweeps < 10_000 and np.abs(read(w, k) - v).max() <= 1e-9
    np.testing.assert_array_equal(w, delta_rule(k, v, sweeps=sweeps))
    _, capped = delta_rule_until(k, v, 1e-30, max_sweeps=5)
    assert capped == 4  # the largest power of two within the cap


def test_past_d_the_delta_rule_cycles_below_least_squares():
    rng = np.random.default_rng(6)
    n, d = 64, 32
    k, v = random_keys(n, d, rng), rng.standard_normal((n, 8))
    w, sweeps = delta_rule_until(k, v, tol=1e-12)
    # the matrix at the end of a sweep has settled ...
    np.testing.assert_allclose(delta_rule(k, v, sweeps + 1), w, atol=1e-10)
    # ... but it is not a fixed point of the single writes: it cycles
    k0, v0 = k[0], v[0]
    after_one_write = w + np.outer(v0 - w @ k0, k0)
    assert np.abs(after_one_write - w).max() > 0.1
    # it is not the least-squares memory, and it stores the last pairs best
    err = ((read(w, k) - v) ** 2).sum()
    err_ls = ((read(least_squares(k, v), k) - v) ** 2).sum()
    assert err > 1.2 * err_ls
    per_pair = ((read(w, k) - v) ** 2).sum(1)
    assert per_pair[-d // 2 :].mean() < 0.5 * per_pair[: d // 2].mean()


def test_least_squares_minimises_the_error_of_any_linear_memory():
    rng = np.random.default_rng(7)
    k, v = random_keys(50, 20, rng), rng.standard_normal((50, 5))
    w_ls = least_squares(k, v)
    err = ((read(w_ls, k) - v) ** 2).sum()
    for w in (sum_rule(k, v), delta_rule(k, v, 50), w_ls + 1e-3):
        assert ((read(w, k) - v) ** 2).sum() > err
    k2 = random_keys(12, 20, rng)
    v2 = rng.standard_normal((12, 5))
    np.testing.assert_allclose(read(least_squares(k2, v2), k2), v2, atol=1e-10)


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
        lambda: least_squares(np.ones((3, 4)), np.ones((2, 4))),
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
