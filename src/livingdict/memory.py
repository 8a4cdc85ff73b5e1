"""A one-hidden-layer network built by hand as an exact dictionary.

Store ``N`` pairs ``(kᵢ, vᵢ)``: hidden unit ``j`` is a detector for key ``j``,

    hⱼ(x) = relu((⟨kⱼ, x⟩ − τⱼ) / (⟨kⱼ, kⱼ⟩ − τⱼ)),   τⱼ = (⟨kⱼ, kⱼ⟩ + mⱼ) / 2,
    mⱼ = max_{i≠j} ⟨kⱼ, kᵢ⟩,

a threshold halfway between the key's match with itself and its best match with any
other stored key. Then ``h(kᵢ) = eᵢ`` (one-hot: only the matching unit fires, at 1)
and the value rows ``W₂ᵀ = [v₁; …; v_N]`` return ``vᵢ`` exactly. It needs every key to
be its own best match (true for distinct keys of equal norm).
"""

from __future__ import annotations

import torch
from torch import nn


def match_margins(keys: torch.Tensor) -> torch.Tensor:
    """``⟨kⱼ, kⱼ⟩ − max_{i≠j} ⟨kⱼ, kᵢ⟩`` for every stored key (must be > 0)."""
    k = torch.as_tensor(keys, dtype=torch.float64)
    if k.ndim != 2 or k.shape[0] < 2:
        raise ValueError(
            f"match_margins needs keys (N >= 2, d), got {tuple(k.shape)}"
        )
    g = k @ k.T
    self_match = g.diagonal().clone()
    others = g.fill_diagonal_(-torch.inf).max(dim=1).values
    return self_match - others


@torch.no_grad()
def exact_dictionary(
    keys: torch.Tensor, values: torch.Tensor
) -> nn.Sequential:
    """``Linear(d, N) → ReLU → Linear(N, d_v)`` that maps each stored key to its value.

    ``keys (N, d)``, ``values (N, d_v)``. Raises ``ValueError`` when the shapes do not
    pair up, or when some key is not its own best match (``match_margins <= 0``, e.g.
    duplicate keys), since then no threshold can single it out. The weights are computed
    in float64 and the layers take the dtype of ``keys`` (float64 keys: exact to ~1e-12).
    """
    dtype = (
        keys.dtype if keys.is_floating_point() else torch.get_default_dtype()
    )
    k = torch.as_tensor(keys, dtype=torch.float64)
    v = torch.as_tensor(values, dtype=torch.float64)
    if k.ndim != 2 or v.ndim != 2 or k.shape[0] != v.shape[0]:
        raise ValueError(
            f"exact_dictionary needs keys (N, d) and values (N, d_v), got keys "
            f"{tuple(k.shape)} and values {tuple(v.shape)}"
        )
    margins = match_margins(k)
    if bool((margins <= 0).any()):
        bad = torch.nonzero(margins <= 0).flatten().tolist()
        raise ValueError(
            f"exact_dictionary: keys {bad[:5]} are not their own best match"
        )
    self_match = (k * k).sum(1)
    tau = self_match - margins / 2
    scale = 1 / (self_match - tau)
    first = nn.Linear(k.shape[1], k.shape[0], dtype=dtype)
    second = nn.Linear(k.shape[0], v.shape[1], dtype=dtype)
    first.weight.copy_(k * scale[:, None])
    first.bias.copy_(-tau * scale)
    second.weight.copy_(v.T)
    second.bias.zero_()
    return nn.Sequential(first, nn.ReLU(), second)
