"""A tiny attention-only transformer built on ``layers.attention``; it shows its maps.

    x⁰ = E[tokens] + P                          (token and position embeddings)
    xˡ = xˡ⁻¹ + Σₕ Aˡʰ (xˡ⁻¹ W_Vˡʰ) W_Oˡʰ      (one attention layer, with residual)
    Aˡʰ = softmax(xˡ⁻¹ W_Qˡʰ (xˡ⁻¹ W_Kˡʰ)ᵀ / √d_head)   (the key: an L×L map)
    logits = x^L U                              (read at every position)

No MLPs and no layer norm (as the attention-only models of Elhage et al. 2021), so
every step between positions is an attention map. ``AttentionOnly.run`` returns the
logits, the maps ``Aˡ`` of every layer and the residual stream ``xˡ`` after every
layer; ``forward`` returns the logits at the last position, so ``train.fit`` trains it
on a ``tasks.Batch`` directly (``fit(model, batch.tokens, batch.targets, ...)``).

Options: ``content_maps=False`` computes queries and keys from the position
embeddings only, so every map is the same for every input (a fixed mixing of
positions); ``residual=False`` drops the skip connection; ``mask`` (a boolean
``(L, L)``, e.g. ``maps.window_mask``) restricts where each position may look.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from .layers import attention

__all__ = ["SelfAttention", "AttentionOnly", "Trace"]


class SelfAttention(nn.Module):
    """Multi-head self-attention as a lookup: ``(out, weights)`` with weights ``(B, H, L, L)``.

    ``qkv`` packs ``[W_Q; W_K; W_V]`` in the layout of ``nn.MultiheadAttention``'s
    ``in_proj_weight`` (heads contiguous inside each block), so ``from_multihead``
    copies a torch module's weights across unchanged.
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int = 1,
        d_head: int | None = None,
        *,
        bias: bool = False,
    ) -> None:
        super().__init__()
        if d_model < 1 or n_heads < 1:
            raise ValueError(
                f"SelfAttention: need d_model, n_heads >= 1, got {d_model}, {n_heads}"
            )
        self.n_heads = n_heads
        self.d_head = d_model // n_heads if d_head is None else d_head
        if self.d_head < 1:
            raise ValueError(
                f"SelfAttention: d_head must be >= 1, got {self.d_head}"
            )
        self.qkv = nn.Linear(d_model, 3 * n_heads * self.d_head, bias=bias)
        self.out = nn.Linear(n_heads * self.d_head, d_model, bias=bias)

    @classmethod
    def from_multihead(cls, mha: nn.MultiheadAttention) -> SelfAttention:
        """A copy of ``mha`` (same weights, biases and heads) that returns per-head maps."""
        if not mha._qkv_same_embed_dim or mha.bias_k is not None:
            raise ValueError(
                "from_multihead: needs kdim = vdim = embed_dim and no add_bias_kv"
            )
        layer = cls(
            mha.embed_dim, mha.num_heads, bias=mha.in_proj_bias is not None
        )
        with torch.no_grad():
            layer.qkv.weight.copy_(mha.in_proj_weight)
            layer.out.weight.copy_(mha.out_proj.weight)
            if mha.in_proj_bias is not None:
                layer.qkv.bias.copy_(mha.in_proj_bias)
                layer.out.bias.copy_(mha.out_proj.bias)
        return layer

    def forward(
        self,
        x: torch.Tensor,
        *,
        qk_source: torch.Tensor | None = None,
        causal: bool = False,
        mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``x (B, L, d_model)`` → ``(out (B, L, d_model), weights (B, H, L, L))``.

        Queries and keys come from ``qk_source`` (default ``x``; broadcastable), values
        from ``x``. ``causal`` and ``mask`` are passed to ``layers.attention``.
        """
        if x.ndim != 3 or x.shape[-1] != self.qkv.in_features:
            raise ValueError(
                f"SelfAttention: x must be (batch, length, {self.qkv.in_features}), "
                f"got {tuple(x.shape)}"
            )
        b, n, _ = x.shape
        split = lambda t: t.unflatten(
            -1, (3, self.n_heads, self.d_head)
        ).movedim(-3, 0)  # noqa: E731
        q, k, v = split(self.qkv(x)).transpose(
            -3, -2
        )  # each (B, H, L, d_head)
        if qk_source is not None:
            q, k, _ = split(self.qkv(qk_source)).transpose(-3, -2)
        out, weights = attention(q, k, v, causal=causal, mask=mask)
        weights = weights.expand(b, self.n_heads, n, n)
        return self.out(out.transpose(1, 2).reshape(b, n, -1)), weights


@dataclass(frozen=True)
class Trace:
    """What a forward pass did: ``logits (B, L, vocab)``, ``maps[l] (B, H, L, L)`` for
    each layer, ``stream[l] (B, L, d_model)`` the residual stream before layer ``l``
    (``stream[-1]`` is the final one, ``len(stream) = n_layers + 1``)."""

    logits: torch.Tensor
    maps: list[torch.Tensor]
    stream: list[torch.Tensor]


class AttentionOnly(nn.Module):
    """A tiny causal attention-only transformer over ``vocab`` tokens and ``length`` positions.

    ``AttentionOnly(vocab, length, n_layers=2, n_heads=1, d_model=32, d_head=16)``;
    ``forward(tokens)`` gives the last position's logits ``(B, vocab)``, ``run(tokens)``
    a ``Trace`` (all logits, every map, the residual stream). Raises ``ValueError`` for
    a ``mask`` that is not boolean ``(length, length)`` or tokens of the wrong shape.
    """

    def __init__(
        self,
        vocab: int,
        length: int,
        *,
        n_layers: int = 2,
        n_heads: int = 1,
        d_model: int = 32,
        d_head: int | None = 16,
        causal: bool = True,
        residual: bool = True,
        content_maps: bool = True,
        mask: torch.Tensor | None = None,
    ) -> None:
        super().__init__()
        if vocab < 2 or length < 1 or n_layers < 1:
            raise ValueError(
                f"AttentionOnly: need vocab >= 2, length >= 1, n_layers >= 1, got "
                f"{vocab}, {length}, {n_layers}"
            )
        if mask is not None and (
            mask.dtype != torch.bool or tuple(mask.shape) != (length, length)
        ):
            raise ValueError(
                f"AttentionOnly: mask must be boolean ({length}, {length}), got "
                f"{mask.dtype} {tuple(mask.shape)}"
            )
        self.vocab, self.length = vocab, length
        self.causal, self.residual, self.content_maps = (
            causal,
            residual,
            content_maps,
        )
        self.register_buffer("mask", mask)
        self.embed = nn.Embedding(vocab, d_model)
        self.pos = nn.Parameter(0.1 * torch.randn(length, d_model))
        self.blocks = nn.ModuleList(
            SelfAttention(d_model, n_heads, d_head) for _ in range(n_layers)
        )
        self.unembed = nn.Linear(d_model, vocab)

    def run(self, tokens: torch.Tensor) -> Trace:
        """Embed, apply every layer (keeping its maps and the stream), unembed."""
        if tokens.ndim != 2 or tokens.shape[1] != self.length:
            raise ValueError(
                f"AttentionOnly: tokens must be (batch, {self.length}), got {tuple(tokens.shape)}"
            )
        x = self.embed(tokens) + self.pos
        maps, stream = [], [x]
        for block in self.blocks:
            qk = None if self.content_maps else self.pos
            a, w = block(x, qk_source=qk, causal=self.causal, mask=self.mask)
            x = x + a if self.residual else a
            maps.append(w)
            stream.append(x)
        return Trace(self.unembed(x), maps, stream)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits at the last position, ``(B, vocab)``: the model's answer."""
        return self.run(tokens).logits[:, -1]

    @torch.no_grad()
    def maps(self, tokens: torch.Tensor) -> list[torch.Tensor]:
        """The attention maps of every layer, ``[(B, H, L, L), …]``, without gradients."""
        return self.run(tokens).maps
