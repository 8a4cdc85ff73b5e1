"""Associative memories: the classical Hopfield network and its modern (attention) form.

Patterns are the rows of ``X ∈ {−1, +1}^{P×d}``; a query ``ξ`` is a corrupted pattern.

* classical (Hopfield 1982): ``W = XᵀX / d`` with zero diagonal; update one unit at a
  time, ``ξᵢ ← sign(Σⱼ Wᵢⱼ ξⱼ)``, until nothing changes. Capacity ≈ 0.14·d patterns
  (Amit, Gutfreund & Sompolinsky 1985).
* modern (Ramsauer et al. 2021): one update ``ξ ← Xᵀ softmax(β X ξ)`` — attention with
  the query ``ξ``, keys and values ``X``; capacity grows exponentially with ``d``.
"""

from __future__ import annotations

import numpy as np
import torch

from .lookup import lookup, soft_keys


def _pm1(x: np.ndarray, name: str) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    if a.ndim != 2 or a.shape[0] == 0 or not np.isin(a, (-1.0, 1.0)).all():
        raise ValueError(
            f"{name} must be a non-empty (n, d) array of ±1, got shape {a.shape}"
        )
    return a


def random_patterns(p: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """``p`` random patterns in ``{−1, +1}ᵈ``, each bit a fair coin."""
    if p < 1 or d < 1:
        raise ValueError(
            f"random_patterns needs p >= 1 and d >= 1, got p={p}, d={d}"
        )
    return rng.choice(np.array([-1.0, 1.0]), size=(p, d))


def corrupt(
    patterns: np.ndarray, flip: float, rng: np.random.Generator
) -> np.ndarray:
    """Copies of ``patterns`` with each bit flipped independently with probability ``flip``."""
    x = _pm1(patterns, "corrupt: patterns")
    if not 0 <= flip <= 1:
        raise ValueError(f"corrupt: flip must lie in [0, 1], got {flip}")
    return np.where(rng.random(x.shape) < flip, -x, x)


def classical_retrieve(
    patterns: np.ndarray,
    queries: np.ndarray,
    rng: np.random.Generator,
    max_sweeps: int = 30,
) -> np.ndarray:
    """Run the classical network from each query to a fixed point (asynchronous updates).

        W = XᵀX / d,  Wᵢᵢ = 0;   ξᵢ ← sign(Σⱼ Wᵢⱼ ξⱼ)  (sign(0) = +1)

    Units are visited in a random order each sweep; all queries update in parallel.
    Stops after a sweep that changes nothing, or after ``max_sweeps``.
    """
    x, q = _pm1(patterns, "patterns"), _pm1(queries, "queries")
    if q.shape[1] != x.shape[1]:
        raise ValueError(
            f"classical_retrieve: patterns {x.shape} and queries {q.shape} differ in d"
        )
    d = x.shape[1]
    w = x.T @ x / d
    np.fill_diagonal(w, 0.0)
    s = q.copy()
    for _ in range(max_sweeps):
        before = s.copy()
        for i in rng.permutation(d):
            s[:, i] = np.where(s @ w[:, i] >= 0, 1.0, -1.0)
        if np.array_equal(s, before):
            break
    return s


def modern_retrieve(
    patterns: np.ndarray, queries: np.ndarray, beta: float, steps: int = 1
) -> np.ndarray:
    """The modern Hopfield update, ``steps`` times: ``ξ ← Xᵀ softmax(β X ξ)``.

    This is ``attention`` with one query, keys = values = the stored patterns and the
    scale β; it returns continuous states (take ``sign`` to compare with ±1 patterns).
    """
    x, q = _pm1(patterns, "patterns"), np.asarray(queries, dtype=float)
    if q.ndim != 2 or q.shape[1] != x.shape[1]:
        raise ValueError(
            f"modern_retrieve: patterns {x.shape} and queries {q.shape} differ in d"
        )
    if steps < 1:
        raise ValueError(f"modern_retrieve: steps must be >= 1, got {steps}")
    xt, s = torch.as_tensor(x), torch.as_tensor(q)
    for _ in range(steps):
        s = lookup(soft_keys(s @ xt.T, beta), xt)
    return s.numpy()


def success_rate(retrieved: np.ndarray, targets: np.ndarray) -> float:
    """Fraction of queries whose retrieved sign pattern equals its target, bit for bit."""
    r, t = np.asarray(retrieved), np.asarray(targets)
    if r.shape != t.shape:
        raise ValueError(
            f"success_rate: retrieved {r.shape} and targets {t.shape} differ"
        )
    return float((np.where(r >= 0, 1.0, -1.0) == t).all(axis=1).mean())
