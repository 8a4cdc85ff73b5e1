"""Attention maps as objects. A map is an ``L × L`` row-stochastic matrix (row
``t``: how much output ``t`` reads from each input): the map of a stack is
the product of its layers' maps, and a map can be drawn as a graph."""

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
