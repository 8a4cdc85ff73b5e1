"""Watching a dictionary live: how far filters and values move in training.

``Snapshots`` is a ``train.fit`` callback that copies the filters ``W₁`` (one
row per hidden unit: what the input is matched against) and the values ``W₂ᵀ``
(one row per hidden unit: what it writes) of a ``Sequential(Linear, act,
Linear)`` every few epochs. ``drift`` measures the distance travelled,
``‖W(t) − W(0)‖_F / ‖W(0)‖_F``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from torch import nn


@dataclass
class Snapshots:
    """Copies of the filters ``W₁ (N, d)`` and the values ``W₂ᵀ (N, d_out)``
    after the epochs ``at``.

    Create it before training (it records epoch 0 from ``model``) and pass
    it to ``train.fit(..., callback=snapshots)``. Early epochs change the
    most, so a roughly geometric ``at`` (1, 2, 5, 10, 20, …) shows the motion
    evenly.
    """

    model: nn.Sequential
    at: Sequence[int] = (1, 2, 5, 10, 20, 50, 100, 200)
    epochs: list[int] = field(default_factory=list)
    filters: list[np.ndarray] = field(default_factory=list)
    values: list[np.ndarray] = field(default_factory=list)

    def __post_init__(self) -> None:
        parts = list(self.model)
        if len(parts) != 3 or not all(
            isinstance(parts[i], nn.Linear) for i in (0, 2)
        ):
            raise ValueError(
                f"Snapshots needs Sequential(Linear, act, Linear), got "
                f"{[type(p).__name__ for p in parts]}"
            )
        if len(self.at) == 0 or min(self.at) < 1:
            raise ValueError(
                f"Snapshots: at must list epochs >= 1, got {list(self.at)}"
            )
        self._take(0)

    def _take(self, epoch: int) -> None:
        self.epochs.append(epoch)
        self.filters.append(self.model[0].weight.detach().numpy().copy())
        self.values.append(self.model[2].weight.detach().numpy().T.copy())

    def __call__(self, epoch: int, model: nn.Module) -> None:
        if epoch + 1 in self.at:
            self._take(epoch + 1)


def drift(history: Sequence[np.ndarray]) -> np.ndarray:
    """Relative distance from the start, ``‖W(t) − W(0)‖_F / ‖W(0)‖_F``, for
    every snapshot ``t``."""
    if len(history) == 0:
        raise ValueError("drift needs at least one snapshot, got none")
    w0 = np.asarray(history[0], dtype=float)
    if any(np.shape(w) != w0.shape for w in history):
        raise ValueError(
            "drift: snapshots differ in shape "
            f"{[np.shape(w) for w in history]}"
        )
    n0 = np.linalg.norm(w0)
    if n0 == 0:
        raise ValueError(f"drift: the first snapshot {w0.shape} is all zeros")
    return np.array([np.linalg.norm(np.asarray(w) - w0) / n0 for w in history])
