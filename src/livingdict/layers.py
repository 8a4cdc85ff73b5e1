"""A linear layer, an MLP and attention, each written as one ``lookup``:

* linear:    ``x W + b = lookup(x, W) + b`` (the input itself is the key)
* MLP:       ``act(x W₁ + b₁) W₂ + b₂ = lookup(act(x W₁ + b₁), W₂) + b₂``
* attention: ``lookup(softmax(q kᵀ · s), v)`` (all from the context)
"""

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from .lookup import lookup, soft_keys


def _fits(layer: nn.Linear, x: Tensor, who: str) -> None:
    if x.shape[-1] != layer.in_features:
        raise ValueError(
            f"{who}: x {tuple(x.shape)} does not fit a layer with "
            f"in_features={layer.in_features}"
        )


def linear_as_lookup(layer: nn.Linear, x: Tensor) -> Tensor:
    """``nn.Linear`` read as a dictionary: the key is ``x`` (one weight per
    input feature), the values are the rows of ``Wᵀ`` (torch stores ``W``
    transposed):

        y = lookup(x, Wᵀ) + b = Σᵢ xᵢ · Wᵀ[i, :] + b
    """
    out = lookup(x, layer.weight.T)
    return out if layer.bias is None else out + layer.bias


@dataclass(frozen=True)
class MLPDictionary:
    """``Linear → act → Linear`` split into filters, key and values, in the
    book's one notation (torch stores both matrices transposed):

    filters = W₁ = ``first.weight.T``, column ``j`` per slot  (d_in, N)
    keys(x) = act(x W₁ + b₁)                                  (..., N)
    values  = W₂ = ``second.weight.T``, row ``j`` per slot     (N, d_out)
    read(x) = lookup(keys(x), values) + b₂ == mlp(x)
    """

    first: nn.Linear
    activation: Callable[[Tensor], Tensor]
    second: nn.Linear

    @property
    def filters(self) -> Tensor:
        """``W₁``, ``(d_in, N)``: column ``j`` is what slot ``j`` matches the
        input to."""
        return self.first.weight.T

    def keys(self, x: Tensor) -> Tensor:
        """The key of each input, from the parameters: ``act(x W₁ + b₁)``,
        one weight per slot."""
        _fits(self.first, x, "MLPDictionary.keys")
        scores = x @ self.filters
        if self.first.bias is not None:
            scores = scores + self.first.bias
        return self.activation(scores)

    @property
    def values(self) -> Tensor:
        """``W₂``, ``(N, d_out)``: row ``j`` is what slot ``j`` writes."""
        return self.second.weight.T

    @property
    def bias(self) -> Tensor:
        """The output bias ``b₂`` (zeros when the layer has none)."""
        b = self.second.bias
        return torch.zeros(self.second.out_features) if b is None else b

    def read(self, x: Tensor) -> Tensor:
        """``lookup(keys(x), values) + bias``: the MLP's output."""
        return lookup(self.keys(x), self.values) + self.bias


def as_dictionary(mlp: nn.Sequential) -> MLPDictionary:
    """Split ``nn.Sequential(nn.Linear, activation, nn.Linear)``; raises
    ``ValueError`` for another shape or layers that disagree on the slots."""
    parts = list(mlp)
    if len(parts) != 3 or not all(
        isinstance(parts[i], nn.Linear) for i in (0, 2)
    ):
        raise ValueError(
            "as_dictionary needs Sequential(Linear, activation, Linear), "
            f"got {[type(p).__name__ for p in parts]}"
        )
    first, second = parts[0], parts[2]
    if first.out_features != second.in_features:
        raise ValueError(
            f"as_dictionary: the layers disagree on the number of slots, "
            f"{tuple(first.weight.shape)} and {tuple(second.weight.shape)}"
        )
    return MLPDictionary(first, parts[1], second)


def _allowed(
    lq: int, lk: int, causal: bool, mask: Tensor | None
) -> Tensor | None:
    # where query t may read position s (None: everywhere)
    allowed = torch.ones(lq, lk, dtype=torch.bool).tril() if causal else None
    if mask is None:
        return allowed
    if mask.dtype != torch.bool or mask.shape[-2:] != (lq, lk):
        raise ValueError(
            f"attention: mask must be boolean (..., {lq}, {lk}), got "
            f"{mask.dtype} {tuple(mask.shape)}"
        )
    return mask if allowed is None else allowed & mask


def attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    *,
    causal: bool = False,
    scale: float | None = None,
    mask: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """Scaled dot-product attention as a lookup; returns ``(out, key)``:

        key = softmax(q kᵀ · scale),   out = lookup(key, v)

    ``q (..., L_q, d)``, ``k (..., L_k, d)``, ``v (..., L_k, d_v)``; batch and
    head dims broadcast. ``scale`` defaults to ``1/√d``. ``causal=True`` lets
    query ``t`` read positions ``s <= t``; ``mask`` (boolean) is ``True``
    where reading is allowed.
    """
    if min(q.ndim, k.ndim, v.ndim) < 2 or (
        q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]
    ):
        raise ValueError(
            f"attention needs q (..., L_q, d), k (..., L_k, d), "
            f"v (..., L_k, d_v); got q {tuple(q.shape)}, k {tuple(k.shape)}, "
            f"v {tuple(v.shape)}"
        )
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    # each query against each row of k
    scores = q @ k.transpose(-2, -1) * scale
    allowed = _allowed(q.shape[-2], k.shape[-2], causal, mask)
    if allowed is not None:
        scores = scores.masked_fill(~allowed, float("-inf"))
    key = soft_keys(scores)  # weights over positions; each row sums to 1
    return lookup(key, v), key
