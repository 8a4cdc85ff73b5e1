"""Offline data only: nothing here touches the network.

* ``digits`` — scikit-learn's bundled 8×8 handwritten digits (1,797 images), pixels in [0, 1].
* ``mnist1d`` — MNIST-1D (Greydanus 2020) generated locally by ``mnist1d.data.make_dataset``
  (never its download): 5,000 signals of length 40, 10 classes.
* ``xor`` — the four-blob XOR problem in the plane.

Every generator takes a ``seed``; ``None`` means the seed of the last ``setup()``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch


@dataclass(frozen=True)
class Split:
    """A train/test split: float32 inputs ``(n, d)``, int64 labels ``(n,)``."""

    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor

    @property
    def n_classes(self) -> int:
        return int(max(self.y_train.max(), self.y_test.max())) + 1


def _seed(seed: int | None) -> int:
    if seed is not None:
        return seed
    from . import current_seed

    s = current_seed()
    return 0 if s is None else s


def _split(
    x: np.ndarray, y: np.ndarray, test_fraction: float, seed: int
) -> Split:
    if not 0 < test_fraction < 1:
        raise ValueError(
            f"test_fraction must lie in (0, 1), got {test_fraction}"
        )
    perm = np.random.default_rng(seed).permutation(len(y))
    n_test = int(round(test_fraction * len(y)))
    te, tr = perm[:n_test], perm[n_test:]
    f = lambda a: torch.as_tensor(a, dtype=torch.float32)  # noqa: E731
    g = lambda a: torch.as_tensor(a, dtype=torch.int64)  # noqa: E731
    return Split(f(x[tr]), g(y[tr]), f(x[te]), g(y[te]))


def digits(test_fraction: float = 0.25, seed: int | None = None) -> Split:
    """scikit-learn's bundled digits, pixels scaled from 0..16 to [0, 1], shuffled split."""
    from sklearn.datasets import load_digits

    d = load_digits()
    return _split(d.data / 16.0, d.target, test_fraction, _seed(seed))


def mnist1d(num_samples: int = 5000, seed: int | None = None) -> Split:
    """MNIST-1D generated locally (``make_dataset``, no download), 80/20 split.

    With ``seed=42`` (the package default) and 5,000 samples this is the published
    data set; other seeds draw fresh signals from the same generator.
    """
    from mnist1d.data import get_dataset_args, make_dataset

    if num_samples < 10:
        raise ValueError(
            f"mnist1d needs at least 10 samples (one per class), got {num_samples}"
        )
    args = get_dataset_args()
    args.num_samples = num_samples
    args.seed = _seed(seed)
    state = np.random.get_state()  # make_dataset reseeds the global generator
    try:
        d = make_dataset(args)
    finally:
        np.random.set_state(state)
    f = lambda a: torch.as_tensor(a, dtype=torch.float32)  # noqa: E731
    g = lambda a: torch.as_tensor(a, dtype=torch.int64)  # noqa: E731
    return Split(f(d["x"]), g(d["y"]), f(d["x_test"]), g(d["y_test"]))


def xor(
    n: int = 400, noise: float = 0.15, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` points around the corners (±1, ±1); the label is 1 when the signs differ.

    Returns ``x (n, 2)`` float32 and ``y (n,)`` int64. No line separates the classes.
    """
    if n < 4 or noise < 0:
        raise ValueError(
            f"xor needs n >= 4 and noise >= 0, got n={n}, noise={noise}"
        )
    rng = np.random.default_rng(_seed(seed))
    corners = rng.integers(0, 2, size=(n, 2)) * 2 - 1
    x = corners + noise * rng.standard_normal((n, 2))
    y = (corners[:, 0] != corners[:, 1]).astype(np.int64)
    return torch.as_tensor(x, dtype=torch.float32), torch.as_tensor(y)
