"""kernels: known values of the arc-cosine kernel, its agreement with a wide random
layer, the iterated map's fixed point, and bad input."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from livingdict import kernels


def test_arccos_kernel_known_values():
    k = kernels.arccos_kernel
    assert k(1.0) == pytest.approx(1) and k(0.0) == pytest.approx(1 / math.pi)
    assert k(-1.0) == pytest.approx(0, abs=1e-12)
    assert k(0.0, degree=0) == pytest.approx(0.5) and k(
        -1.0, degree=0
    ) == pytest.approx(0)
    assert k(1.0, degree=2) == pytest.approx(1)
    np.testing.assert_allclose(k(np.array([[1.0, 1.0]])), [[1.0, 1.0]])


@settings(max_examples=50, deadline=None)
@given(st.floats(-1, 1))
def test_relu_kernel_lifts_and_stays_in_range(c):
    k1 = float(kernels.arccos_kernel(c))
    assert 0 <= k1 <= 1 + 1e-12
    assert k1 >= c - 1e-12  # a ReLU layer never makes two inputs less alike


def test_arccos_kernel_matches_a_wide_random_relu_layer():
    g = torch.Generator().manual_seed(0)
    theta = torch.linspace(0, math.pi, 7, dtype=torch.float64)
    x = torch.stack(
        [torch.ones_like(theta), torch.zeros_like(theta)], 1
    )  # angle 0
    y = torch.stack([torch.cos(theta), torch.sin(theta)], 1)  # angle θ
    hx = kernels.random_layer(x, 200_000, generator=g)
    g = torch.Generator().manual_seed(0)  # same W for both
    hy = kernels.random_layer(y, 200_000, generator=g)
    cos = (hx * hy).sum(1) / (hx.norm(dim=1) * hy.norm(dim=1))
    np.testing.assert_allclose(
        cos.numpy(), kernels.arccos_kernel(torch.cos(theta)), atol=0.01
    )


def test_iterate_kernel_climbs_to_one():
    c = kernels.iterate_kernel(np.array([-1.0, 0.0, 0.5, 1.0]), 200)
    assert c.shape == (201, 4)
    assert (np.diff(c, axis=0) >= -1e-12).all()
    np.testing.assert_allclose(c[-1], 1, atol=2e-3)
    np.testing.assert_array_equal(kernels.iterate_kernel(0.3, 0), [0.3])


def test_layer_cosines_shapes_and_linear_control():
    x = torch.randn(
        5, 8, generator=torch.Generator().manual_seed(2), dtype=torch.float64
    )
    c = kernels.layer_cosines(
        x, 3, 1000, generator=torch.Generator().manual_seed(3)
    )
    assert c.shape == (4, 5, 5)
    np.testing.assert_allclose(np.diagonal(c, axis1=1, axis2=2), 1, atol=1e-12)
    iu = np.triu_indices(5, 1)
    theory = kernels.iterate_kernel(c[0][iu], 3)
    np.testing.assert_allclose(c[:, iu[0], iu[1]], theory, atol=0.15)
    lin = kernels.layer_cosines(
        x, 3, 1000, relu=False, generator=torch.Generator().manual_seed(3)
    )
    np.testing.assert_allclose(
        lin[-1], lin[0], atol=0.15
    )  # no ReLU: similarity kept
    assert (
        c[-1][iu] - lin[-1][iu]
    ).mean() > 0.3  # with ReLU: every pair climbs


def test_bad_inputs():
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        kernels.arccos_kernel(1.2)
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        kernels.arccos_kernel(np.nan)
    with pytest.raises(ValueError, match="degree"):
        kernels.arccos_kernel(0.5, degree=3)
    with pytest.raises(ValueError, match="depth"):
        kernels.iterate_kernel(0.5, -1)
    with pytest.raises(ValueError, match="degree"):
        kernels.iterate_kernel(0.5, 2, degree=5)
    with pytest.raises(ValueError, match=r"\(8,\)"):
        kernels.random_layer(torch.ones(8), 10)
    with pytest.raises(ValueError, match=r"\(2, 3, 4\)"):
        kernels.layer_cosines(torch.ones(2, 3, 4), 1, 10)
    with pytest.raises(
        ValueError, match="zero row"
    ):  # an all-zero input has no angle
        kernels.layer_cosines(torch.zeros(2, 3), 1, 10)
