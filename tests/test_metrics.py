"""metrics: known values, properties, and bad input that would otherwise be NaN."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from livingdict import metrics


def test_cosine_known_values():
    assert metrics.cosine([1, 0], [0, 1]) == 0
    assert metrics.cosine([1, 2], [2, 4]) == pytest.approx(1)
    np.testing.assert_allclose(metrics.cosine(np.eye(3), -np.eye(3)), -1)


def test_cosine_accepts_tensors():
    assert metrics.cosine(torch.ones(4), torch.ones(4)) == pytest.approx(1)


@settings(max_examples=50, deadline=None)
@given(
    arrays(float, (5, 3), elements=st.floats(-10, 10)).filter(
        lambda a: (np.abs(a).sum(1) > 1e-3).all()
    )
)
def test_pairwise_cosine_is_symmetric_unit_diagonal(x):
    c = metrics.pairwise_cosine(x)
    np.testing.assert_allclose(c, c.T, atol=1e-12)
    np.testing.assert_allclose(np.diag(c), 1, atol=1e-9)
    assert (np.abs(c) <= 1 + 1e-9).all()


def test_correlation_is_shift_invariant():
    a, b = np.random.default_rng(0).standard_normal((2, 10))
    assert metrics.correlation(a + 5, b - 3) == pytest.approx(
        np.corrcoef(a, b)[0, 1]
    )


def test_effective_keys_extremes():
    assert metrics.effective_keys([0, 0, 1, 0]) == pytest.approx(1)
    assert metrics.effective_keys(np.ones(7)) == pytest.approx(7)
    np.testing.assert_allclose(
        metrics.effective_keys(np.array([[1, 1, 0], [2, 0, 0]])), [2, 1]
    )


def test_bad_inputs():
    with pytest.raises(ValueError, match=r"\(3,\).*\(2,\)"):
        metrics.cosine([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="zero vector"):
        metrics.cosine([0, 0], [1, 2])
    with pytest.raises(ValueError, match="zero row"):
        metrics.pairwise_cosine(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="non-negative"):
        metrics.effective_keys([-1, 2])
    with pytest.raises(ValueError, match="all-zero"):
        metrics.effective_keys([0, 0])
