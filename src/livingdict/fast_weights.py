"""Linear attention as a dictionary written by outer products (fast weights).

Writing ``N`` pairs ``(kᵢ, vᵢ)`` into one matrix and reading it with a query ``q``:

* sum rule (Hebbian, what linear attention computes):  ``W = Σᵢ vᵢ kᵢᵀ``
* delta rule (Schlag et al. 2021): ``W ← W + (vᵢ − W kᵢ) kᵢᵀ`` for each pair in turn,
  i.e. write only the part of ``vᵢ`` that ``W`` does not already return for ``kᵢ``
* read: ``W q = Σᵢ vᵢ ⟨kᵢ, q⟩`` (for the sum rule: linear attention without softmax)

Matrices are NumPy arrays: ``keys (N, d)``, ``values (N, d_v)``, ``W (d_v, d)``.
"""

from __future__ import annotations

import numpy as np


def _pairs(
    keys: np.ndarray, values: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    k, v = np.asarray(keys, dtype=float), np.asarray(values, dtype=float)
    if (
        k.ndim != 2
        or v.ndim != 2
        or k.shape[0] != v.shape[0]
        or k.shape[0] == 0
    ):
        raise ValueError(
            f"fast weights need keys (N, d) and values (N, d_v) with the same N >= 1; "
            f"got keys {k.shape} and values {v.shape}"
        )
    return k, v


def random_keys(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` keys drawn uniformly on the unit sphere of ``ℝᵈ`` (Gaussian, normalised)."""
    if n < 1 or d < 1:
        raise ValueError(
            f"random_keys needs n >= 1 and d >= 1, got n={n}, d={d}"
        )
    k = rng.standard_normal((n, d))
    return k / np.linalg.norm(k, axis=1, keepdims=True)


def orthonormal_keys(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """``n ≤ d`` random orthonormal keys (rows of the Q of a Gaussian matrix's QR)."""
    if not 1 <= n <= d:
        raise ValueError(
            f"orthonormal_keys: need 1 <= n <= d, got n={n}, d={d}"
        )
    q, _ = np.linalg.qr(rng.standard_normal((d, n)))
    return q.T


def sum_rule(keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The sum (Hebbian) rule: ``W = Σᵢ vᵢ kᵢᵀ = Vᵀ K``, shape ``(d_v, d)``."""
    k, v = _pairs(keys, values)
    return v.T @ k


def delta_rule(
    keys: np.ndarray, values: np.ndarray, sweeps: int = 1
) -> np.ndarray:
    """The delta rule, ``sweeps`` passes over the pairs in order, from ``W = 0``:

        W ← W + (vᵢ − W kᵢ) kᵢᵀ / ‖kᵢ‖²

    After writing pair ``i``, ``W kᵢ = vᵢ`` exactly. One sweep is the online rule of
    fast-weight programmers; repeated sweeps are the Kaczmarz method and converge to
    ``V K⁺``, which stores every pair exactly when the keys are linearly independent.
    """
    return delta_rule_until(keys, values, tol=-1.0, max_sweeps=sweeps)[0]


def delta_rule_until(
    keys: np.ndarray, values: np.ndarray, tol: float, max_sweeps: int = 10_000
) -> tuple[np.ndarray, int]:
    """Repeat delta-rule sweeps until ``max |W kᵢ − vᵢ| ≤ tol`` over all stored pairs
    (or ``max_sweeps``); return ``(W, sweeps used)``. See ``delta_rule``."""
    k, v = _pairs(keys, values)
    if max_sweeps < 1:
        raise ValueError(f"delta_rule: sweeps must be >= 1, got {max_sweeps}")
    norms2 = (k * k).sum(1)
    if (norms2 == 0).any():
        raise ValueError(f"delta_rule: keys {k.shape} contain a zero key")
    w = np.zeros((v.shape[1], k.shape[1]))
    sweep = 0
    while sweep < max_sweeps:
        sweep += 1
        for ki, vi, n2 in zip(k, v, norms2, strict=True):
            w += np.outer(vi - w @ ki, ki / n2)
        if tol >= 0 and np.abs(k @ w.T - v).max() <= tol:
            break
    return w, sweep


def read(w: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Read the fast-weight dictionary: row ``j`` of the result is ``W qⱼ``, ``(M, d_v)``."""
    w, q = np.asarray(w, dtype=float), np.asarray(queries, dtype=float)
    if w.ndim != 2 or q.ndim != 2 or q.shape[1] != w.shape[1]:
        raise ValueError(
            f"read: W {w.shape} (d_v, d) cannot read queries {q.shape} (M, d)"
        )
    return q @ w.T


def sum_rule_quality(n_over_d: np.ndarray | float) -> np.ndarray:
    """Expected cosine between ``W kⱼ`` and ``vⱼ`` for the sum rule with random unit keys:

        cos ≈ (1 + N/d)^(-1/2)

    (the crosstalk ``Σ_{i≠j} vᵢ ⟨kᵢ, kⱼ⟩`` has variance ``(N − 1)/d`` per unit of ‖v‖²).
    """
    r = np.asarray(n_over_d, dtype=float)
    if (r < 0).any():
        raise ValueError(f"sum_rule_quality: N/d must be >= 0, got {r}")
    return (1.0 + r) ** -0.5
