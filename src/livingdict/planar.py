"""Classification in the plane: a task no line can solve, and a classifier's
map.

* ``checkerboard`` — points in ``[−c/2, c/2]²`` coloured like a ``c × c``
board:
  ``y = (⌊x₁ + c/2⌋ + ⌊x₂ + c/2⌋) mod 2``. For ``c = 3`` no line does better
  than the majority class, and no conic separates it either (it needs a
  degree-4 boundary).
* ``grid_scores`` — a classifier's score on a regular grid, for
decision-boundary maps.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch


def checkerboard(
    n: int = 600, cells: int = 3, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` uniform points on ``[−c/2, c/2]²`` (``c = cells``) with the
    board's colour
    ``(⌊x₁ + c/2⌋ + ⌊x₂ + c/2⌋) mod 2`` as label: ``x (n, 2)`` float32, ``y
    (n,)`` int64."""
    if n < 1 or cells < 2:
        raise ValueError(
            f"checkerboard needs n >= 1 and cells >= 2, got n={n}, "
            f"cells={cells}"
        )
    half = cells / 2
    x = np.random.default_rng(seed).uniform(-half, half, size=(n, 2))
    cell = np.clip(np.floor(x + half), 0, cells - 1).astype(np.int64)
    y = (cell[:, 0] + cell[:, 1]) % 2
    return torch.as_tensor(x, dtype=torch.float32), torch.as_tensor(y)


def grid_scores(
    predict: Callable[[torch.Tensor], torch.Tensor],
    lim: float = 2.0,
    steps: int = 101,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Evaluate a 2-D classifier on the square ``[−lim, lim]²``: returns ``(xx,
    yy, z)`` with ``xx, yy`` of shape ``(steps, steps)`` and ``z =
    predict(points)`` reshaped to
    ``(steps, steps, ...)`` (one score, or one score per ensemble member, per
    point)."""
    if lim <= 0 or steps < 2:
        raise ValueError(
            f"grid_scores needs lim > 0 and steps >= 2, got {lim}, {steps}"
        )
    axis = torch.linspace(-lim, lim, steps)
    xx, yy = torch.meshgrid(axis, axis, indexing="xy")
    with torch.no_grad():
        z = predict(torch.stack([xx.ravel(), yy.ravel()], 1))
    if z.ndim < 1 or z.shape[0] != steps * steps:
        raise ValueError(
            f"grid_scores: predict returned {tuple(z.shape)}, "
            f"want ({steps**2}, ...)"
        )
    return xx, yy, z.reshape(steps, steps, *z.shape[1:])
