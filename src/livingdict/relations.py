"""A relational task: are these two inputs of the same class?

``same_class_pairs`` draws pairs ``(a, b)`` from a labelled set, half of them
from one class and half from two different classes, and returns the
concatenation ``[a, b]`` with the label ``1[class(a) = class(b)]``. A linear
score ``w_a·a + w_b·b`` adds a judgement of ``a`` to a judgement of ``b`` and
cannot compare them, so a linear model stays near chance; one hidden layer can.
"""

from __future__ import annotations

import numpy as np
import torch


def same_class_pairs(
    x: torch.Tensor, y: torch.Tensor, n_pairs: int, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """``n_pairs`` balanced pairs: inputs ``(n_pairs, 2d) = [x_a, x_b]``,
    labels ``1[y_a = y_b]`` (int64), exactly ``n_pairs // 2`` positives, in
    shuffled order.

    Raises ``ValueError`` when ``x (n, d)`` and ``y (n,)`` do not match, when
    there are fewer than two classes, or when no class has two members.
    """
    if x.ndim != 2 or y.shape != (x.shape[0],):
        raise ValueError(
            f"same_class_pairs: x {tuple(x.shape)} and y {tuple(y.shape)} "
            "differ"
        )
    if n_pairs < 2:
        raise ValueError(f"same_class_pairs needs n_pairs >= 2, got {n_pairs}")
    labels = y.numpy()
    classes, counts = np.unique(labels, return_counts=True)
    if len(classes) < 2 or counts.max() < 2:
        raise ValueError(
            f"same_class_pairs needs >= 2 classes and one with >= 2 members, "
            f"got class counts {counts.tolist()}"
        )
    rng = np.random.default_rng(seed)
    members = {c: np.flatnonzero(labels == c) for c in classes}
    pairable = classes[counts >= 2]
    n_pos = n_pairs // 2
    a, b = np.empty(n_pairs, dtype=np.int64), np.empty(n_pairs, dtype=np.int64)
    for i, c in enumerate(rng.choice(pairable, n_pos)):
        a[i], b[i] = rng.choice(members[c], 2, replace=False)
    for i in range(n_pos, n_pairs):
        ca, cb = rng.choice(classes, 2, replace=False)
        a[i], b[i] = rng.choice(members[ca]), rng.choice(members[cb])
    order = rng.permutation(n_pairs)
    a, b = a[order], b[order]
    same = torch.as_tensor((labels[a] == labels[b]).astype(np.int64))
    return torch.cat([x[a], x[b]], dim=1), same
