"""A feed-forward layer is attention over persistent (input-independent) slots.

For ``nn.Sequential(Linear(d, N), act, Linear(N, d_out))`` with torch's ``(out, in)``
weight layout, ``W₁`` is ``(N, d)`` and ``W₂`` is ``(d_out, N)``. Slot ``j`` has

    key   K[j] = W₁[j, :]    (the weight vector of hidden unit j: one ROW of W₁)
    value V[j] = W₂[:, j]    (what hidden unit j writes: one COLUMN of W₂, a row of W₂ᵀ)

and the layer reads them like attention, with ``act`` in place of softmax
(Sukhbaatar et al. 2019):

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
    """``N`` key/value slots: ``keys (N, d)``, ``key_bias (N,)``, ``values (N, d_out)``,
    ``out_bias (d_out,)``."""

    keys: torch.Tensor
    key_bias: torch.Tensor
    values: torch.Tensor
    out_bias: torch.Tensor

    def weights(
        self, x: torch.Tensor, kernel: str = "relu", beta: float = 1.0
    ) -> torch.Tensor:
        """Addressing weights over the slots: ``relu(s)`` or ``softmax(β s)``, ``s = x Kᵀ + b₁``."""
        if kernel not in KERNELS:
            raise ValueError(
                f"PersistentMemory: unknown kernel {kernel!r}; choose {KERNELS}"
            )
        if x.shape[-1] != self.keys.shape[1]:
            raise ValueError(
                f"PersistentMemory: x {tuple(x.shape)} does not fit keys {tuple(self.keys.shape)}"
            )
        scores = x @ self.keys.T + self.key_bias
        return F.relu(scores) if kernel == "relu" else soft_keys(scores, beta)

    def read(
        self, x: torch.Tensor, kernel: str = "relu", beta: float = 1.0
    ) -> torch.Tensor:
        """``lookup(weights(x), V) + b₂`` — with ``kernel="relu"`` this is the FFN itself."""
        return (
            lookup(self.weights(x, kernel, beta), self.values) + self.out_bias
        )


def ffn_slots(ffn: nn.Sequential) -> PersistentMemory:
    """Read ``Sequential(Linear, act, Linear)`` as persistent slots: ``K = W₁``, ``V = W₂ᵀ``.

    Raises ``ValueError`` when the module is not of that shape or the widths differ.
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
            f"ffn_slots: W₁ {tuple(first.weight.shape)} and W₂ {tuple(second.weight.shape)} "
            f"disagree on the number of slots"
        )
    zeros = torch.zeros
    return PersistentMemory(
        keys=first.weight,
        key_bias=first.bias
        if first.bias is not None
        else zeros(first.out_features),
        values=second.weight.T,
        out_bias=second.bias
        if second.bias is not None
        else zeros(second.out_features),
    )
