"""The one operation of the book: a key (weights over ``n`` slots) reads the
values (``n`` rows). A one-hot key reads one row, a spread-out key a mixture.
"""

import math

import torch
from torch import Tensor
from torch.nn.functional import one_hot


def _pair(weights, values) -> tuple[Tensor, Tensor]:
    w, v = torch.as_tensor(weights), torch.as_tensor(values)
    shapes = f"weights {tuple(w.shape)} and values {tuple(v.shape)}"
    if v.ndim < 2 or w.ndim < 1:
        raise ValueError(f"lookup needs (..., m, n) and (..., n, d); {shapes}")
    if w.shape[-1] != v.shape[-2]:
        raise ValueError(f"lookup: the numbers of slots differ, {shapes}")
    try:
        torch.broadcast_shapes(w.shape[:-2], v.shape[:-2])
    except RuntimeError as err:
        raise ValueError(
            f"lookup: batch dims do not broadcast, {shapes}"
        ) from err
    dtype = torch.promote_types(w.dtype, v.dtype)
    return w.to(dtype), v.to(dtype)


def lookup(weights: Tensor, values: Tensor) -> Tensor:
    """Read the values with a key: the weighted sum of the value rows,

        lookup(w, V) = w @ V = Σᵢ wᵢ · V[i, :]

    ``weights``: the key, ``(..., m, n)`` (or ``(n,)``): one weight per slot.
    ``values``: ``(..., n, d)``, one row per slot. Returns ``(..., m, d)``;
    batch dimensions broadcast.
    """
    w, v = _pair(weights, values)
    return w @ v


def hard_keys(index: Tensor | int, n: int) -> Tensor:
    """One-hot keys: ``e_index ∈ {0, 1}ⁿ`` (float), one row per index.
    Raises ``ValueError`` when ``n < 1`` or an index lies outside ``[0, n)``.
    """
    idx = torch.as_tensor(index)
    if n < 1:
        raise ValueError(f"hard_keys: needs n >= 1 slots, got n={n}")
    if idx.numel() and (idx.min() < 0 or idx.max() >= n):
        raise ValueError(f"hard_keys: indices {idx.tolist()} outside [0, {n})")
    return one_hot(idx.long(), n).to(torch.get_default_dtype())


def soft_keys(scores: Tensor, beta: float = 1.0, dim: int = -1) -> Tensor:
    """Soft key from raw scores: ``softmax(β · scores)`` along ``dim``.

        wᵢ = exp(β sᵢ) / Σⱼ exp(β sⱼ)

    Every row is non-negative and sums to 1. ``β = math.inf`` gives the hard
    key: the one-hot vector of the arg-max (the first one on ties). ``-inf``
    scores get weight 0. Raises ``ValueError`` for ``β <= 0``, NaN, or an
    empty ``dim``.
    """
    s = torch.as_tensor(scores)
    if not s.is_floating_point():
        s = s.to(torch.get_default_dtype())
    beta = float(beta)
    if math.isnan(beta) or beta <= 0:
        raise ValueError(
            f"soft_keys: beta must be > 0 (or math.inf), got {beta}"
        )
    if s.ndim == 0 or s.shape[dim] == 0:
        raise ValueError(
            f"soft_keys: scores {tuple(s.shape)} have no slots along dim {dim}"
        )
    if math.isinf(beta):
        idx = s.argmax(dim=dim, keepdim=True)
        return torch.zeros_like(s).scatter_(dim, idx, 1.0)
    return torch.softmax(beta * s, dim=dim)
