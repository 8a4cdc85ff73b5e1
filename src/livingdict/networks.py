"""The networks the lessons train: MLPs of any depth and a tiny attention-only
transformer. Every layer reads its values with ``lookup``.

MLPs
  * ``mlp(sizes, activation)`` — ``Linear → act → … → Linear``; ``sizes`` lists
    ``[d_in, h₁, …, h_L, d_out]``, so ``L = len(sizes) − 2`` hidden layers. The
    essay's "three-layer MLP" is ``L = 1`` ("depth 2" in the theory papers).
  * ``Ensemble`` — ``S`` independently initialised copies trained side by side
    (one batched product per layer): the spread over seeds in one run.
  * ``collapse`` — the one ``nn.Linear`` a stack of linear layers equals.
Attention
  * ``SelfAttention`` — multi-head self-attention, returning its maps.
  * ``AttentionOnly`` — embeddings, attention layers with residual stream, no
    MLPs and no layer norm (as in Elhage et al. 2021):

        x⁰ = E[tokens] + P
        xˡ = xˡ⁻¹ + Σₕ lookup(softmax(QₕKₕᵀ/√d), xˡ⁻¹ W_Vʰ) W_Oʰ
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import nn

from .layers import attention
from .lookup import lookup


class Abs(nn.Module):
    """``|x|``: non-linear, and keeps the size of a negative response."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.abs()


