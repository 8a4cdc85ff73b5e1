"""Numbers that describe a dictionary, from NumPy arrays or torch tensors."""

import numpy as np


def _np(x) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.asarray(x, dtype=float)


def cosine(a, b) -> np.ndarray:
    """Row-wise cosine similarity ``⟨a, b⟩ / (‖a‖ ‖b‖)`` over the last axis;
    ``ValueError`` (not NaN) for shapes that differ or a zero vector."""
    a, b = _np(a), _np(b)
    if a.shape != b.shape:
        raise ValueError(f"cosine: shapes differ, a {a.shape} and b {b.shape}")
    na, nb = np.linalg.norm(a, axis=-1), np.linalg.norm(b, axis=-1)
    if (na == 0).any() or (nb == 0).any():
        raise ValueError(
            f"cosine: zero vector in a {a.shape} or b {b.shape}; "
            "cosine undefined"
        )
    return (a * b).sum(-1) / (na * nb)


def pairwise_cosine(x) -> np.ndarray:
    """The ``n × n`` cosines between the rows of ``x`` (``(n, d)``)."""
    x = _np(x)
    if x.ndim != 2:
        raise ValueError(
            f"pairwise_cosine needs a 2-D (n, d) array, got {x.shape}"
        )
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    if (norms == 0).any():
        raise ValueError(
            f"pairwise_cosine: x {x.shape} has a zero row; cosine undefined"
        )
    u = x / norms
    return u @ u.T


def correlation(a, b) -> np.ndarray:
    """Row-wise Pearson correlation: the cosine of the centred vectors."""
    a, b = _np(a), _np(b)
    return cosine(a - a.mean(-1, keepdims=True), b - b.mean(-1, keepdims=True))


def effective_keys(weights, axis: int = -1) -> np.ndarray:
    """Effective number of active slots of non-negative key rows:
    ``exp(H(p))``, ``p = w / Σ w``, ``H(p) = -Σ pᵢ log pᵢ``. One-hot gives 1,
    uniform over n gives n.
    """
    w = _np(weights)
    if (w < 0).any():
        raise ValueError(
            f"effective_keys needs non-negative weights, got min {w.min():.3g}"
        )
    total = w.sum(axis=axis, keepdims=True)
    if (total == 0).any():
        raise ValueError(
            f"effective_keys: weights {w.shape} have an all-zero row"
        )
    p = w / total
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -np.where(p > 0, p * np.log(p), 0.0).sum(axis=axis)
    return np.exp(h)
