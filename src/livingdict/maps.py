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

    Position ``t`` is a circle of radius ``r = 0.3·√(node_size / 420)`` (in
    data units, one unit between neighbours) at ``x = t``. An arc ``s → t``
    ("t reads from s") is drawn for each ``A[t, s] > threshold``, wider and
    darker for a heavier weight. It leaves ``s`` and enters ``t`` on the
    circles' rims, ``60°`` from the line: forward arcs (``s < t``) above the
    line, backward arcs below, so no arrow head lands inside a node, even
    between neighbours. A ring above a node is a self-loop. ``labels`` (one
    per position) replace the position numbers in the nodes, in a smaller
    font when they are longer; ``node_size`` scales the nodes.
    """
    from matplotlib.patches import Circle

    a = _square(a, "draw_graph").detach().cpu().numpy().astype(float)
    n = a.shape[0]
    if labels is not None and len(labels) != n:
        raise ValueError(
            f"draw_graph: {len(labels)} labels for a map of {n} positions"
        )
    r = 0.3 * (node_size / 420) ** 0.5  # node radius, data units
    dx, dy = 0.5 * r, 0.75**0.5 * r  # the rim point 60° from the line
    rad = 0.5  # how far an arc bows: its peak is rad / 2 of its chord
    above, below = r + 0.15, r + 0.15  # how far the drawing reaches
    for t, s in zip(*np.nonzero(a > threshold), strict=True):
        w = a[t, s]
        weight = dict(alpha=0.35 + 0.65 * w, lw=0.8 + 2.5 * w)
        if s == t:
            ring = Circle(
                (t, r + 0.15), 0.15, fill=False, color="#D55E00", **weight
            )
            ax.add_patch(ring)
            above = max(above, r + 0.45)
            continue
        side = 1 if t > s else -1  # forward above the line, backward below
        step = dx if t > s else -dx
        start, end = (s + step, side * dy), (t - step, side * dy)
        peak = dy + 0.5 * rad * (abs(t - s) - 2 * dx) + 0.15
        if t > s:
            above = max(above, peak)
        else:
            below = max(below, peak)
        arrow = dict(arrowstyle="-|>", mutation_scale=10, color="#0072B2")
        arrow |= dict(connectionstyle=f"arc3,rad={-rad}", **weight)
        arrow |= dict(shrinkA=0, shrinkB=1)
        # drawn s → t: forward bends up, backward bends down
        ax.annotate("", end, start, arrowprops=arrow)
    for i in range(n):
        node = Circle((i, 0), r, facecolor="white", edgecolor="black")
        ax.add_patch(node)
        text = str(i) if labels is None else str(labels[i])
        size = 11 if len(text) < 2 else 8
        ax.text(i, 0, text, ha="center", va="center", fontsize=size)
    ax.set(xlim=(-0.6, n - 0.4), ylim=(-below, above), title=title)
    ax.set(xticks=[], yticks=[], aspect="equal")
    ax.grid(False)
    ax.spines[:].set_visible(False)
