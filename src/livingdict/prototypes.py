"""A hard dictionary learned from data: N prototypes, one-hot keys.

``fit_prototypes`` places N prototypes with k-means and gives each the majority label
of its cluster (the *value*); ``predict`` reads the dictionary with a hard key, the
one-hot vector of the nearest prototype:

    key(x) = onehot(argminᵢ ‖x − pᵢ‖²),   ŷ(x) = lookup(key(x), values)

With ``per_class=True`` each class gets N / n_classes prototypes of its own (a
stronger, supervised hard dictionary).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .lookup import hard_keys, lookup


@dataclass(frozen=True)
class Prototypes:
    """``centers (N, d)`` and their labels ``(N,)`` — a dictionary with N slots."""

    centers: torch.Tensor
    labels: torch.Tensor

    @property
    def values(self) -> torch.Tensor:
        """One-hot label rows ``(N, n_classes)``: what each slot returns."""
        n_classes = int(self.labels.max()) + 1
        return hard_keys(self.labels, n_classes)


def fit_prototypes(
    x: torch.Tensor,
    y: torch.Tensor,
    n: int,
    *,
    per_class: bool = False,
    seed: int = 0,
) -> Prototypes:
    """k-means with ``n`` centres on ``x`` (``(m, d)``); label each by majority vote.

    ``per_class=True`` runs k-means inside each class with ``n // n_classes`` centres.
    Raises ``ValueError`` for mismatched shapes or more prototypes than points.
    """
    from sklearn.cluster import KMeans

    xa, ya = np.asarray(x, dtype=float), np.asarray(y).astype(int)
    if xa.ndim != 2 or ya.shape != (xa.shape[0],):
        raise ValueError(
            f"fit_prototypes needs x (m, d) and y (m,), got {xa.shape} and {ya.shape}"
        )
    if not 1 <= n <= xa.shape[0]:
        raise ValueError(
            f"fit_prototypes: n={n} prototypes for {xa.shape[0]} points"
        )
    classes = np.unique(ya)
    if per_class:
        if n % len(classes):
            raise ValueError(
                f"fit_prototypes: n={n} is not a multiple of {len(classes)} classes"
            )
        parts = [
            KMeans(n // len(classes), n_init=3, random_state=seed)
            .fit(xa[ya == c])
            .cluster_centers_
            for c in classes
        ]
        centers = np.concatenate(parts)
        labels = np.repeat(classes, n // len(classes))
    else:
        km = KMeans(n, n_init=3, random_state=seed).fit(xa)
        centers = km.cluster_centers_
        labels = np.array(
            [
                np.bincount(
                    ya[km.labels_ == c], minlength=classes.max() + 1
                ).argmax()
                for c in range(n)
            ]
        )
    return Prototypes(
        torch.as_tensor(centers, dtype=torch.float32), torch.as_tensor(labels)
    )


def nearest_keys(protos: Prototypes, x: torch.Tensor) -> torch.Tensor:
    """Hard keys ``(m, N)``: the one-hot vector of each row's nearest prototype."""
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
