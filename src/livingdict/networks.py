"""The networks the lessons train, MLPs of any depth and a tiny attention-only
transformer; every layer reads its values with ``lookup``."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Self

import torch
from torch import Tensor, nn

from .layers import attention
from .lookup import lookup
from .train import choose, one_label_per_row


class Abs(nn.Module):
    """``|x|``: non-linear, and keeps the size of a negative response."""

    def forward(self, x: Tensor) -> Tensor:
        return x.abs()


class Square(nn.Module):
    """``x²``: a polynomial, so not universal (Leshno et al. 1993)."""

    def forward(self, x: Tensor) -> Tensor:
        return x * x


#: Activation name → module. ``"none"`` leaves a linear stack.
ACTIVATIONS: dict[str, Callable[[], nn.Module]] = dict(
    none=nn.Identity, relu=nn.ReLU, tanh=nn.Tanh, abs=Abs, square=Square
)


def _sizes(sizes: Sequence[int]) -> list[int]:
    s = [int(v) for v in sizes]
    if len(s) < 2 or min(s) < 1:
        raise ValueError(f"sizes must be >= 2 widths >= 1, got {list(sizes)}")
    return s


def mlp(
    sizes: Sequence[int], activation: str = "relu", bias: bool = True
) -> nn.Sequential:
    """``Linear(s₀, s₁) → act → … → Linear(s_L, s_{L+1})``: ``L =
    len(sizes) − 2`` hidden layers. The essay's "three-layer MLP" is ``L = 1``
    ("depth 2" in the theory papers)."""
    sizes = _sizes(sizes)
    act = choose(ACTIVATIONS, activation, "activation")
    layers: list[nn.Module] = [nn.Linear(sizes[0], sizes[1], bias=bias)]
    for a, b in zip(sizes[1:-1], sizes[2:], strict=True):
        layers += [act(), nn.Linear(a, b, bias=bias)]
    return nn.Sequential(*layers)


@torch.no_grad()
def collapse(model: nn.Sequential) -> nn.Linear:
    """The one ``nn.Linear`` equal to a stack of linear layers (``nn.Identity``
    between them allowed), so ``rank W`` is at most the narrowest width:

        W = W_L ⋯ W₁,   b = W_L(⋯(W₂ b₁ + b₂)⋯) + b_L
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


