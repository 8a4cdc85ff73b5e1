"""Associative memories: the classical Hopfield network and its modern form.

Patterns are the rows of ``X ∈ {−1, +1}^{P×d}``; a query ``ξ`` is a corrupted
pattern.

* classical (Hopfield 1982): ``W = XᵀX / d`` with zero diagonal; update one
  unit at a time, ``ξᵢ ← sign(Σⱼ Wᵢⱼ ξⱼ)``, until nothing changes. Capacity
  ≈ 0.14·d patterns for large ``d`` (Amit, Gutfreund & Sompolinsky 1985).
* modern (Ramsauer et al. 2021): one update ``ξ ← Xᵀ softmax(β X ξ)``, that
  is attention with the query ``ξ`` and keys = values = ``X``. Ramsauer et
  al. prove that the number of patterns it can store grows exponentially
  with ``d``; ``retrieval_capacity`` measures it for one step with a large β,
  ``retrieval_capacity_law`` computes it.

Memory cost: the classical network keeps ``d²`` weights whatever ``P``; the
modern one keeps the ``P`` patterns themselves, ``P·d`` numbers.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from .lookup import lookup, soft_keys


def _pm1(x: np.ndarray, name: str) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    if a.ndim != 2 or a.shape[0] == 0 or not np.isin(a, (-1.0, 1.0)).all():
        raise ValueError(
            f"{name} must be a non-empty (n, d) array of ±1, "
            f"got shape {a.shape}"
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
    """Copies of ``patterns``, each bit flipped with probability ``flip``."""
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
    """Run the classical network from each query to a fixed point.

        W = XᵀX / d,  Wᵢᵢ = 0;   ξᵢ ← sign(Σⱼ Wᵢⱼ ξⱼ)  (sign(0) = +1)

    Units are updated one at a time (asynchronously), in a random order each
    sweep; all queries update in parallel. Stops after a sweep that changes
    nothing, or after ``max_sweeps``.
    """
    x, q = _pm1(patterns, "patterns"), _pm1(queries, "queries")
    if q.shape[1] != x.shape[1]:
        raise ValueError(
            f"classical_retrieve: patterns {x.shape} and queries {q.shape} "
            "differ in d"
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

    This is ``attention`` with one query, keys = values = the stored patterns
    and the scale β; it returns continuous states (take ``sign`` to compare
    with ±1 patterns).
    """
    x, q = _pm1(patterns, "patterns"), np.asarray(queries, dtype=float)
    if q.ndim != 2 or q.shape[1] != x.shape[1]:
        raise ValueError(
            f"modern_retrieve: patterns {x.shape} and queries {q.shape} "
            "differ in d"
        )
    if steps < 1:
        raise ValueError(f"modern_retrieve: steps must be >= 1, got {steps}")
    xt, s = torch.as_tensor(x), torch.as_tensor(q)
    for _ in range(steps):
        s = lookup(soft_keys(s @ xt.T, beta), xt)
    return s.numpy()


def success_rate(
    retrieved: np.ndarray, targets: np.ndarray, max_wrong: int = 0
) -> float:
    """Fraction of queries whose retrieved sign pattern (``sign(0) = +1``)
    differs from its target in at most ``max_wrong`` bits (default: exact)."""
    r, t = np.asarray(retrieved), np.asarray(targets)
    if r.shape != t.shape:
        raise ValueError(
            f"success_rate: retrieved {r.shape} and targets {t.shape} differ"
        )
    if max_wrong < 0:
        raise ValueError(
            f"success_rate: max_wrong must be >= 0, got {max_wrong}"
        )
    wrong = (np.where(r >= 0, 1.0, -1.0) != t).sum(axis=-1)
    return float((wrong <= max_wrong).mean())


def retrieval_capacity(
    d: int,
    flips: int,
    n_queries: int,
    rng: np.random.Generator,
    max_patterns: int = 2_000_000,
    chunk: int = 4096,
) -> float:
    """How many random patterns one step with a large β holds before it
    fails half of the queries with exactly ``flips`` of their ``d`` bits
    flipped.

    With β large enough the step returns the stored pattern whose overlap with
    the query is largest (the hard key of β → ∞). A query's own pattern
    overlaps it by ``d − 2·flips``; the query fails once the memory also holds
    a pattern that overlaps it at least as much (a tie counts as a failure: a
    finite β blends tied patterns). Each query gets its own pattern; the other
    stored patterns are drawn in chunks and shared, so the memory is never
    built whole. Returns the median over queries of the memory size ``P``
    (own pattern included) at which the query first fails; ``inf`` when more
    than half survive ``max_patterns`` patterns.
    """
    if d < 1 or not 0 <= flips <= d or n_queries < 1:
        raise ValueError(
            "retrieval_capacity needs d >= 1, 0 <= flips <= d and "
            f"n_queries >= 1, got d={d}, flips={flips}, n_queries={n_queries}"
        )
    signs = np.array([-1.0, 1.0], dtype=np.float32)
    x = rng.choice(signs, size=(n_queries, d))
    flipped = np.argsort(rng.random((n_queries, d)), axis=1)[:, :flips]
    q = x.copy()
    np.put_along_axis(q, flipped, -np.take_along_axis(x, flipped, 1), 1)
    own = d - 2 * flips
    first = np.full(n_queries, np.inf)  # index of the first winning pattern
    drawn = 0
    while drawn < max_patterns and np.isinf(first).sum() >= n_queries / 2:
        y = rng.choice(signs, size=(min(chunk, max_patterns - drawn), d))
        wins = q @ y.T >= own
        hit = np.where(wins.any(axis=1), wins.argmax(axis=1) + drawn, np.inf)
        first, drawn = np.minimum(first, hit), drawn + len(y)
    # memory size at failure: the own pattern and the patterns up to the winner
    return float(np.median(first + 2))


def retrieval_capacity_law(d: int, flips: int) -> float:
    """The memory size that ``retrieval_capacity`` measures, computed exactly.

    A random pattern overlaps the query at least as much as the query's own
    pattern when it differs from the query in at most ``flips`` bits:
    ``p = Σ_{k ≤ flips} C(d, k) / 2ᵈ``. A query survives ``P − 1`` other
    patterns with probability ``(1 − p)^(P−1)``, one half at
    ``P = 1 + ln 2 / (−ln(1 − p)) ≈ ln 2 / p``. At a fixed fraction ``f`` of
    flipped bits ``p`` falls exponentially with ``d`` (at most
    ``exp(−d(1 − 2f)²/2)``, Hoeffding's bound), so the capacity grows
    exponentially.
    """
    if d < 1 or not 0 <= flips < d / 2:
        raise ValueError(
            "retrieval_capacity_law needs d >= 1 and 0 <= flips < d/2, "
            f"got d={d}, flips={flips}"
        )
    d, flips = int(d), int(flips)
    p = sum(math.comb(d, k) for k in range(flips + 1)) / 2**d
    return 1.0 + math.log(2) / -math.log1p(-p)
