"""A one-hidden-layer network built by hand as an exact dictionary.

Store ``N`` pairs ``(pᵢ, vᵢ)`` of patterns and values. Hidden unit ``j`` has
the stored pattern ``pⱼ`` as its filter and a threshold ``τⱼ``:

    hⱼ(x) = relu((⟨pⱼ, x⟩ − τⱼ) / (⟨pⱼ, pⱼ⟩ − τⱼ)),   τⱼ = (⟨pⱼ, pⱼ⟩ + mⱼ) / 2,
    mⱼ = max_{i≠j} ⟨pⱼ, pᵢ⟩,

a threshold halfway between the pattern's match with itself and its best match
with any other stored pattern. Then the key of a stored pattern is one-hot,
``h(pᵢ) = eᵢ`` (only its own unit fires, at 1), and the value rows
``W₂ᵀ = [v₁; …; v_N]`` return ``vᵢ`` exactly. It needs every pattern to be its
own best match (true for distinct patterns of equal norm).
"""

from __future__ import annotations

import torch
from torch import nn


def match_margins(patterns: torch.Tensor) -> torch.Tensor:
    """``⟨pⱼ, pⱼ⟩ − max_{i≠j} ⟨pⱼ, pᵢ⟩`` for every stored pattern (must be
    > 0 for the dictionary to be exact)."""
    p = torch.as_tensor(patterns, dtype=torch.float64)
    if p.ndim != 2 or p.shape[0] < 2:
        raise ValueError(
            f"match_margins needs patterns (N >= 2, d), got {tuple(p.shape)}"
        )
    g = p @ p.T
    self_match = g.diagonal().clone()
    others = g.fill_diagonal_(-torch.inf).max(dim=1).values
    return self_match - others


@torch.no_grad()
def exact_dictionary(
    patterns: torch.Tensor, values: torch.Tensor
) -> nn.Sequential:
    """``Linear(d, N) → ReLU → Linear(N, d_v)`` that maps each stored pattern
    to its value.

    ``patterns (N, d)``, ``values (N, d_v)``. Raises ``ValueError`` when the
    shapes do not pair up, or when some pattern is not its own best match
    (``match_margins <= 0``, e.g. duplicates), since then no threshold can
    single it out. The weights are computed in float64 and the layers take the
    dtype of ``patterns`` (float64 patterns: exact to about 1e-12).
    """
    dtype = (
        patterns.dtype
        if patterns.is_floating_point()
        else torch.get_default_dtype()
    )
    p = torch.as_tensor(patterns, dtype=torch.float64)
    v = torch.as_tensor(values, dtype=torch.float64)
    if p.ndim != 2 or v.ndim != 2 or p.shape[0] != v.shape[0]:
        raise ValueError(
            f"exact_dictionary needs patterns (N, d) and values (N, d_v), "
            f"got patterns {tuple(p.shape)} and values {tuple(v.shape)}"
        )
    margins = match_margins(p)
    if bool((margins <= 0).any()):
        bad = torch.nonzero(margins <= 0).flatten().tolist()
        raise ValueError(
            f"exact_dictionary: patterns {bad[:5]} are not their own best "
            "match"
        )
    self_match = (p * p).sum(1)
    tau = self_match - margins / 2
    scale = 1 / (self_match - tau)
    first = nn.Linear(p.shape[1], p.shape[0], dtype=dtype)
    second = nn.Linear(p.shape[0], v.shape[1], dtype=dtype)
    first.weight.copy_(p * scale[:, None])
    first.bias.copy_(-tau * scale)
    second.weight.copy_(v.T)
    second.bias.zero_()
    return nn.Sequential(first, nn.ReLU(), second)
