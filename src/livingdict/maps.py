"""Attention maps as objects: masks, products of maps, reach, mixing, collapse.

An attention map ``A`` is an ``L × L`` row-stochastic matrix: row ``t`` says
how much output position ``t`` reads from each input position. Stacked layers
multiply maps, later layers on the left: ``A_total = A_L ⋯ A_2 A_1``
(``compose``). A boolean mask says which entries may be non-zero; the product
of masks (``reachable``) says which inputs can influence which outputs after
several layers (``receptive_field``).

All functions take torch tensors (NumPy arrays are converted) and validate that
maps are square; bad input raises ``ValueError`` naming what it got.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

__all__ = [
    "window_mask",
    "compose",
    "reachable",
    "receptive_field",
    "mixing",
    "lazy",
    "layers_to_mix",
    "rank_one_residual",
    "draw_graph",
]


def _square(a, name: str) -> torch.Tensor:
    a = torch.as_tensor(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(
            f"{name}: needs square (..., L, L) maps, "
            f"got shape {tuple(a.shape)}"
        )
    return a


def window_mask(
    length: int, window: int, *, causal: bool = True
) -> torch.Tensor:
    """Boolean ``(L, L)`` mask of a local window of ``w`` positions.

    ``True`` = may attend. Causal: position ``t`` sees ``s ∈ [t − w + 1, t]``.
    Centred (``causal=False``, odd ``w``): ``|t − s| ≤ (w − 1)/2``. ``w = 1``
    is the identity. Raises ``ValueError`` for ``length < 1``, ``w < 1``, or an
    even centred window.
    """
    if length < 1 or window < 1:
        raise ValueError(
            "window_mask: need length >= 1 and window >= 1, "
            f"got {length}, {window}"
        )
    if not causal and window % 2 == 0:
        raise ValueError(
            f"window_mask: a centred window must be odd, got window={window}"
        )
    d = torch.arange(length)[:, None] - torch.arange(length)[None, :]  # t − s
    if causal:
        return (d >= 0) & (d < window)
    return d.abs() <= (window - 1) // 2


def compose(maps: Sequence[torch.Tensor]) -> torch.Tensor:
    """The map of a stack: ``A_n ⋯ A_2 A_1``, ``maps[0]`` the first layer.

    A product of row-stochastic maps is row-stochastic. Raises ``ValueError``
    for an empty list, a non-square map or maps of different lengths.
    """
    if len(maps) == 0:
        raise ValueError("compose: needs at least one map, got none")
    ms = [_square(m, "compose") for m in maps]
    if len({m.shape[-1] for m in ms}) > 1:
        raise ValueError(
            "compose: maps of different lengths "
            f"{[tuple(m.shape) for m in ms]}"
        )
    out = ms[0]
    for m in ms[1:]:
        out = m @ out
    return out


def reachable(masks: Sequence[torch.Tensor]) -> torch.Tensor:
    """Boolean ``(L, L)``: can input ``s`` influence output ``t``?

    R = [M_n ⋯ M_1 > 0]   (masks as 0/1 matrices, ``masks[0]`` the first layer)
    """
    return (
        compose([_square(m, "reachable").to(torch.float64) for m in masks]) > 0
    )


def receptive_field(masks: Sequence[torch.Tensor]) -> torch.Tensor:
    """How many inputs each output can see: row sums of ``reachable``."""
    return reachable(masks).sum(-1)


def mixing(p: torch.Tensor) -> float | torch.Tensor:
    """Dobrushin's coefficient ``δ(P) = ½ max_{i,j} Σ_k |P_ik − P_jk|``.

    The largest total-variation distance between two rows: 0 when every output
    reads the same mixture of inputs (fully mixed), 1 when two outputs read
    disjoint inputs (the identity). ``δ(PQ) ≤ δ(P) δ(Q)``. One ``(L, L)`` map
    gives a float; a batch ``(..., L, L)`` gives a float64 tensor of shape
    ``(...)``, one δ per map.
    """
    p = _square(p, "mixing").to(torch.float64)
    rows = p.unsqueeze(-2) - p.unsqueeze(-3)  # (..., i, j, k): P_ik − P_jk
    delta = 0.5 * rows.abs().sum(-1).amax(dim=(-2, -1))
    return float(delta) if p.ndim == 2 else delta


def lazy(a: torch.Tensor, lam: float) -> torch.Tensor:
    """``M = λ I + (1 − λ) A``: at distance ``(1 − λ)‖A − I‖`` from ``I``."""
    a = _square(a, "lazy")
    if not 0 <= lam <= 1:
        raise ValueError(f"lazy: lambda must lie in [0, 1], got {lam}")
    return lam * torch.eye(a.shape[-1], dtype=a.dtype) + (1 - lam) * a


def layers_to_mix(
    a: torch.Tensor, lam: float, eps: float = 0.05, max_layers: int = 100_000
) -> int:
    """Layers until mixed: the smallest ``n`` with ``δ(Mⁿ) < eps``.

    ``M = lazy(a, λ)``. Raises ``ValueError`` if the stack is not mixed after
    ``max_layers`` layers.
    """
    m = lazy(_square(a, "layers_to_mix").to(torch.float64), lam)
    p = m.clone()
    for n in range(1, max_layers + 1):
        if mixing(p) < eps:
            return n
        p = m @ p
    raise ValueError(
        f"layers_to_mix: not mixed to {eps} after {max_layers} layers "
        f"(lambda={lam})"
    )


def rank_one_residual(x: torch.Tensor) -> torch.Tensor:
    """Relative distance of ``X (..., L, d)`` from "all rows equal".

        res(X) = ‖X − 1 x̄ᵀ‖_F / ‖X‖_F,   x̄ = mean row of X

    (``1 x̄ᵀ`` is the best approximation of the form ``1 xᵀ``, the rank-1
    collapse of Dong et al. 2021.) 0 means every position carries the same
    vector.
    """
    x = torch.as_tensor(x)
    if x.ndim < 2:
        raise ValueError(
            f"rank_one_residual: needs (..., L, d), got shape {tuple(x.shape)}"
        )
    centred = x - x.mean(-2, keepdim=True)
    return torch.linalg.matrix_norm(centred) / torch.linalg.matrix_norm(x)


def draw_graph(
    ax,
    a,
    *,
    threshold: float = 0.05,
    title: str = "",
    labels: Sequence[str] | None = None,
    node_size: float = 420,
) -> None:
    """Draw map ``A`` as a directed graph on positions set out on a line.

    Position ``t`` is a node at ``x = t``. An arc ``s → t`` ("t reads from
    s") is drawn for each ``A[t, s] > threshold``, wider and darker for a
    heavier weight: forward arcs (``s < t``) bend above the line, backward arcs
    below, and a ring above a node is a self-loop. ``labels`` (one per
    position) replace the position numbers in the nodes; ``node_size`` is
    the nodes' area in points² (smaller for long sequences).
    """
    a = _square(a, "draw_graph").detach().cpu().numpy().astype(float)
    n = a.shape[0]
    if labels is not None and len(labels) != n:
        raise ValueError(
            f"draw_graph: {len(labels)} labels for a map of {n} positions"
        )
    above, below = 0.45, 0.3  # how far the drawing reaches up and down
    for t, s in zip(*np.nonzero(a > threshold), strict=True):
        w = a[t, s]
        if s == t:
            ax.add_patch(_ring(t, w))
            continue
        if t > s:
            above = max(above, 0.2 * (t - s) + 0.15)
        else:
            below = max(below, 0.2 * (s - t) + 0.15)
        ax.annotate(  # drawn s → t: forward bends up, backward bends down
            "",
            (t, 0),
            (s, 0),
            arrowprops=dict(
                arrowstyle="-|>",
                mutation_scale=14,
                color="#0072B2",
                alpha=0.35 + 0.65 * w,
                lw=0.8 + 3 * w,
                connectionstyle="arc3,rad=-0.4",
                shrinkA=0.55 * node_size**0.5,
                shrinkB=0.55 * node_size**0.5,
            ),
        )
    ax.scatter(
        range(n),
        [0] * n,
        s=node_size,
        color="white",
        edgecolor="black",
        zorder=3,
    )
    for i in range(n):
        text = str(i) if labels is None else str(labels[i])
        ax.text(i, 0, text, ha="center", va="center", fontsize=11, zorder=4)
    ax.set(xlim=(-0.6, n - 0.4), ylim=(-below, above), title=title)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_aspect("equal")
    ax.grid(False)
    for side in ("left", "bottom", "top", "right"):
        ax.spines[side].set_visible(False)


def _ring(t: int, w: float):
    from matplotlib.patches import Circle

    return Circle(
        (t, 0.3),
        0.17,
        fill=False,
        color="#D55E00",
        lw=0.8 + 3 * w,
        alpha=0.35 + 0.65 * w,
    )
