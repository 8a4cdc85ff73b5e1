"""Linear attention as a dictionary written by outer products (fast weights).

Write ``N`` pairs ``(kᵢ, vᵢ)`` into one matrix, read it with a query ``q``:

* sum rule (Hebbian; what linear attention computes): ``W = Σᵢ vᵢ kᵢᵀ``
* delta rule (Schlag et al. 2021): ``W ← W + (vᵢ − W kᵢ) kᵢᵀ`` for each pair
  in turn, i.e. write only the part of ``vᵢ`` that ``W`` does not already
  return for ``kᵢ``
* least squares (for comparison, computed directly): ``W = Vᵀ (Kᵀ)⁺``
* read: ``W q = Σᵢ vᵢ ⟨kᵢ, q⟩`` (sum rule: linear attention, no softmax)

NumPy arrays: ``keys (N, d)``, ``values (N, d_v)``, ``W (d_v, d)``.
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
            "fast weights need keys (N, d) and values (N, d_v) with the same "
            f"N >= 1; got keys {k.shape} and values {v.shape}"
        )
    return k, v


def random_keys(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` keys uniform on the unit sphere of ``ℝᵈ`` (normalised normals)."""
    if n < 1 or d < 1:
        raise ValueError(
            f"random_keys needs n >= 1 and d >= 1, got n={n}, d={d}"
        )
    k = rng.standard_normal((n, d))
    return k / np.linalg.norm(k, axis=1, keepdims=True)


def orthonormal_keys(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """``n ≤ d`` random orthonormal keys (rows of Q, QR of a Gaussian)."""
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


def _sweep_map(k: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One delta-rule sweep as an affine map of the matrix: ``W ↦ W M + B``.

    Writing pair ``i`` is ``W ← W (I − kᵢkᵢᵀ/‖kᵢ‖²) + vᵢkᵢᵀ/‖kᵢ‖²``, affine in
    ``W``. A sweep composes the ``N`` writes in order, so
    ``M = Πᵢ (I − kᵢkᵢᵀ/‖kᵢ‖²)`` and ``B`` is one sweep from ``W = 0``.
    """
    norms2 = (k * k).sum(1)
    if (norms2 == 0).any():
        raise ValueError(f"delta_rule: keys {k.shape} contain a zero key")
    m, b = np.eye(k.shape[1]), np.zeros((v.shape[1], k.shape[1]))
    for ki, vi, n2 in zip(k, v, norms2, strict=True):
        b += np.outer(vi - b @ ki, ki / n2)  # write what W does not return
        m -= np.outer(m @ ki, ki / n2)
    return m, b


def delta_rule(
    keys: np.ndarray, values: np.ndarray, sweeps: int = 1
) -> np.ndarray:
    """The delta rule, ``sweeps`` passes over the pairs in order, from 0:

        W ← W + (vᵢ − W kᵢ) kᵢᵀ / ‖kᵢ‖²

    After writing pair ``i``, ``W kᵢ = vᵢ`` exactly; later writes disturb it
    unless their keys are orthogonal to ``kᵢ``. One sweep is the online rule
    of fast-weight programmers. Repeated sweeps are the cyclic Kaczmarz
    method for ``W Kᵀ = Vᵀ``. When an exact solution exists (``N ≤ d``
    linearly independent keys) they converge to the one nearest the start,
    from ``W = 0`` the minimum-norm solution ``Vᵀ (Kᵀ)⁺`` (``least_squares``),
    slowly when the keys are ill-conditioned. Past ``N = d`` there is in
    general no exact solution, and the cyclic rule does not converge to the
    least-squares one: each write makes its own pair exact, so the matrix
    cycles through ``N`` states, one per write; only the matrix at the end
    of a sweep settles, on a limit that favours the pairs written last.

    Many sweeps are computed exactly, without ``sweeps × N`` writes, by
    composing the sweep's affine map ``W ↦ W M + B`` (``sweeps`` in binary).
    """
    k, v = _pairs(keys, values)
    if sweeps < 1:
        raise ValueError(f"delta_rule: sweeps must be >= 1, got {sweeps}")
    m, b = _sweep_map(k, v)  # (m, b) applies 1, 2, 4, … sweeps in turn
    w = np.zeros_like(b)
    while True:
        if sweeps & 1:
            w = w @ m + b
        sweeps >>= 1
        if not sweeps:
            return w
        m, b = m @ m, b @ m + b  # twice the sweeps: (W M + B) M + B


def delta_rule_until(
    keys: np.ndarray,
    values: np.ndarray,
    tol: float,
    max_sweeps: int = 2**26,
) -> tuple[np.ndarray, int]:
    """Double the delta-rule sweeps (1, 2, 4, …) until the matrix at the end
    of a sweep settles, ``max |W₂ₛ − Wₛ| ≤ tol``, or the next doubling would
    pass ``max_sweeps``; return ``(W, sweeps)``.

    Settled is not exact: for ``N ≤ d`` independent keys the settled matrix
    stores every pair; past ``N = d`` it is one state of a cycle (see
    ``delta_rule``).
    """
    k, v = _pairs(keys, values)
    if max_sweeps < 1:
        raise ValueError(f"delta_rule: sweeps must be >= 1, got {max_sweeps}")
    m, b = _sweep_map(k, v)
    w, sweeps = b, 1
    while 2 * sweeps <= max_sweeps:
        w2 = w @ m + w  # W₂ₛ = Wₛ Mˢ + Wₛ, with m holding Mˢ
        m, sweeps = m @ m, 2 * sweeps
        change, w = np.abs(w2 - w).max(), w2
        if change <= tol:
            break
    return w, sweeps


def least_squares(keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The least-squares linear memory ``W = Vᵀ (Kᵀ)⁺``, shape ``(d_v, d)``.

    It minimises ``Σᵢ ‖W kᵢ − vᵢ‖²`` (with the smallest norm among the
    minimisers): exact for ``N ≤ d`` independent keys, the best compromise of
    any ``d_v × d`` matrix past that. Computed directly with the
    pseudo-inverse, not written pair by pair.
    """
    k, v = _pairs(keys, values)
    return v.T @ np.linalg.pinv(k.T)


def read(w: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Read the dictionary: row ``j`` of the result ``(M, d_v)`` is W qⱼ."""
    w, q = np.asarray(w, dtype=float), np.asarray(queries, dtype=float)
    if w.ndim != 2 or q.ndim != 2 or q.shape[1] != w.shape[1]:
        raise ValueError(
            f"read: W {w.shape} (d_v, d) cannot read queries {q.shape} (M, d)"
        )
    return q @ w.T


def sum_rule_quality(n_over_d: np.ndarray | float) -> np.ndarray:
    """Approximate mean cosine between ``W kⱼ`` and ``vⱼ`` for the sum rule
    with random unit keys:

        cos ≈ (1 + N/d)^(-1/2)

    (the crosstalk ``Σ_{i≠j} vᵢ ⟨kᵢ, kⱼ⟩`` has variance ``(N − 1)/d`` per unit
    of ``‖v‖²``; the law ignores the ``− 1`` and the spread of the norms).
    """
    r = np.asarray(n_over_d, dtype=float)
    if (r < 0).any():
        raise ValueError(f"sum_rule_quality: N/d must be >= 0, got {r}")
    return (1.0 + r) ** -0.5
