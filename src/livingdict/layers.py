"""A linear layer, an MLP and attention, each written as one ``lookup``.

* linear:    ``y = x Wᵀ + b = lookup(x, Wᵀ) + b`` — the input itself is the key over
  the rows of ``Wᵀ`` (one row per input feature).
* MLP:       ``y = act(x W₁ᵀ + b₁) W₂ᵀ + b₂ = lookup(keys(x), values) + bias`` — the
  hidden activation ``h = act(x W₁ᵀ + b₁)`` is the key, the rows of ``W₂ᵀ`` (one per
  hidden unit) are the values.
* attention: ``out = softmax(q kᵀ · s) v = lookup(soft_keys(q kᵀ · s), v)`` — the key is
  an ``L_q × L_k`` map over positions, the values are computed from the context.

Weights follow torch's ``nn.Linear`` layout ``(out_features, in_features)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from .lookup import lookup, soft_keys


def linear_as_lookup(layer: nn.Linear, x: torch.Tensor) -> torch.Tensor:
    """``nn.Linear`` read as a dictionary: ``lookup(x, Wᵀ) + b``.

    The key is ``x`` itself (one coefficient per input feature), the values are the
    rows of ``Wᵀ``: ``y = Σᵢ xᵢ · Wᵀ[i, :] + b``.
    """
    if x.shape[-1] != layer.in_features:
        raise ValueError(
            f"linear_as_lookup: x {tuple(x.shape)} does not fit a layer with "
            f"in_features={layer.in_features}"
        )
    out = lookup(x, layer.weight.T)
    return out if layer.bias is None else out + layer.bias


@dataclass(frozen=True)
class MLPDictionary:
    """A one-hidden-layer MLP ``Linear → act → Linear`` split into key and value.

    ``keys(x) = act(x W₁ᵀ + b₁)`` (shape ``(..., hidden)``), ``values = W₂ᵀ``
    (shape ``(hidden, out)``), ``bias = b₂``, so that
    ``read(x) = lookup(keys(x), values) + bias`` equals ``mlp(x)``.
    """

    first: nn.Linear
    activation: Callable[[torch.Tensor], torch.Tensor]
    second: nn.Linear

    def keys(self, x: torch.Tensor) -> torch.Tensor:
        """The addressing coefficients ``h = act(x W₁ᵀ + b₁)``, one per hidden unit."""
        if x.shape[-1] != self.first.in_features:
            raise ValueError(
                f"MLPDictionary.keys: x {tuple(x.shape)} does not fit in_features="
                f"{self.first.in_features}"
            )
        return self.activation(self.first(x))

    @property
    def values(self) -> torch.Tensor:
        """The value rows ``W₂ᵀ``: row ``j`` is what hidden unit ``j`` writes."""
        return self.second.weight.T

    @property
    def bias(self) -> torch.Tensor:
        """The output bias ``b₂`` (zeros when the layer has none)."""
        b = self.second.bias
        return torch.zeros(self.second.out_features) if b is None else b

    def read(self, x: torch.Tensor) -> torch.Tensor:
        """``lookup(keys(x), values) + bias`` — the MLP's output."""
        return lookup(self.keys(x), self.values) + self.bias


def as_dictionary(mlp: nn.Sequential) -> MLPDictionary:
    """Split ``nn.Sequential(nn.Linear, activation, nn.Linear)`` into key and value.

    Raises ``ValueError`` when the module is not of that shape or the hidden
    widths of the two linear layers differ.
    """
    parts = list(mlp)
    if (
        len(parts) != 3
        or not isinstance(parts[0], nn.Linear)
        or not isinstance(parts[2], nn.Linear)
    ):
        raise ValueError(
            f"as_dictionary needs Sequential(Linear, activation, Linear), got "
            f"{[type(p).__name__ for p in parts]}"
        )
    if parts[0].out_features != parts[2].in_features:
        raise ValueError(
            f"as_dictionary: hidden widths differ, first layer {tuple(parts[0].weight.shape)}"
            f" and second layer {tuple(parts[2].weight.shape)}"
        )
    return MLPDictionary(parts[0], parts[1], parts[2])


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    causal: bool = False,
    scale: float | None = None,
    mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Scaled dot-product attention as a lookup; returns ``(out, weights)``.

        weights = softmax(q kᵀ · scale),   out = lookup(weights, v) = weights @ v

    Shapes ``q (..., L_q, d)``, ``k (..., L_k, d)``, ``v (..., L_k, d_v)``; batch and
    head dims broadcast. ``scale`` defaults to ``1/√d``. ``causal=True`` lets query
    ``t`` see keys ``s <= t`` (top-left aligned, as torch's ``is_causal``). ``mask`` is
    a boolean ``(L_q, L_k)`` (or broadcastable) tensor, ``True`` where attending is
    allowed. Raises ``ValueError`` naming the shapes when they do not fit.
    """
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2:
        raise ValueError(
            f"attention needs q, k, v of at least 2 dims, got q {tuple(q.shape)}, "
            f"k {tuple(k.shape)}, v {tuple(v.shape)}"
        )
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"attention: q {tuple(q.shape)} and k {tuple(k.shape)} must share the last "
            f"dim, k and v {tuple(v.shape)} the length"
        )
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    scores = (q @ k.transpose(-2, -1)) * scale
    lq, lk = q.shape[-2], k.shape[-2]
    allowed = None
    if causal:
        allowed = torch.ones(lq, lk, dtype=torch.bool, device=q.device).tril()
    if mask is not None:
        if mask.dtype != torch.bool:
            raise ValueError(
                f"attention: mask must be boolean, got {mask.dtype}"
            )
        if mask.shape[-2:] != (lq, lk):
            raise ValueError(
                f"attention: mask {tuple(mask.shape)} does not fit scores ({lq}, {lk})"
            )
        allowed = mask if allowed is None else allowed & mask
    if allowed is not None:
        scores = scores.masked_fill(~allowed, float("-inf"))
    weights = soft_keys(scores)
    return lookup(weights, v), weights
