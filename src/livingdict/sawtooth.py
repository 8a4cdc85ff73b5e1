"""The tent map and its k-fold composition: a function depth makes cheap
(Telgarsky 2016).

    tent(x) = 2·min(x, 1 − x) = 2·relu(x) − 4·relu(x − ½)      on [0, 1]
    sawtooth_k = tent ∘ ⋯ ∘ tent  (k times): 2ᵏ linear pieces, 2ᵏ⁻¹ full teeth.

``deep_sawtooth(k)`` is exact with k hidden layers of 2 ReLUs; a
one-hidden-layer ReLU net on a 1-D input is piecewise linear with one kink per
unit at most, so it needs 2ᵏ − 1 units to be exact (``shallow_interpolant``
builds one with 2ᵏ), and ``shallow_error_bound`` says how far off it must be
with fewer.
"""

from __future__ import annotations

import math

import torch
from torch import nn


def _check_k(k: int) -> None:
    if int(k) != k or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k}")


def tent(x: torch.Tensor) -> torch.Tensor:
    """``tent(x) = 2·min(x, 1 − x)``: maps [0, 1] onto [0, 1], up then down."""
    return 2 * torch.minimum(x, 1 - x)


def sawtooth(x: torch.Tensor, k: int) -> torch.Tensor:
    """The tent map composed ``k`` times (the reference the networks must
    match)."""
    _check_k(k)
    for _ in range(k):
        x = tent(x)
    return x


@torch.no_grad()
def deep_sawtooth(k: int) -> nn.Sequential:
    """Exact ReLU network for ``sawtooth(·, k)`` on [0, 1]: k hidden layers of
    2 units.

    Each layer computes ``u = relu(z)``, ``v = relu(z − ½)`` of its input ``z``
    and passes on ``tent(z) = 2u − 4v`` (folded into the next layer's weights).
    """
    _check_k(k)
    layers: list[nn.Module] = [nn.Linear(1, 2), nn.ReLU()]
    layers[0].weight.copy_(torch.tensor([[1.0], [1.0]]))
    layers[0].bias.copy_(torch.tensor([0.0, -0.5]))
    for _ in range(k - 1):
        lin = nn.Linear(2, 2)
        lin.weight.copy_(torch.tensor([[2.0, -4.0], [2.0, -4.0]]))
        lin.bias.copy_(torch.tensor([0.0, -0.5]))
        layers += [lin, nn.ReLU()]
    out = nn.Linear(2, 1)
    out.weight.copy_(torch.tensor([[2.0, -4.0]]))
    out.bias.zero_()
    return nn.Sequential(*layers, out)


@torch.no_grad()
def shallow_interpolant(
    knots: torch.Tensor, values: torch.Tensor
) -> nn.Sequential:
    """One-hidden-layer ReLU net equal to the piecewise-linear interpolant of
    ``(knots, values)`` on ``[t₀, t_m]``:

        f(x) = v₀ + Σ_{i<m} cᵢ·relu(x − tᵢ),  c₀ = s₀,  cᵢ = sᵢ − sᵢ₋₁,
        sᵢ = (vᵢ₊₁ − vᵢ)/(tᵢ₊₁ − tᵢ)            (m = len(knots) − 1 hidden
        units).

    The layers take the dtype of ``knots`` (float64 knots: a float64 network).
    """
    knots = torch.as_tensor(knots)
    dtype = (
        knots.dtype if knots.is_floating_point() else torch.get_default_dtype()
    )
    t, v = (
        knots.to(torch.float64),
        torch.as_tensor(values, dtype=torch.float64),
    )
    if t.ndim != 1 or t.shape != v.shape or len(t) < 2:
        raise ValueError(
            f"shallow_interpolant: knots {tuple(t.shape)} and values "
            f"{tuple(v.shape)} must be 1-D, equal length >= 2"
        )
    if not bool((t[1:] > t[:-1]).all()):
        raise ValueError(
            "shallow_interpolant: knots must be strictly increasing"
        )
    slopes = (v[1:] - v[:-1]) / (t[1:] - t[:-1])
    coef = torch.cat([slopes[:1], slopes[1:] - slopes[:-1]])
    m = len(t) - 1
    first, second = nn.Linear(1, m, dtype=dtype), nn.Linear(m, 1, dtype=dtype)
    first.weight.fill_(1.0)
    first.bias.copy_(-t[:-1])
    second.weight.copy_(coef[None])
    second.bias.fill_(float(v[0]))
    return nn.Sequential(first, nn.ReLU(), second)


def shallow_sawtooth(k: int) -> nn.Sequential:
    """Exact one-hidden-layer net for ``sawtooth(·, k)``: 2ᵏ ReLUs, one per
    kink."""
    _check_k(k)
    knots = torch.linspace(0, 1, 2**k + 1, dtype=torch.float64)
    return shallow_interpolant(knots, sawtooth(knots, k))


def shallow_fit(x: torch.Tensor, y: torch.Tensor, units: int) -> nn.Sequential:
    """Least-squares one-hidden-layer fit with ``units`` ReLUs, kinks at
    ``i/units``:

        min_c ‖c₀ + Σᵢ cᵢ₊₁·relu(x − i/units) − y‖²

    (a convex problem; fixed kinks make it an upper bound on the best such
    net). The layers take the dtype of ``x``.
    """
    if units < 1 or x.ndim != 1 or x.shape != y.shape:
        raise ValueError(
            f"shallow_fit needs units >= 1 and 1-D x, y of one shape, got "
            f"units={units}, "
            f"x {tuple(x.shape)}, y {tuple(y.shape)}"
        )
    kinks = torch.arange(units, dtype=torch.float64) / units
    xs, ys = x.double(), y.double()
    feats = torch.cat(
        [
            torch.ones(len(xs), 1, dtype=torch.float64),
            torch.relu(xs[:, None] - kinks),
        ],
        dim=1,
    )
    # torch's SVD-based solver: about ten times faster here than NumPy's, whose
    # BLAS threads compete for the cores
    c = torch.linalg.lstsq(feats, ys[:, None], driver="gelsd").solution[:, 0]
    dtype = x.dtype if x.is_floating_point() else torch.get_default_dtype()
    net = nn.Sequential(
        nn.Linear(1, units, dtype=dtype),
        nn.ReLU(),
        nn.Linear(units, 1, dtype=dtype),
    )
    with torch.no_grad():
        net[0].weight.fill_(1.0)
        net[0].bias.copy_(-kinks)
        net[2].weight.copy_(c[1:][None])
        net[2].bias.fill_(float(c[0]))
    return net


def shallow_error_bound(k: int, units: int) -> float:
    """Lower bound on the RMS error over [0, 1] of ANY one-hidden-layer ReLU
    net with ``units`` hidden units fitting ``sawtooth(·, k)``:

        RMSE ≥ √( max(0, 1 − units / 2ᵏ⁻¹) / 12 ).

    Each unit adds at most one kink, so at least ``2ᵏ⁻¹ − units`` of the 2ᵏ⁻¹
    teeth (each of width 2¹⁻ᵏ) meet an affine piece; the best affine fit to a
    full tooth leaves mean squared error 1/12 (its values are uniform on [0,
    1]).
    """
    _check_k(k)
    if units < 0:
        raise ValueError(f"units must be >= 0, got {units}")
    return math.sqrt(max(0.0, 1 - units / 2 ** (k - 1)) / 12)
