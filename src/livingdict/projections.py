"""Random and structured matrices, and what a linear map or a random ReLU
layer does to an angle (chapter 1). Matrices are ``(d_in, d_out)``, acting
as ``y = x @ W`` (column ``j``: the filter behind output ``j``), float64 (the
lessons compare cosines to 1e-9); random ones come from torch's generator.
"""

import math
from collections.abc import Sequence

import numpy as np
import torch
from torch import Generator, Tensor

_F64 = torch.float64


def _positive(**sizes: int) -> None:
    for name, v in sizes.items():
        if int(v) != v or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")


def _image(shape: Sequence[int], who: str) -> None:
    if len(shape) != 2 or any(int(v) != v or v < 1 for v in shape):
        raise ValueError(
            f"{who} needs an image shape (h, w) of positive integers, "
            f"got {tuple(shape)}"
        )


def gaussian(
    d_in: int,
    d_out: int,
    *,
    scale: float | None = None,
    generator: Generator | None = None,
    dtype: torch.dtype = _F64,
) -> Tensor:
    """A Gaussian random matrix, ``W_ij ~ N(0, scale²)``, by default
    ``scale = 1/√d_in`` (so ``E‖xW‖² = (d_out/d_in)‖x‖²``). Drawn in float32
    (torch's CPU sampler is 4x faster there) and returned as ``dtype``."""
    _positive(d_in=d_in, d_out=d_out)
    s = 1.0 / math.sqrt(d_in) if scale is None else float(scale)
    if s <= 0:
        raise ValueError(f"gaussian: scale must be > 0, got {scale}")
    if dtype not in (torch.float32, _F64):
        raise ValueError(
            f"gaussian: dtype must be float32 or float64, got {dtype}"
        )
    w = torch.randn(d_in, d_out, generator=generator).to(dtype)
    return w.mul_(s)


def near_identity(
    n: int, eps: float, *, generator: Generator | None = None
) -> Tensor:
    """``I + ε G/√n`` with ``G_ij ~ N(0, 1)``: the identity, perturbed by a
    random matrix of relative size ``ε`` (``‖εG/√n‖_F ≈ ε‖I‖_F``)."""
    _positive(n=n)
    if eps < 0:
        raise ValueError(f"near_identity: eps must be >= 0, got {eps}")
    return torch.eye(n, dtype=_F64) + eps * gaussian(n, n, generator=generator)


def _blur_1d(n: int, sigma: float) -> Tensor:
    i = torch.arange(n, dtype=_F64)
    k = torch.exp(-((i[:, None] - i[None, :]) ** 2) / (2 * sigma**2))
    return k / k.sum(0, keepdim=True)


def blur(shape: Sequence[int], sigma: float) -> Tensor:
    """Gaussian blur of an image of ``shape = (h, w)``, flattened row by row,
    as a ``(hw, hw)`` matrix: ``W[i, j] ∝ exp(−‖p_i − p_j‖² / 2σ²)`` for pixel
    positions ``p``, each column normalised to sum to 1 (output ``j`` is a
    weighted mean)."""
    _image(shape, "blur")
    if sigma <= 0:
        raise ValueError(f"blur: sigma must be > 0, got {sigma}")
    return torch.kron(_blur_1d(shape[0], sigma), _blur_1d(shape[1], sigma))


def _resize_1d(n_in: int, n_out: int) -> Tensor:
    # output pixel j has its centre at (j + ½)·n_in/n_out − ½ (input pixels)
    j = torch.arange(n_out, dtype=_F64)
    pos = ((j + 0.5) * n_in / n_out - 0.5).clamp(0, n_in - 1)
    lo = pos.floor().long().clamp(max=n_in - 1)
    hi = (lo + 1).clamp(max=n_in - 1)
    frac = pos - lo
    m = torch.zeros(n_in, n_out, dtype=_F64)
    cols = torch.arange(n_out)
    m[lo, cols] += 1 - frac
    m[hi, cols] += frac
    return m


def resize(shape_in: Sequence[int], shape_out: Sequence[int]) -> Tensor:
    """Bilinear resizing of an ``(h, w)`` image to ``(H, W)`` as a
    ``(hw, HW)`` matrix.

    ``x_big = x @ resize((8, 8), (28, 28))`` turns a flattened 8×8 digit into
    a 28×28 one; each output pixel is a convex combination of at most 4 input
    pixels (columns sum to 1)."""
    _image(shape_in, "resize")
    _image(shape_out, "resize")
    rows = _resize_1d(shape_in[0], shape_out[0])
    cols = _resize_1d(shape_in[1], shape_out[1])
    return torch.kron(rows, cols)


