"""projections: shapes and structure of each matrix, the condition-number bound
on similarity (a property: it holds for every map and pair, and it is sharp),
the arc-cosine kernel (known values, a ReLU layer never makes two inputs less
alike, agreement with a wide random layer), bad input."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from livingdict import metrics, projections


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


def test_near_identity_and_blur_and_resize_structure():
    assert torch.equal(
        projections.near_identity(5, 0.0), torch.eye(5, dtype=torch.float64)
    )
    b = projections.blur((8, 8), 1.0)
    assert b.shape == (64, 64)
    torch.testing.assert_close(b.sum(0), torch.ones(64, dtype=torch.float64))
    assert (b >= 0).all() and int(
        b.argmax(0)[27]
    ) == 27  # strongest weight on itself
    r = projections.resize((8, 8), (28, 28))
    assert r.shape == (64, 784)
    torch.testing.assert_close(r.sum(0), torch.ones(784, dtype=torch.float64))
    const = torch.full(
        (1, 64), 0.5, dtype=torch.float64
    )  # a flat image stays flat
    torch.testing.assert_close(
        const @ r, torch.full((1, 784), 0.5, dtype=torch.float64)
    )
    torch.testing.assert_close(
        projections.resize((3, 4), (3, 4)), torch.eye(12, dtype=torch.float64)
    )


@pytest.mark.parametrize("kappa", [1.0, 7.0, 1e3])
def test_conditioned_has_exact_condition_number(kappa):
    w = projections.conditioned(
        16, 40, kappa, generator=torch.Generator().manual_seed(1)
    )
    assert w.shape == (16, 40)
    assert np.linalg.cond(w.numpy()) == pytest.approx(kappa, rel=1e-9)


def test_cosine_bounds_known_values():
    lo, hi = projections.cosine_bounds(np.array([0.0, 1.0, -1.0]), 1.0)
    np.testing.assert_allclose(lo, [0, 1, -1], atol=1e-12)
    np.testing.assert_allclose(hi, [0, 1, -1], atol=1e-12)
    lo, hi = projections.cosine_bounds(0.0, 3.0)  # θ = 90°, tan(θ/2) = 1
    assert hi == pytest.approx(math.cos(2 * math.atan(1 / 3)))
    assert lo == pytest.approx(math.cos(2 * math.atan(3)))


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 10_000),
    st.floats(1.0, 1e4),
    st.integers(2, 6),
    st.integers(0, 4),
)
def test_condition_number_bounds_every_pair(seed, kappa, d_in, extra):
    g = torch.Generator().manual_seed(seed)
    w = projections.conditioned(d_in, d_in + extra, kappa, generator=g)
    x = torch.randn(12, d_in, generator=g, dtype=torch.float64)
    iu = np.triu_indices(12, 1)
    c_in, c_out = (
        metrics.pairwise_cosine(x)[iu],
        metrics.pairwise_cosine(x @ w)[iu],
    )
    # angles recovered from cosines lose their precision next to 0 and π: skip those pairs
    keep = (np.abs(c_in) < 1 - 1e-8) & (np.abs(c_out) < 1 - 1e-8)
    d = projections.half_angle_distortion(c_in[keep], c_out[keep])
    assert (d <= math.log(kappa) + 1e-6).all()
    lo, hi = projections.cosine_bounds(c_in, kappa)
    assert (c_out >= lo - 1e-9).all() and (c_out <= hi + 1e-9).all()


def test_condition_number_bound_is_sharp():
    torch.manual_seed(0)
    kappa, theta = 50.0, 1.1
    u, _ = torch.linalg.qr(torch.randn(6, 6, dtype=torch.float64))
    s = torch.tensor([1.0, 0.5, 0.3, 0.2, 0.1, 1 / kappa], dtype=torch.float64)
    w = u * s @ torch.linalg.qr(torch.randn(6, 6, dtype=torch.float64))[0].T
    # inputs symmetric about the strongest and weakest input directions (rows of uᵀ)
    a, b = math.cos(theta / 2), math.sin(theta / 2)
    x = torch.stack([a * u[:, 0] + b * u[:, -1], a * u[:, 0] - b * u[:, -1]])
    c_in = float(metrics.cosine(x[0], x[1]))
    c_out = float(metrics.cosine((x @ w)[0], (x @ w)[1]))
    d = projections.half_angle_distortion(c_in, c_out)
    assert d == pytest.approx(math.log(kappa), rel=1e-9)
    assert c_out == pytest.approx(
        projections.cosine_bounds(c_in, kappa)[1], rel=1e-9
    )


def test_bad_inputs():
    with pytest.raises(ValueError, match="positive integer"):
        projections.gaussian(0, 3)
    with pytest.raises(ValueError, match="scale"):
        projections.gaussian(3, 3, scale=-1.0)
    with pytest.raises(ValueError, match="float16"):
        projections.gaussian(3, 3, dtype=torch.float16)
    with pytest.raises(ValueError, match="eps"):
        projections.near_identity(3, -0.1)
    with pytest.raises(ValueError, match=r"\(8, 8, 1\)"):
        projections.blur((8, 8, 1), 1.0)
    with pytest.raises(ValueError, match="sigma"):
        projections.blur((8, 8), 0.0)
    with pytest.raises(ValueError, match=r"\(8,\)"):
        projections.resize((8,), (28, 28))
    with pytest.raises(ValueError, match=r"\(64, 16\)"):
        projections.conditioned(64, 16, 10.0)
    with pytest.raises(ValueError, match="kappa"):
        projections.conditioned(4, 4, 0.5)
    with pytest.raises(ValueError, match=r"\(3,\) and \(2,\)"):
        projections.half_angle_distortion([0.1, 0.2, 0.3], [0.1, 0.2])
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        projections.half_angle_distortion([1.5], [0.2])
    with pytest.raises(ValueError, match="kappa"):
        projections.cosine_bounds(0.3, 0.9)
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
