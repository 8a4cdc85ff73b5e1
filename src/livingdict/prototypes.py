"""A hard dictionary learned from data: N prototypes, one-hot keys.

``kmeans`` places N prototypes with Lloyd's algorithm (assign every point to
its nearest centre, move every centre to the mean of its points, repeat);
``fit_prototypes`` gives each prototype the majority label of its cluster
(the *value*); ``predict`` reads the dictionary with a hard key, the one-hot
vector of the nearest prototype:

    key(x) = onehot(argminᵢ ‖x − pᵢ‖²),   ŷ(x) = argmax lookup(key(x), values)

With ``per_class=True`` each class gets N / n_classes prototypes of its own (a
stronger, supervised hard dictionary).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .lookup import hard_keys, lookup


@dataclass(frozen=True)
class Prototypes:
    """``centers (N, d)`` and their labels ``(N,)``: N slots."""

    centers: torch.Tensor
    labels: torch.Tensor

    @property
    def values(self) -> torch.Tensor:
        """One-hot label rows ``(N, n_classes)``: what each slot returns."""
        n_classes = int(self.labels.max()) + 1
        return hard_keys(self.labels, n_classes)


def kmeans(
    x: torch.Tensor,
    n: int,
    *,
    restarts: int = 3,
    iters: int = 100,
    seed: int = 0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` centres for the rows of ``x (m, d)`` and each row's cluster.

    Lloyd's algorithm from ``restarts`` random starts (``n`` distinct rows of
    ``x``, drawn with a generator seeded by ``seed``); keeps the run with the
    smallest sum of squared distances. A centre that loses all its points stays
    where it was. Returns ``(centers (n, d), assignment (m,))``.
    """
    x = torch.as_tensor(x, dtype=torch.float32)
    gen = torch.Generator().manual_seed(seed)
    best = None
    for _ in range(restarts):
        centers = x[torch.randperm(len(x), generator=gen)[:n]].clone()
        for _ in range(iters):
            assign = torch.cdist(x, centers).argmin(1)
            sums = torch.zeros_like(centers).index_add_(0, assign, x)
            counts = torch.bincount(assign, minlength=n)[:, None]
            moved = torch.where(
                counts > 0, sums / counts.clamp(min=1), centers
            )
            if torch.equal(moved, centers):
                break
            centers = moved
        assign = torch.cdist(x, centers).argmin(1)
        inertia = ((x - centers[assign]) ** 2).sum().item()
        if best is None or inertia < best[0]:
            best = (inertia, centers, assign)
    return best[1], best[2]


def fit_prototypes(
    x: torch.Tensor,
    y: torch.Tensor,
    n: int,
    *,
    per_class: bool = False,
    seed: int = 0,
) -> Prototypes:
    """k-means with ``n`` centres on ``x (m, d)``; label each by majority vote.

    ``per_class=True`` runs k-means inside each class with ``n // n_classes``
    centres. Raises ``ValueError`` for mismatched shapes, more prototypes than
    points, or (per class) ``n`` not a multiple of the number of classes.
    """
    x = torch.as_tensor(x, dtype=torch.float32)
    y = torch.as_tensor(y).long()
    if x.ndim != 2 or tuple(y.shape) != (x.shape[0],):
        raise ValueError(
            "fit_prototypes needs x (m, d) and y (m,), got "
            f"{tuple(x.shape)} and {tuple(y.shape)}"
        )
    if not 1 <= n <= x.shape[0]:
        raise ValueError(
            f"fit_prototypes: n={n} prototypes for {x.shape[0]} points"
        )
    classes = torch.unique(y)
    if per_class:
        if n % len(classes):
            raise ValueError(
                f"fit_prototypes: n={n} is not a multiple of "
                f"{len(classes)} classes"
            )
        k = n // len(classes)
        centers = torch.cat(
            [kmeans(x[y == c], k, seed=seed)[0] for c in classes]
        )
        labels = classes.repeat_interleave(k)
    else:
        centers, assign = kmeans(x, n, seed=seed)
        counts = hard_keys(assign, n).T @ hard_keys(y, int(y.max()) + 1)
        labels = counts.argmax(1)
    return Prototypes(centers, labels)


def nearest_keys(protos: Prototypes, x: torch.Tensor) -> torch.Tensor:
    """Hard keys ``(m, N)``: one-hot, the nearest prototype of each row."""
    if x.ndim != 2 or x.shape[1] != protos.centers.shape[1]:
        raise ValueError(
            f"nearest_keys: x {tuple(x.shape)} does not fit prototypes "
            f"{tuple(protos.centers.shape)}"
        )
    nearest = torch.cdist(x.float(), protos.centers).argmin(dim=1)
    return hard_keys(nearest, protos.centers.shape[0])


def predict(protos: Prototypes, x: torch.Tensor) -> torch.Tensor:
    """Class of each row: ``argmax lookup(nearest_keys(x), values)``."""
    return lookup(nearest_keys(protos, x), protos.values).argmax(dim=1)
