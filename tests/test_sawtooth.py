"""The tent map, its exact deep network, and what one hidden layer can and cannot do."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from livingdict import sawtooth as saw


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 10))
def test_deep_net_is_exact_with_two_relus_per_layer(k):
    x = torch.linspace(0, 1, 2**k * 8 + 1)
    net = saw.deep_sawtooth(k)
    hidden = [m for m in net if isinstance(m, torch.nn.Linear)][:-1]
    assert len(hidden) == k and all(m.out_features == 2 for m in hidden)
    with torch.no_grad():
        err = (
            (net(x[:, None]).squeeze(1) - saw.sawtooth(x, k))
            .abs()
            .max()
            .item()
        )
    assert err < 1e-6 * 2**k


@pytest.mark.parametrize("k", [1, 3, 6])
def test_shallow_net_is_exact_with_2_to_the_k_units(k):
    x = torch.rand(500, dtype=torch.float64)
    net = saw.shallow_sawtooth(k)
    assert net[0].out_features == 2**k and net[0].weight.dtype == torch.float64
    with torch.no_grad():
        err = (
            (net(x[:, None]).squeeze(1) - saw.sawtooth(x, k))
            .abs()
            .max()
            .item()
        )
    assert err < 1e-9


def test_teeth_and_range():
    x = torch.linspace(0, 1, 4097, dtype=torch.float64)
    y = saw.sawtooth(x, 5)
    assert y.min() >= 0 and y.max() <= 1
    peaks = ((y[1:-1] > y[:-2]) & (y[1:-1] >= y[2:])).sum().item()
    assert peaks == 2**4
    torch.testing.assert_close(
        saw.tent(torch.tensor([0.0, 0.25, 0.5, 1.0])),
        torch.tensor([0.0, 0.5, 1.0, 0.0]),
    )


@pytest.mark.parametrize("k,units", [(5, 4), (6, 12), (7, 20)])
def test_least_squares_fit_respects_the_lower_bound(k, units):
    x = torch.linspace(0, 1, 2**12 + 1, dtype=torch.float64)
    y = saw.sawtooth(x, k)
    net = saw.shallow_fit(x, y, units)
    with torch.no_grad():
        rmse = (net(x[:, None]).squeeze(1) - y).pow(2).mean().sqrt().item()
    assert rmse >= 0.98 * saw.shallow_error_bound(k, units)


def test_fit_is_exact_when_kinks_hit_the_corners():
    x = torch.linspace(0, 1, 1025, dtype=torch.float64)
    y = saw.sawtooth(x, 4)
    net = saw.shallow_fit(x, y, 16)
    with torch.no_grad():
        assert (net(x[:, None]).squeeze(1) - y).abs().max().item() < 1e-9


def test_bound_values():
    assert saw.shallow_error_bound(3, 0) == pytest.approx(math.sqrt(1 / 12))
    assert saw.shallow_error_bound(3, 4) == 0.0
    assert saw.shallow_error_bound(6, 16) == pytest.approx(math.sqrt(0.5 / 12))


def test_interpolant_matches_piecewise_linear():
    t = torch.tensor([0.0, 0.3, 0.5, 1.0])
    v = torch.tensor([1.0, -1.0, 2.0, 0.0])
    net = saw.shallow_interpolant(t, v)
    with torch.no_grad():
        out = net(t[:, None]).squeeze(1)
    torch.testing.assert_close(out, v, atol=1e-6, rtol=0)


def test_bad_input():
    with pytest.raises(ValueError, match="k must"):
        saw.deep_sawtooth(0)
    with pytest.raises(ValueError, match="k must"):
        saw.sawtooth(torch.zeros(3), 1.5)
    with pytest.raises(ValueError, match=r"\(3,\).*\(2,\)"):
        saw.shallow_interpolant(torch.zeros(3), torch.zeros(2))
    with pytest.raises(ValueError, match="increasing"):
        saw.shallow_interpolant(torch.tensor([0.0, 0.0]), torch.zeros(2))
    with pytest.raises(ValueError, match=r"\(4, 1\)"):
        saw.shallow_fit(torch.zeros(4, 1), torch.zeros(4, 1), 3)
    with pytest.raises(ValueError, match="units"):
        saw.shallow_error_bound(3, -1)
