"""projections: the Gaussian matrix (scale, generator), the arc-cosine kernel (known values, a ReLU layer never makes two inputs less
alike, agreement with a wide random layer), bad input."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from livingdict import projections


def test_gaussian_shape_scale_and_generator():
    g = torch.Generator().manual_seed(0)
    w = projections.gaussian(64, 2000, generator=g)
    assert w.shape == (64, 2000) and w.dtype == torch.float64
    assert float(w.std()) == pytest.approx(1 / 8, rel=0.02)
    w2 = projections.gaussian(
        64, 2000, generator=torch.Generator().manual_seed(0)
    )
    assert torch.equal(w, w2)
    assert float(
        projections.gaussian(10, 5000, scale=3.0).std()
    ) == pytest.approx(3, rel=0.03)


def test_gaussian_float32_is_the_same_draw():
    # float32 skips the conversion, not the sample: same numbers to float32
    w64 = projections.gaussian(
        30, 40, generator=torch.Generator().manual_seed(3)
    )
    w32 = projections.gaussian(
        30, 40, generator=torch.Generator().manual_seed(3), dtype=torch.float32
    )
    assert w32.dtype == torch.float32
    torch.testing.assert_close(w32, w64.float(), rtol=1e-6, atol=0)


def test_bad_inputs():
    with pytest.raises(ValueError, match="positive integer"):
        projections.gaussian(0, 3)
    with pytest.raises(ValueError, match="scale"):
        projections.gaussian(3, 3, scale=-1.0)
    with pytest.raises(ValueError, match="float16"):
        projections.gaussian(3, 3, dtype=torch.float16)
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        projections.arccos_kernel(1.2)
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        projections.arccos_kernel(np.nan)
    with pytest.raises(ValueError, match="degree"):
        projections.arccos_kernel(0.5, degree=3)
    with pytest.raises(ValueError, match=r"\(8,\)"):
        projections.random_layer(torch.ones(8), 10)


def test_arccos_kernel_known_values():
    k = projections.arccos_kernel
    assert k(1.0) == pytest.approx(1) and k(0.0) == pytest.approx(1 / math.pi)
    assert k(-1.0) == pytest.approx(0, abs=1e-12)
    assert k(0.0, degree=0) == pytest.approx(0.5)
    assert k(-1.0, degree=0) == pytest.approx(0)
    assert k(1.0, degree=2) == pytest.approx(1)
    assert k(0.0, degree=2) == pytest.approx(1 / 6)
    np.testing.assert_allclose(k(np.array([[1.0, 1.0]])), [[1.0, 1.0]])


@settings(max_examples=50, deadline=None)
@given(st.floats(-1, 1))
def test_relu_kernel_lifts_and_stays_in_range(c):
    k1 = float(projections.arccos_kernel(c))
    assert 0 <= k1 <= 1 + 1e-12
    assert k1 >= c - 1e-12  # a ReLU layer never makes two inputs less alike


@pytest.mark.parametrize("degree", [0, 1])
def test_arccos_kernel_matches_a_wide_random_layer(degree):
    theta = torch.linspace(0, math.pi, 7, dtype=torch.float64)
    x = torch.stack([torch.ones_like(theta), torch.zeros_like(theta)], 1)
    y = torch.stack([torch.cos(theta), torch.sin(theta)], 1)  # angle θ
    g = torch.Generator().manual_seed(0)
    zx = projections.random_layer(x, 200_000, relu=False, generator=g)
    g = torch.Generator().manual_seed(0)  # the same W for both
    zy = projections.random_layer(y, 200_000, relu=False, generator=g)
    act = torch.relu if degree == 1 else lambda z: (z > 0).double()
    hx, hy = act(zx), act(zy)
    cos = (hx * hy).sum(1) / (hx.norm(dim=1) * hy.norm(dim=1))
    want = projections.arccos_kernel(torch.cos(theta), degree=degree)
    np.testing.assert_allclose(cos.numpy(), want, atol=0.01)
    # and the ReLU layer itself is that layer after its ReLU
    g = torch.Generator().manual_seed(0)
    h = projections.random_layer(x, 200_000, generator=g)
    torch.testing.assert_close(h, torch.relu(zx))
