"""MLPs of a given depth, their collapse without activation, and seed ensembles.

* ``mlp(sizes, activation)`` builds ``Linear → act → … → Linear``; ``sizes`` lists the
  widths ``[d_in, h₁, …, h_L, d_out]``, so ``L = len(sizes) − 2`` hidden layers. The
  essay's "three-layer MLP" is ``L = 1`` ("depth 2" in the theory papers).
* ``width_for_params`` picks the hidden width that matches a parameter budget.
* ``collapse`` turns a stack of linear layers into the one ``nn.Linear`` it equals.
* ``Ensemble`` trains ``S`` independently initialised copies of one MLP side by side
  (one batched product per layer), so a lesson gets the spread over seeds in one run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import torch
from torch import nn


class Abs(nn.Module):
    """``|x|``: non-linear, keeps the size of a negative response (flips its sign)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.abs()


class Square(nn.Module):
    """``x²``: a polynomial activation (Leshno et al. 1993: not universal)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * x


#: Activation name → module factory. ``"none"`` is the identity (a linear stack).
ACTIVATIONS: dict[str, Callable[[], nn.Module]] = {
    "none": nn.Identity,
    "relu": nn.ReLU,
    "tanh": nn.Tanh,
    "abs": Abs,
    "square": Square,
}


def _check_sizes(sizes: Sequence[int]) -> list[int]:
    sizes = [int(s) for s in sizes]
    if len(sizes) < 2 or min(sizes) < 1:
        raise ValueError(
            f"sizes must list >= 2 positive widths [d_in, ..., d_out], got {sizes}"
        )
    return sizes


def mlp(
    sizes: Sequence[int], activation: str = "relu", bias: bool = True
) -> nn.Sequential:
    """``Linear(s₀, s₁) → act → Linear(s₁, s₂) → … → Linear(s_{L}, s_{L+1})``.

    ``y = W_{L+1} act(… act(W₁ x + b₁) …) + b_{L+1}``; the activation sits between
    every two linear layers (``"none"`` puts ``nn.Identity`` there). Raises
    ``ValueError`` for fewer than two sizes, a non-positive width or an unknown name.
    """
    sizes = _check_sizes(sizes)
    if activation not in ACTIVATIONS:
        raise ValueError(
            f"unknown activation {activation!r}; choose from {sorted(ACTIVATIONS)}"
        )
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        if i:
            layers.append(ACTIVATIONS[activation]())
        layers.append(nn.Linear(a, b, bias=bias))
    return nn.Sequential(*layers)


def n_params(sizes: Sequence[int], bias: bool = True) -> int:
    """Number of weights of ``mlp(sizes)``: ``Σₗ sₗ·sₗ₊₁ (+ sₗ₊₁ with biases)``."""
    sizes = _check_sizes(sizes)
    return sum(
        a * b + (b if bias else 0)
        for a, b in zip(sizes[:-1], sizes[1:], strict=True)
    )


def width_for_params(
    d_in: int, d_out: int, hidden_layers: int, budget: int
) -> int:
    """The width ``w`` whose ``mlp([d_in] + [w]·L + [d_out])`` has the parameter count
    closest to ``budget`` (``L = hidden_layers >= 1``; ties go to the smaller ``w``)."""
    if hidden_layers < 1 or budget < 1 or d_in < 1 or d_out < 1:
        raise ValueError(
            f"width_for_params needs positive d_in, d_out, budget and hidden_layers >= 1, got "
            f"d_in={d_in}, d_out={d_out}, hidden_layers={hidden_layers}, budget={budget}"
        )
    count = lambda w: n_params([d_in, *[w] * hidden_layers, d_out])  # noqa: E731
    w = 1
    while count(w + 1) <= budget:
        w += 1
    return w + 1 if abs(count(w + 1) - budget) < abs(count(w) - budget) else w


@torch.no_grad()
def collapse(model: nn.Sequential) -> nn.Linear:
    """The single ``nn.Linear`` equal to a stack of linear layers (no activation).

    ``W = W_L ⋯ W₂ W₁`` and ``b = W_L(⋯(W₂ b₁ + b₂)⋯) + b_L``, so
    ``collapse(model)(x) == model(x)``; ``rank W <= min`` of the layer widths.
    ``nn.Identity`` between layers is allowed; anything else raises ``ValueError``.
    """
    linears = [m for m in model if not isinstance(m, nn.Identity)]
    if not linears or not all(isinstance(m, nn.Linear) for m in linears):
        raise ValueError(
            f"collapse needs a stack of nn.Linear, got {[type(m).__name__ for m in model]}"
        )
    w = torch.eye(linears[0].in_features)
    b = torch.zeros(linears[0].in_features)
    for layer in linears:
        if layer.in_features != w.shape[0]:
            raise ValueError(
                f"collapse: layer {tuple(layer.weight.shape)} does not chain onto width "
                f"{w.shape[0]}"
            )
        w = layer.weight @ w
        b = layer.weight @ b + (0 if layer.bias is None else layer.bias)
    out = nn.Linear(w.shape[1], w.shape[0])
    out.weight.copy_(w)
    out.bias.copy_(b)
    return out


class Ensemble(nn.Module):
    """``members`` independently initialised ``mlp(sizes, activation)``, run as one.

    Layer ``l`` of member ``s`` computes ``h ↦ h W[l][s] + b[l][s]`` (one batched
    product). ``forward(x)`` maps ``(n, d_in)`` to ``(n, d_out, S)`` — the layout
    ``F.cross_entropy`` reads with targets ``targets(y)`` of shape ``(n, S)`` — so
    ``train.fit`` minimises ``(1/S) Σ_s loss_s``; the members share no weights, and
    Adam's per-weight update makes each one train as if alone. Member ``s`` starts
    as ``mlp`` initialised by the ``s``-th draw of torch's global generator.
    """

    def __init__(
        self, sizes: Sequence[int], members: int, activation: str = "relu"
    ):
        super().__init__()
        if members < 1:
            raise ValueError(f"Ensemble needs members >= 1, got {members}")
        nets = [mlp(sizes, activation) for _ in range(members)]
        self.sizes, self.activation = _check_sizes(sizes), activation
        self.act = ACTIVATIONS[activation]()
        lin = [[m for m in net if isinstance(m, nn.Linear)] for net in nets]
        self.weight = nn.ParameterList(
            nn.Parameter(torch.stack([ls[i].weight.detach().T for ls in lin]))
            for i in range(len(self.sizes) - 1)
        )
        self.bias = nn.ParameterList(
            nn.Parameter(
                torch.stack([ls[i].bias.detach()[None] for ls in lin])
            )
            for i in range(len(self.sizes) - 1)
        )

    @property
    def members(self) -> int:
        return self.weight[0].shape[0]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.ndim != 2 or x.shape[1] != self.sizes[0]:
            raise ValueError(
                f"Ensemble: x {tuple(x.shape)} is not (n, {self.sizes[0]})"
            )
        s, (n, d), w0 = self.members, x.shape, self.weight[0].shape[2]
        if (
            w0 <= 16
        ):  # narrow first layer: one (n, d) × (d, S·w) product is faster than bmm
            flat = self.weight[0].permute(1, 0, 2).reshape(d, s * w0)
            h = (x @ flat).reshape(n, s, w0).permute(1, 0, 2) + self.bias[0]
        else:
            h = torch.baddbmm(self.bias[0], x.expand(s, n, d), self.weight[0])
        for w, b in zip(self.weight[1:], self.bias[1:], strict=True):
            h = torch.baddbmm(b, self.act(h), w)
        return h.permute(1, 2, 0)

    def targets(self, y: torch.Tensor) -> torch.Tensor:
        """Labels ``(n,)`` repeated for every member: ``(n, S)``."""
        return y[:, None].expand(-1, self.members)

    @torch.no_grad()
    def accuracy(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Accuracy of every member, shape ``(S,)``."""
        if y.shape != (x.shape[0],):
            raise ValueError(
                f"Ensemble.accuracy: x {tuple(x.shape)}, y {tuple(y.shape)}"
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


def init_scale(model: nn.Module, scale: float) -> nn.Module:
    """Multiply every weight (not bias) of ``model`` by ``scale``, in place; returns it.
    A small ``scale`` is the "small initialisation" of Saxe et al. (2014)."""
    if not math.isfinite(scale) or scale <= 0:
        raise ValueError(
            f"init_scale: scale must be finite and > 0, got {scale}"
        )
    with torch.no_grad():
        for name, p in model.named_parameters():
            if not name.endswith("bias"):
                p.mul_(scale)
    return model