def conditioned(
    d_in: int, d_out: int, kappa: float, *, generator: Generator | None = None
) -> Tensor:
    """A matrix with condition number exactly ``κ``: ``W = U diag(s) Vᵀ`` with
    random orthonormal ``U (d_in × d_in)``, ``V (d_out × d_in)`` and singular
    values ``s`` spaced geometrically from 1 down to ``1/κ``. Needs
    ``d_out >= d_in`` (an injective map; a narrower one has κ = ∞)."""
    _positive(d_in=d_in, d_out=d_out)
    if d_out < d_in:
        raise ValueError(f"conditioned: need d_out >= d_in, got {d_in, d_out}")
    if not kappa >= 1 or (d_in == 1 and kappa != 1):
        raise ValueError(
            f"conditioned: kappa must be >= 1 (1 if d_in = 1), got {kappa}"
        )
    draw = dict(generator=generator, dtype=_F64)
    u, _ = torch.linalg.qr(torch.randn(d_in, d_in, **draw))
    v, _ = torch.linalg.qr(torch.randn(d_out, d_in, **draw))
    s = torch.logspace(0, -math.log10(kappa), d_in, dtype=_F64)
    return (u * s) @ v.T


def _angles(cos) -> np.ndarray:
    c = np.asarray(cos, dtype=float)
    if np.isnan(c).any() or (np.abs(c) > 1 + 1e-9).any():
        bad = c[np.isnan(c) | (np.abs(c) > 1 + 1e-9)]
        raise ValueError(
            f"cosines must lie in [-1, 1]; {c.shape} holds {bad[:3].tolist()}"
        )
    return np.arccos(np.clip(c, -1.0, 1.0))


def _half_angle_log_tan(cos) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(np.tan(_angles(cos) / 2))


def half_angle_distortion(cos_in, cos_out) -> np.ndarray:
    """How far a map moved a pair's angle, on the scale where the bound is
    simple: ``|log tan(θ'/2) − log tan(θ/2)|`` for ``θ = arccos(cos_in)``,
    ``θ' = arccos(cos_out)``. For an injective linear map with condition
    number κ this never exceeds ``log κ`` (see ``cosine_bounds``)."""
    a, b = np.asarray(cos_in, dtype=float), np.asarray(cos_out, dtype=float)
    if a.shape != b.shape:
        raise ValueError(
            f"half_angle_distortion: shapes differ, {a.shape} and {b.shape}"
        )
    return np.abs(_half_angle_log_tan(b) - _half_angle_log_tan(a))


def cosine_bounds(cos_in, kappa: float) -> tuple[np.ndarray, np.ndarray]:
    """The range a map with condition number κ can move a cosine into.

    With ``t = tan(θ/2)``: ``t/κ <= tan(θ'/2) <= κ t``, so the output cosine
    lies in ``[cos(2 arctan(κ t)), cos(2 arctan(t/κ))]``. The bound is sharp:
    two inputs placed symmetrically about the directions of the largest and
    smallest singular value reach it. Returns ``(lower, upper)``."""
    if not kappa >= 1:
        raise ValueError(f"cosine_bounds: kappa must be >= 1, got {kappa}")
    t = np.exp(_half_angle_log_tan(cos_in))
    return np.cos(2 * np.arctan(kappa * t)), np.cos(2 * np.arctan(t / kappa))


def arccos_kernel(cos, degree: int = 1) -> np.ndarray:
    """Normalised arc-cosine kernel ``k_n(cos θ) = J_n(θ) / J_n(0)`` (Cho &
    Saul 2009): the cosine between ``φ(xW)`` and ``φ(yW)`` for an infinitely
    wide Gaussian ``W``.

    * degree 0 (step ``φ = 1[z > 0]``): ``J₀ = π − θ``
    * degree 1 (ReLU ``φ = max(z, 0)``): ``J₁ = sin θ + (π − θ) cos θ``
    * degree 2 (``φ = max(z, 0)²``):
      ``J₂ = 3 sin θ cos θ + (π − θ)(1 + 2 cos² θ)``

    ``k_n(1) = 1`` and ``k₁(0) = 1/π``.
    """
    th = _angles(cos)
    if degree == 0:
        return 1.0 - th / math.pi
    if degree == 1:
        return (np.sin(th) + (math.pi - th) * np.cos(th)) / math.pi
    if degree == 2:
        c = np.cos(th)
        j2 = 3 * np.sin(th) * c + (math.pi - th) * (1 + 2 * c**2)
        return j2 / (3 * math.pi)
    raise ValueError(f"arccos_kernel: degree must be 0, 1 or 2: {degree!r}")


def random_layer(
    x, width: int, *, relu: bool = True, generator: Generator | None = None
) -> Tensor:
    """One random layer with He initialisation: ``φ(x W)``, ``x (n, d)``,
    ``W_ij ~ N(0, 2/d)``, ``φ`` = ReLU (or, with ``relu=False``, the
    identity); returns ``(n, width)`` float64."""
    h = torch.as_tensor(x, dtype=torch.float64)
    if h.ndim != 2:
        raise ValueError(
            f"random_layer needs x of shape (n, d), got {tuple(h.shape)}"
        )
    d = h.shape[1]
    w = gaussian(d, width, scale=math.sqrt(2.0 / d), generator=generator)
    z = h @ w
    return torch.relu(z) if relu else z
