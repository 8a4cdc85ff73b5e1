"""Random matrices, and what a random ReLU layer does to an angle: the
arc-cosine kernel (chapter 1). Matrices are ``(d_in, d_out)``, acting
as ``y = x @ W`` (column ``j``: the filter behind output ``j``), float64 (the
lessons compare cosines to 1e-9); random ones come from torch's generator.
"""

import math

import numpy as np
import torch
from torch import Generator, Tensor

_F64 = torch.float64


def _positive(**sizes: int) -> None:
    for name, v in sizes.items():
        if int(v) != v or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")


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


def _angles(cos) -> np.ndarray:
    c = np.asarray(cos, dtype=float)
    if np.isnan(c).any() or (np.abs(c) > 1 + 1e-9).any():
        bad = c[np.isnan(c) | (np.abs(c) > 1 + 1e-9)]
        raise ValueError(
            f"cosines must lie in [-1, 1]; {c.shape} holds {bad[:3].tolist()}"
        )
    return np.arccos(np.clip(c, -1.0, 1.0))


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
