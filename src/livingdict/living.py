"""Watching a dictionary live: how far keys and values move while a network trains.

``Snapshots`` is a ``train.fit`` callback that copies the key weights ``W₁`` (one row
per hidden unit: what the unit responds to) and the values ``W₂ᵀ`` (one row per hidden
unit: what it writes) of a ``Sequential(Linear, act, Linear)`` every few epochs.
``drift`` measures the distance travelled, ``‖W(t) − W(0)‖_F / ‖W(0)‖_F``, and
``animate`` turns the snapshots into a matplotlib animation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.animation import FuncAnimation
from matplotlib.layout_engine import PlaceHolderLayoutEngine
from torch import nn

from .plot import DIVERGING, PALETTE


@dataclass
class Snapshots:
    """Copies of ``W₁`` (``(N, d)``) and ``W₂ᵀ`` (``(N, d_out)``) after the epochs ``at``.

    Create it before training (it records epoch 0 from ``model``) and pass it to
    ``train.fit(..., callback=snapshots)``. Early epochs change the most, so a
    roughly geometric ``at`` (1, 2, 5, 10, 20, …) shows the motion evenly.
    """

    model: nn.Sequential
    at: Sequence[int] = (1, 2, 5, 10, 20, 50, 100, 200)
    epochs: list[int] = field(default_factory=list)
    keys: list[np.ndarray] = field(default_factory=list)
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
        self.keys.append(self.model[0].weight.detach().numpy().copy())
        self.values.append(self.model[2].weight.detach().numpy().T.copy())

    def __call__(self, epoch: int, model: nn.Module) -> None:
        if epoch + 1 in self.at:
            self._take(epoch + 1)


def drift(history: Sequence[np.ndarray]) -> np.ndarray:
    """Relative distance from the start: ``‖W(t) − W(0)‖_F / ‖W(0)‖_F`` for every ``t``."""
    if len(history) == 0:
        raise ValueError("drift needs at least one snapshot, got none")
    w0 = np.asarray(history[0], dtype=float)
    if any(np.shape(w) != w0.shape for w in history):
        raise ValueError(
            f"drift: snapshots differ in shape {[np.shape(w) for w in history]}"
        )
    n0 = np.linalg.norm(w0)
    if n0 == 0:
        raise ValueError(f"drift: the first snapshot {w0.shape} is all zeros")
    return np.array([np.linalg.norm(np.asarray(w) - w0) / n0 for w in history])


def animate(
    snaps: Snapshots, shape: tuple[int, int], n_units: int = 8, fps: int = 4
) -> FuncAnimation:
    """Animation: the key weights of the first ``n_units`` units drawn as images of
    ``shape``, the value table ``W₂ᵀ`` and the drift of keys and values so far.
    Colour scales are symmetric per frame (the distance panel shows the growth)."""
    n = min(n_units, snaps.keys[0].shape[0])
    if int(np.prod(shape)) != snaps.keys[0].shape[1]:
        raise ValueError(
            f"animate: keys {snaps.keys[0].shape} do not reshape to {shape}"
        )
    # A fixed layout renders each frame ~2x faster than constrained layout. (layout="none"
    # is not enough: savefig resets it to the rc default after the first frame.)
    fig = plt.figure(
        figsize=(8.4, 3.1), dpi=84, layout=PlaceHolderLayoutEngine(True, True)
    )
    cols = n // 2
    grid = fig.add_gridspec(
        2,
        cols + 4,
        width_ratios=[1] * cols + [0.45, 1.4, 0.55, 2.8],
        wspace=0.15,
        hspace=0.25,
        left=0.01,
        right=0.98,
        bottom=0.16,
        top=0.8,
    )
    key_axes = [fig.add_subplot(grid[i // cols, i % cols]) for i in range(n)]
    val_ax = fig.add_subplot(grid[:, cols + 1])
    drift_ax = fig.add_subplot(grid[:, cols + 3])
    imgs = [ax.imshow(np.zeros(shape), cmap=DIVERGING) for ax in key_axes]
    for i, ax in enumerate(key_axes):
        ax.set_axis_off()
        ax.set_title(f"unit {i}: key", fontsize=8)
    vimg = val_ax.imshow(snaps.values[0][:n], cmap=DIVERGING, aspect="auto")
    val_ax.set(xlabel="class", ylabel="unit", title="values W₂ᵀ")
    val_ax.grid(False)
    dk, dv = drift(snaps.keys), drift(snaps.values)
    drift_ax.set(
        xlim=(0, snaps.epochs[-1]), ylim=(0, 1.05 * max(dk.max(), dv.max()))
    )
    drift_ax.set(
        xlabel="epoch",
        ylabel="relative distance",
        title="distance from the start",
    )
    (lk,) = drift_ax.plot(
        [], [], "o-", ms=3, color=PALETTE[0], label="keys W₁"
    )
    (lv,) = drift_ax.plot(
        [], [], "s-", ms=3, color=PALETTE[1], label="values W₂ᵀ"
    )
    drift_ax.legend(loc="upper left")

    def update(t: int) -> list:
        lim = np.quantile(
            np.abs(snaps.keys[t][:n]), 0.98
        )  # a few edge pixels dominate max
        for i, im in enumerate(imgs):
            im.set_data(snaps.keys[t][i].reshape(shape))
            im.set_clim(-lim, lim)
        vlim = np.abs(snaps.values[t][:n]).max()
        vimg.set_data(snaps.values[t][:n])
        vimg.set_clim(-vlim, vlim)
        lk.set_data(snaps.epochs[: t + 1], dk[: t + 1])
        lv.set_data(snaps.epochs[: t + 1], dv[: t + 1])
        fig.suptitle(
            f"The dictionary after {snaps.epochs[t]} epochs of training",
            fontsize=10,
        )
        return [*imgs, vimg, lk, lv]

    anim = FuncAnimation(
        fig, update, frames=len(snaps.epochs), interval=1000 // fps
    )
    plt.close(fig)
    return anim
