"""Attention maps as objects. A map is an ``L × L`` row-stochastic matrix (row
``t``: how much output ``t`` reads from each input); a boolean mask says
which entries may be non-zero."""

from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor


def _square(a, name: str) -> Tensor:
    a = torch.as_tensor(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(
            f"{name}: needs square (..., L, L) maps, "
            f"got shape {tuple(a.shape)}"
        )
    return a


def window_mask(length: int, window: int, *, causal: bool = True) -> Tensor:
    """Boolean ``(L, L)`` mask of a local window of ``w`` positions
    (``True`` = may attend):

        causal:  t sees s ∈ [t − w + 1, t]      centred: |t − s| ≤ (w − 1)/2

    ``w = 1`` is the identity; a centred window must be odd.
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


def compose(maps: Sequence[Tensor]) -> Tensor:
    """The map of a stack, later layers on the left: ``A_n ⋯ A_2 A_1``,
    ``maps[0]`` the first layer (row-stochastic, like each map)."""
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


def reachable(masks: Sequence[Tensor]) -> Tensor:
    """Boolean ``(L, L)``: can input ``s`` influence output ``t``?

    R = [M_n ⋯ M_1 > 0]   (masks as 0/1 matrices, ``masks[0]`` the first layer)
    """
    as_numbers = [_square(m, "reachable").to(torch.float64) for m in masks]
    return compose(as_numbers) > 0


def receptive_field(masks: Sequence[Tensor]) -> Tensor:
    """How many inputs each output can see: row sums of ``reachable``."""
    return reachable(masks).sum(-1)


def mixing(p: Tensor) -> float | Tensor:
    """Dobrushin's coefficient ``δ(P) = ½ max_{i,j} Σ_k |P_ik − P_jk|``.

    The largest total-variation distance between two rows: 0 when every output
    reads the same mixture of inputs (fully mixed), 1 when two outputs read
    disjoint inputs (the identity). ``δ(PQ) ≤ δ(P) δ(Q)``. One ``(L, L)`` map
    gives a float, a batch ``(..., L, L)`` a float64 tensor ``(...)``.
    """
    p = _square(p, "mixing").to(torch.float64)
    rows = p.unsqueeze(-2) - p.unsqueeze(-3)  # (..., i, j, k): P_ik − P_jk
    delta = 0.5 * rows.abs().sum(-1).amax(dim=(-2, -1))
    return float(delta) if p.ndim == 2 else delta


def lazy(a: Tensor, lam: float) -> Tensor:
    """``M = λ I + (1 − λ) A``: at distance ``(1 − λ)‖A − I‖`` from ``I``."""
    a = _square(a, "lazy")
    if not 0 <= lam <= 1:
        raise ValueError(f"lazy: lambda must lie in [0, 1], got {lam}")
    return lam * torch.eye(a.shape[-1], dtype=a.dtype) + (1 - lam) * a


def layers_to_mix(
    a: Tensor, lam: float, eps: float = 0.05, max_layers: int = 100_000
) -> int:
    """Layers until mixed: the smallest ``n`` with ``δ(Mⁿ) < eps``,
    ``M = lazy(a, λ)``; ``ValueError`` if none up to ``max_layers``."""
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


def rank_one_residual(x: Tensor) -> Tensor:
    """Relative distance of ``X (..., L, d)`` from "all rows equal".

        res(X) = ‖X − 1 x̄ᵀ‖_F / ‖X‖_F,   x̄ = mean row of X

    0 means every position carries the same vector (the rank-1 collapse of
    Dong et al. 2021; ``1 x̄ᵀ`` is the nearest matrix of that form).
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
    from matplotlib.patches import Circle

    a = _square(a, "draw_graph").detach().cpu().numpy().astype(float)
    n = a.shape[0]
    if labels is not None and len(labels) != n:
        raise ValueError(
            f"draw_graph: {len(labels)} labels for a map of {n} positions"
        )
    shrink = 0.55 * node_size**0.5  # arcs stop at the nodes' edge
    above, below = 0.45, 0.3  # how far the drawing reaches up and down
    for t, s in zip(*np.nonzero(a > threshold), strict=True):
        w = a[t, s]
        weight = dict(alpha=0.35 + 0.65 * w, lw=0.8 + 3 * w)
        if s == t:
            ring = Circle(
                (t, 0.3), 0.17, fill=False, color="#D55E00", **weight
            )
            ax.add_patch(ring)
            continue
        if t > s:
            above = max(above, 0.2 * (t - s) + 0.15)
        else:
            below = max(below, 0.2 * (s - t) + 0.15)
        arrow = dict(arrowstyle="-|>", mutation_scale=14, color="#0072B2")
        arrow |= dict(connectionstyle="arc3,rad=-0.4", **weight)
        arrow |= dict(shrinkA=shrink, shrinkB=shrink)
        # drawn s → t: forward bends up, backward bends down
        ax.annotate("", (t, 0), (s, 0), arrowprops=arrow)
    node = dict(color="white", edgecolor="black")
    ax.scatter(range(n), [0] * n, s=node_size, zorder=3, **node)
    for i in range(n):
        text = str(i) if labels is None else str(labels[i])
        ax.text(i, 0, text, ha="center", va="center", fontsize=11, zorder=4)
    ax.set(xlim=(-0.6, n - 0.4), ylim=(-below, above), title=title)
    ax.set(xticks=[], yticks=[], aspect="equal")
    ax.grid(False)
    ax.spines[:].set_visible(False)