class Square(nn.Module):
    """``x²``: a polynomial, so not universal (Leshno et al. 1993)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * x


#: Activation name → module. ``"none"`` leaves a linear stack.
ACTIVATIONS: dict[str, Callable[[], nn.Module]] = {
    "none": nn.Identity,
    "relu": nn.ReLU,
    "tanh": nn.Tanh,
    "abs": Abs,
    "square": Square,
}


def _sizes(sizes: Sequence[int]) -> list[int]:
    s = [int(v) for v in sizes]
    if len(s) < 2 or min(s) < 1:
        raise ValueError(
            f"sizes must list >= 2 positive widths [d_in, ..., d_out], "
            f"got {list(sizes)}"
        )
    return s


def mlp(
    sizes: Sequence[int], activation: str = "relu", bias: bool = True
) -> nn.Sequential:
    """``Linear(s₀, s₁) → act → … → Linear(s_L, s_{L+1})``.

    Raises ``ValueError`` for fewer than two sizes, a width below 1 or an
    unknown activation.
    """
    sizes = _sizes(sizes)
    if activation not in ACTIVATIONS:
        raise ValueError(
            f"unknown activation {activation!r}; "
            f"choose from {sorted(ACTIVATIONS)}"
        )
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        if i:
            layers.append(ACTIVATIONS[activation]())
        layers.append(nn.Linear(a, b, bias=bias))
    return nn.Sequential(*layers)


def n_params(sizes: Sequence[int], bias: bool = True) -> int:
    """Weights of ``mlp(sizes)``: ``Σₗ sₗ·sₗ₊₁ (+ sₗ₊₁ with biases)``."""
    s = _sizes(sizes)
    return sum(a * b + b * bias for a, b in zip(s[:-1], s[1:], strict=True))


def width_for_params(
    d_in: int, d_out: int, hidden_layers: int, budget: int
) -> int:
    """The width ``w`` whose ``mlp([d_in] + [w] * hidden_layers + [d_out])``
    has the parameter count closest to ``budget`` (ties: the smaller ``w``)."""
    if min(d_in, d_out, hidden_layers, budget) < 1:
        raise ValueError(
            f"width_for_params needs positive sizes, got d_in={d_in}, "
            f"d_out={d_out}, hidden_layers={hidden_layers}, budget={budget}"
        )

    def count(w: int) -> int:
        return n_params([d_in, *[w] * hidden_layers, d_out])

    w = 1
    while count(w + 1) <= budget:
        w += 1
    return w + 1 if abs(count(w + 1) - budget) < abs(count(w) - budget) else w


@torch.no_grad()
def collapse(model: nn.Sequential) -> nn.Linear:
    """The one ``nn.Linear`` equal to a stack of linear layers:

        W = W_L ⋯ W₁,   b = W_L(⋯(W₂ b₁ + b₂)⋯) + b_L

    so ``rank W`` is at most the narrowest width. ``nn.Identity`` between
    layers is allowed; anything else raises ``ValueError``.
    """
    linears = [m for m in model if not isinstance(m, nn.Identity)]
    if not linears or not all(isinstance(m, nn.Linear) for m in linears):
        raise ValueError(
            "collapse needs a stack of nn.Linear, got "
            f"{[type(m).__name__ for m in model]}"
        )
    w = torch.eye(linears[0].in_features)
    b = torch.zeros(linears[0].in_features)
    for layer in linears:
        if layer.in_features != w.shape[0]:
            raise ValueError(
                f"collapse: layer {tuple(layer.weight.shape)} does not "
                f"chain onto width {w.shape[0]}"
            )
        w = layer.weight @ w
        b = layer.weight @ b + (0 if layer.bias is None else layer.bias)
    out = nn.Linear(w.shape[1], w.shape[0])
    out.weight.copy_(w)
    out.bias.copy_(b)
    return out


def init_scale(model: nn.Module, scale: float) -> nn.Module:
    """Multiply every weight (not bias) by ``scale`` in place: a small
    ``scale`` is the "small initialisation" of Saxe et al. (2014)."""
    if not math.isfinite(scale) or scale <= 0:
        raise ValueError(f"init_scale: scale must be > 0, got {scale}")
    with torch.no_grad():
        for name, p in model.named_parameters():
            if not name.endswith("bias"):
                p.mul_(scale)
    return model


class Ensemble(nn.Module):
    """``members`` independently initialised ``mlp(sizes, activation)`` run as
    one model. Layer ``l`` of member ``s`` is a lookup:

        h ↦ lookup(act(h), W[l][s]) + b[l][s]

    (the first layer reads with ``x`` itself). ``forward`` maps ``(n, d_in)``
    to ``(n, d_out, S)``, the layout ``F.cross_entropy`` reads with targets
    ``targets(y)`` of shape ``(n, S)``, so ``train.fit`` minimises the mean of
    the members' losses; with Adam each member trains as if alone. Member
    ``s`` starts as the ``s``-th ``mlp`` drawn from torch's generator.
    """

    def __init__(
        self, sizes: Sequence[int], members: int, activation: str = "relu"
    ):
        super().__init__()
        if members < 1:
            raise ValueError(f"Ensemble needs members >= 1, got {members}")
        nets = [mlp(sizes, activation) for _ in range(members)]
        self.sizes, self.activation = _sizes(sizes), activation
        self.act = ACTIVATIONS[activation]()
        lin = [[m for m in net if isinstance(m, nn.Linear)] for net in nets]
        depth = len(self.sizes) - 1
        self.weight = nn.ParameterList(
            nn.Parameter(torch.stack([ls[i].weight.detach().T for ls in lin]))
            for i in range(depth)
        )
        self.bias = nn.ParameterList(
            nn.Parameter(
                torch.stack([ls[i].bias.detach()[None] for ls in lin])
            )
            for i in range(depth)
        )

    @property
    def members(self) -> int:
        return self.weight[0].shape[0]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.ndim != 2 or x.shape[1] != self.sizes[0]:
            raise ValueError(
                f"Ensemble: x {tuple(x.shape)} is not (n, {self.sizes[0]})"
            )
        s, (n, d), w = self.members, x.shape, self.weight[0]
        # the first layer as one (n, d) × (d, S·w) lookup: faster than S small
        # products, the same numbers
        flat = w.permute(1, 0, 2).reshape(d, -1)
        h = lookup(x, flat).reshape(n, s, -1).transpose(0, 1) + self.bias[0]
        for w, b in zip(self.weight[1:], self.bias[1:], strict=True):
            h = lookup(self.act(h), w) + b
        return h.permute(1, 2, 0)

    def targets(self, y: torch.Tensor) -> torch.Tensor:
        """Labels ``(n,)`` repeated for every member: ``(n, S)``."""
        return y[:, None].expand(-1, self.members)

    @torch.no_grad()
    def accuracy(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Accuracy of every member, shape ``(S,)``."""
        if y.shape != (x.shape[0],):
            raise ValueError(
                f"Ensemble.accuracy: x {tuple(x.shape)} and y "
                f"{tuple(y.shape)} do not match"
            )
        return (self(x).argmax(1) == y[:, None]).float().mean(0)

    @torch.no_grad()
    def member(self, s: int) -> nn.Sequential:
        """Member ``s`` as an ordinary ``mlp`` with its current weights."""
        if not 0 <= s < self.members:
            raise ValueError(
                f"Ensemble.member: index {s} outside [0, {self.members})"
            )
        net = mlp(self.sizes, self.activation)
        for layer, w, b in zip(net[::2], self.weight, self.bias, strict=True):
            layer.weight.copy_(w[s].T)
            layer.bias.copy_(b[s, 0])
        return net


