"""What random ReLU layers do to similarity: the arc-cosine kernel, iterated.

For a Gaussian weight vector ``w ~ N(0, I)`` the pre-activations
``(⟨x, w⟩, ⟨y, w⟩)`` of two inputs at angle θ are jointly Gaussian with
correlation ``cos θ``; averaging over ``w`` gives (Cho & Saul 2009)

    E[relu⟨x, w⟩ · relu⟨y, w⟩] = ‖x‖ ‖y‖ (sin θ + (π − θ) cos θ) / 2π,

so the features ``relu(x W)`` of a wide random layer have cosine
``k₁(cos θ) = (sin θ + (π − θ) cos θ) / π``. A deep random network applies
the map ``c ↦ k₁(c)`` once per layer (Cho & Saul 2009; Poole et al. 2016):
its only fixed point is ``c = 1``.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from .metrics import pairwise_cosine
from .projections import gaussian


def _angles(cos) -> np.ndarray:
    c = np.asarray(cos, dtype=float)
    if np.isnan(c).any() or (np.abs(c) > 1 + 1e-9).any():
        bad = c[np.isnan(c) | (np.abs(c) > 1 + 1e-9)]
        raise ValueError(
            "arc-cosine kernel: cosines must lie in [-1, 1]; "
            f"{c.shape} holds {bad[:3].tolist()}"
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

    ``k_n(1) = 1`` and ``k₁(0) = 1/π``. Raises ``ValueError`` for cosines
    outside [-1, 1] or another degree.
    """
    th = _angles(cos)
    if degree == 0:
        return 1.0 - th / math.pi
    if degree == 1:
        return (np.sin(th) + (math.pi - th) * np.cos(th)) / math.pi
    if degree == 2:
        c = np.cos(th)
        return (3 * np.sin(th) * c + (math.pi - th) * (1 + 2 * c**2)) / (
            3 * math.pi
        )
    raise ValueError(
        f"arccos_kernel: degree must be 0, 1 or 2, got {degree!r}"
    )


def iterate_kernel(cos0, depth: int, degree: int = 1) -> np.ndarray:
    """The iterated kernel map ``c_{l+1} = k_n(c_l)``, ``c_0 = cos0``, for
    ``l < depth``.

    Returns an array of shape ``(depth + 1, *cos0.shape)`` whose row ``l`` is
    the cosine of two inputs after ``l`` wide random layers.
    """
    if depth < 0 or int(depth) != depth:
        raise ValueError(
            f"iterate_kernel: depth must be an integer >= 0, got {depth!r}"
        )
    if degree not in (0, 1, 2):
        raise ValueError(
            f"iterate_kernel: degree must be 0, 1 or 2, got {degree!r}"
        )
    c = np.asarray(cos0, dtype=float)
    _angles(c)  # validates cos0
    out = [c]
    for _ in range(depth):
        out.append(arccos_kernel(out[-1], degree))
    return np.stack(out)


def random_layer(
    x,
    width: int,
    *,
    relu: bool = True,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """One random layer with He initialisation: ``φ(x W)``,
    ``W_ij ~ N(0, 2/d)`` (``d`` = number of columns of ``x``), ``φ`` = ReLU
    or, with ``relu=False``, the identity. ``x`` is ``(n, d)``; returns
    ``(n, width)`` float64."""
    h = torch.as_tensor(x, dtype=torch.float64)
    if h.ndim != 2:
        raise ValueError(
            f"random_layer needs x of shape (n, d), got {tuple(h.shape)}"
        )
    w = gaussian(
        h.shape[1],
        width,
        scale=math.sqrt(2.0 / h.shape[1]),
        generator=generator,
    )
    z = h @ w
    return torch.relu(z) if relu else z


def layer_cosines(
    x,
    depth: int,
    width: int,
    *,
    relu: bool = True,
    generator: torch.Generator | None = None,
) -> np.ndarray:
    """Pairwise cosines of ``n`` inputs after each layer of a deep random
    network.

    ``h₀ = x``, ``h_l = φ(h_{l−1} W_l)`` with fresh He-initialised ``W_l`` of
    width ``width`` (see ``random_layer``). Returns ``(depth + 1, n, n)``:
    entry ``[l]`` is ``pairwise_cosine(h_l)``. Raises ``ValueError`` for a bad
    shape or depth, or when a representation becomes all zero (its cosine is
    undefined).
    """
    if depth < 0 or int(depth) != depth:
        raise ValueError(
            f"layer_cosines: depth must be an integer >= 0, got {depth!r}"
        )
    h = torch.as_tensor(x, dtype=torch.float64)
    if h.ndim != 2:
        raise ValueError(
            f"layer_cosines needs x of shape (n, d), got {tuple(h.shape)}"
        )
    out = [pairwise_cosine(h)]
    for _ in range(depth):
        h = random_layer(h, width, relu=relu, generator=generator)
        out.append(pairwise_cosine(h))
    return np.stack(out)