class Ensemble(nn.Module):
    """``members`` independently initialised ``mlp(sizes, activation)`` run as
    one model, ``(n, d_in)`` → ``(n, d_out, S)``. Layer ``l`` of member ``s``:

        h ↦ lookup(act(h), W[l][s]) + b[l][s]    (the first reads with x)

    ``train.fit`` on ``targets(y)`` minimises the mean of the members' losses:
    with Adam each member trains as if alone.
    """

    def __init__(
        self, sizes: Sequence[int], members: int, activation: str = "relu"
    ):
        super().__init__()
        if members < 1:
            raise ValueError(f"Ensemble needs members >= 1, got {members}")
        nets = [mlp(sizes, activation)[::2] for _ in range(members)]
        self.sizes, self.activation = _sizes(sizes), activation
        self.act = ACTIVATIONS[activation]()
        layers = list(zip(*nets, strict=True))  # layer l of every member
        self.weight = nn.ParameterList(
            nn.Parameter(torch.stack([m.weight.detach().T for m in layer]))
            for layer in layers
        )
        self.bias = nn.ParameterList(
            nn.Parameter(torch.stack([m.bias.detach()[None] for m in layer]))
            for layer in layers
        )

    @property
    def members(self) -> int:
        """``S``, the number of members."""
        return self.weight[0].shape[0]

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim != 2 or x.shape[1] != self.sizes[0]:
            raise ValueError(
                f"Ensemble: x {tuple(x.shape)} is not (n, {self.sizes[0]})"
            )
        s, (n, d), w = self.members, x.shape, self.weight[0]
        # the first layer as one (n, d) × (d, S·w) lookup: faster than S
        # small products, the same numbers
        flat = w.permute(1, 0, 2).reshape(d, -1)
        h = lookup(x, flat).reshape(n, s, -1).transpose(0, 1) + self.bias[0]
        for w, b in zip(self.weight[1:], self.bias[1:], strict=True):
            h = lookup(self.act(h), w) + b
        return h.permute(1, 2, 0)

    def targets(self, y: Tensor) -> Tensor:
        """Labels ``(n,)`` repeated for every member: ``(n, S)``."""
        return y[:, None].expand(-1, self.members)

    @torch.no_grad()
    def accuracy(self, x: Tensor, y: Tensor) -> Tensor:
        """Accuracy of every member, shape ``(S,)``."""
        one_label_per_row(x, y, "Ensemble.accuracy")
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
    """Multi-head self-attention as a lookup (``layers.attention``), returning
    its maps too. ``qkv`` packs ``[W_Q; W_K; W_V]`` as torch's
    ``nn.MultiheadAttention.in_proj_weight`` does."""

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
    def from_multihead(cls, mha: nn.MultiheadAttention) -> Self:
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

    def _heads(self, t: Tensor) -> Tensor:
        """``(…, L, 3·H·d)`` → ``(3, …, H, L, d)``."""
        t = t.unflatten(-1, (3, self.n_heads, self.d_head))
        return t.movedim(-3, 0).transpose(-3, -2)

    def forward(
        self,
        x: Tensor,
        *,
        qk_source: Tensor | None = None,
        causal: bool = False,
        mask: Tensor | None = None,
    ) -> tuple[Tensor, Tensor]:
        """``x (B, L, d)`` → ``(out (B, L, d), maps (B, H, L, L))``; queries
        and filters (torch's K) come from ``qk_source`` (default ``x``),
        values from ``x``.
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
    (``stream[-1]``: after the last)."""

    logits: Tensor
    maps: list[Tensor]
    stream: list[Tensor]


class AttentionOnly(nn.Module):
    """A tiny causal attention-only transformer: embeddings and attention
    layers on a residual stream, no MLPs, no layer norm (Elhage et al. 2021):

        x⁰ = E[tokens] + P
        xˡ = xˡ⁻¹ + Σₕ lookup(softmax(QₕKₕᵀ/√d), xˡ⁻¹ W_Vʰ) W_Oʰ

    ``content_maps=False`` computes queries and filters from the positions only
    (every input gets the same maps); ``residual=False`` drops the skip
    connection; ``mask`` (boolean ``(L, L)``) limits where each position may
    look.
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
        mask: Tensor | None = None,
    ) -> None:
        super().__init__()
        if vocab < 2 or length < 1 or n_layers < 1:
            raise ValueError(
                f"AttentionOnly: need vocab >= 2, length >= 1, n_layers >= 1,"
                f" got {vocab}, {length}, {n_layers}"
            )
        shape = (length, length)
        if mask is not None and (mask.dtype, mask.shape) != (
            torch.bool,
            shape,
        ):
            raise ValueError(
                f"AttentionOnly: mask must be boolean {shape}, "
                f"got {mask.dtype} {tuple(mask.shape)}"
            )
        self.vocab, self.length, self.causal = vocab, length, causal
        self.residual, self.content_maps = residual, content_maps
        self.register_buffer("mask", mask)
        self.embed = nn.Embedding(vocab, d_model)
        self.pos = nn.Parameter(0.1 * torch.randn(length, d_model))
        self.blocks = nn.ModuleList(
            SelfAttention(d_model, n_heads, d_head) for _ in range(n_layers)
        )
        self.unembed = nn.Linear(d_model, vocab)

    def run(self, tokens: Tensor) -> Trace:
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

    def forward(self, tokens: Tensor) -> Tensor:
        """Logits at the last position, ``(B, vocab)``: the model's answer
        (what ``train.fit`` trains on a ``data.Batch``)."""
        return self.run(tokens).logits[:, -1]

    @torch.no_grad()
    def maps(self, tokens: Tensor) -> list[Tensor]:
        """The attention maps of every layer, without gradients."""
        return self.run(tokens).maps
