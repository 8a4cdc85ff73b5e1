"""A feed-forward layer is attention over persistent (input-independent) slots.

For ``nn.Sequential(Linear(d, N), act, Linear(N, d_out))`` with torch's
``(out, in)`` weight layout, ``W₁`` is ``(N, d)`` and ``W₂`` is ``(d_out, N)``.
Slot ``j`` has

    filter K[j] = W₁[j, :]   (what the input is matched against: a ROW of W₁)
    value  V[j] = W₂[:, j]   (what unit j writes: a COLUMN of W₂, a row of W₂ᵀ)

(attention calls the rows of ``K`` "keys"; in this book the *key* is the
weights over the slots, ``act(x Kᵀ + b₁)``). The layer reads the slots like
attention, with ``act`` in place of softmax (Sukhbaatar et al. 2019):

    FFN(x) = lookup(act(x Kᵀ + b₁), V) + b₂
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from .lookup import lookup, soft_keys

KERNELS = ("relu", "softmax")


@dataclass(frozen=True)
class PersistentMemory:
    """``N`` slots: ``filters (N, d)``, ``filter_bias (N,)``, ``values
    (N, d_out)``, ``out_bias (d_out,)``."""

    filters: torch.Tensor
    filter_bias: torch.Tensor
    values: torch.Tensor
    out_bias: torch.Tensor

    def keys(
        self, x: torch.Tensor, kernel: str = "relu", beta: float = 1.0
    ) -> torch.Tensor:
        """The key of ``x``, its weights over the slots: ``relu(s)`` or
        ``softmax(β s)``, with scores ``s = x Kᵀ + b₁``."""
        if kernel not in KERNELS:
            raise ValueError(
                f"PersistentMemory: unknown kernel {kernel!r}; "
                f"choose {KERNELS}"
            )
        if x.shape[-1] != self.filters.shape[1]:
            raise ValueError(
                f"PersistentMemory: x {tuple(x.shape)} does not fit filters "
                f"{tuple(self.filters.shape)}"
            )
        scores = x @ self.filters.T + self.filter_bias
        return F.relu(scores) if kernel == "relu" else soft_keys(scores, beta)

    def read(
        self, x: torch.Tensor, kernel: str = "relu", beta: float = 1.0
    ) -> torch.Tensor:
        """``lookup(keys(x), V) + b₂``; with ``kernel="relu"`` this is the
        FFN itself."""
        return lookup(self.keys(x, kernel, beta), self.values) + self.out_bias


def ffn_slots(ffn: nn.Sequential) -> PersistentMemory:
    """Read ``Sequential(Linear, act, Linear)`` as persistent slots:
    filters ``K = W₁``, values ``V = W₂ᵀ``.

    Raises ``ValueError`` when the module is not of that shape or the widths
    differ.
    """
    parts = list(ffn)
    if len(parts) != 3 or not all(
        isinstance(parts[i], nn.Linear) for i in (0, 2)
    ):
        raise ValueError(
            f"ffn_slots needs Sequential(Linear, act, Linear), got "
            f"{[type(p).__name__ for p in parts]}"
        )
    first, second = parts[0], parts[2]
    if first.out_features != second.in_features:
        raise ValueError(
            f"ffn_slots: W₁ {tuple(first.weight.shape)} and W₂ "
            f"{tuple(second.weight.shape)} disagree on the number of slots"
        )
    zeros = torch.zeros
    return PersistentMemory(
        filters=first.weight,
        filter_bias=first.bias
        if first.bias is not None
        else zeros(first.out_features),
        values=second.weight.T,
        out_bias=second.bias
        if second.bias is not None
        else zeros(second.out_features),
    )