class SelfAttention(nn.Module):
    """Multi-head self-attention as a lookup; returns ``(out, maps)``, maps of
    shape ``(B, H, L, L)``. ``qkv`` packs ``[W_Q; W_K; W_V]`` as
    ``nn.MultiheadAttention.in_proj_weight`` does, so ``from_multihead``
    copies a torch module's weights unchanged."""

    def __init__(
        self,
        d_model: int,
        n_heads: int = 1,
        d_head: int | None = None,
        *,
        bias: bool = False,
    ) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.d_head = d_model // max(n_heads, 1) if d_head is None else d_head
        if d_model < 1 or n_heads < 1 or self.d_head < 1:
            raise ValueError(
                f"SelfAttention: need d_model, n_heads, d_head >= 1, got "
                f"{d_model}, {n_heads}, {self.d_head}"
            )
        self.qkv = nn.Linear(d_model, 3 * n_heads * self.d_head, bias=bias)
        self.out = nn.Linear(n_heads * self.d_head, d_model, bias=bias)

    @classmethod
    def from_multihead(cls, mha: nn.MultiheadAttention) -> SelfAttention:
        """A copy of ``mha`` (same weights and heads) that returns its maps."""
        if not mha._qkv_same_embed_dim or mha.bias_k is not None:
            raise ValueError(
                "from_multihead: needs kdim = vdim = embed_dim, no add_bias_kv"
            )
        has_bias = mha.in_proj_bias is not None
        layer = cls(mha.embed_dim, mha.num_heads, bias=has_bias)
        with torch.no_grad():
            layer.qkv.weight.copy_(mha.in_proj_weight)
            layer.out.weight.copy_(mha.out_proj.weight)
            if has_bias:
                layer.qkv.bias.copy_(mha.in_proj_bias)
                layer.out.bias.copy_(mha.out_proj.bias)
        return layer

    def _heads(self, t: torch.Tensor) -> torch.Tensor:
        """``(…, L, 3·H·d)`` → ``(3, …, H, L, d)``."""
        t = t.unflatten(-1, (3, self.n_heads, self.d_head))
        return t.movedim(-3, 0).transpose(-3, -2)

    def forward(
        self,
        x: torch.Tensor,
        *,
        qk_source: torch.Tensor | None = None,
        causal: bool = False,
        mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``x (B, L, d)`` → ``(out (B, L, d), maps (B, H, L, L))``.

        Queries and keys come from ``qk_source`` (default ``x``), values from
        ``x``; ``causal`` and ``mask`` go to ``layers.attention``.
        """
        if x.ndim != 3 or x.shape[-1] != self.qkv.in_features:
            raise ValueError(
                f"SelfAttention: x must be (batch, length, "
                f"{self.qkv.in_features}), got {tuple(x.shape)}"
            )
        b, n, _ = x.shape
        q, k, v = self._heads(self.qkv(x))
        if qk_source is not None:
            q, k, _ = self._heads(self.qkv(qk_source))
        out, maps = attention(q, k, v, causal=causal, mask=mask)
        maps = maps.expand(b, self.n_heads, n, n)
        return self.out(out.transpose(1, 2).reshape(b, n, -1)), maps


@dataclass(frozen=True)
class Trace:
    """One forward pass: ``logits (B, L, vocab)``, ``maps[l] (B, H, L, L)``
    and ``stream[l] (B, L, d_model)``, the residual stream before layer ``l``
    (``stream[-1]`` is the final one)."""

    logits: torch.Tensor
    maps: list[torch.Tensor]
    stream: list[torch.Tensor]


class AttentionOnly(nn.Module):
    """A tiny causal attention-only transformer.

    ``forward(tokens)`` gives the last position's logits ``(B, vocab)`` (so
    ``train.fit`` trains it on a ``data.Batch``); ``run(tokens)`` a ``Trace``.
    Options: ``content_maps=False`` computes queries and keys from the
    positions only (every input gets the same maps); ``residual=False`` drops
    the skip connection; ``mask`` (boolean ``(L, L)``) limits where each
    position may look.
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
                f"AttentionOnly: need vocab >= 2, length >= 1, n_layers >= 1,"
                f" got {vocab}, {length}, {n_layers}"
            )
        if mask is not None and (
            mask.dtype != torch.bool or tuple(mask.shape) != (length, length)
        ):
            raise ValueError(
                f"AttentionOnly: mask must be boolean ({length}, {length}), "
                f"got {mask.dtype} {tuple(mask.shape)}"
            )
        self.vocab, self.length = vocab, length
        self.causal, self.residual = causal, residual
        self.content_maps = content_maps
        self.register_buffer("mask", mask)
        self.embed = nn.Embedding(vocab, d_model)
        self.pos = nn.Parameter(0.1 * torch.randn(length, d_model))
        self.blocks = nn.ModuleList(
            SelfAttention(d_model, n_heads, d_head) for _ in range(n_layers)
        )
        self.unembed = nn.Linear(d_model, vocab)

    def run(self, tokens: torch.Tensor) -> Trace:
        """Embed, apply every layer (keeping maps and stream), unembed."""
        if tokens.ndim != 2 or tokens.shape[1] != self.length:
            raise ValueError(
                f"AttentionOnly: tokens must be (batch, {self.length}), "
                f"got {tuple(tokens.shape)}"
            )
        x = self.embed(tokens) + self.pos
        maps, stream = [], [x]
        qk = None if self.content_maps else self.pos
        for block in self.blocks:
            a, m = block(x, qk_source=qk, causal=self.causal, mask=self.mask)
            x = x + a if self.residual else a
            maps.append(m)
            stream.append(x)
        return Trace(self.unembed(x), maps, stream)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits at the last position, ``(B, vocab)``: the model's answer."""
        return self.run(tokens).logits[:, -1]

    @torch.no_grad()
    def maps(self, tokens: torch.Tensor) -> list[torch.Tensor]:
        """The attention maps of every layer, without gradients."""
        return self.run(tokens).maps
