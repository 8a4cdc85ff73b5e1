"""Masks, products of maps, reach, mixing and rank collapse."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from livingdict import maps


def random_map(n, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.softmax(
        torch.randn(n, n, generator=g, dtype=torch.float64), -1
    )


@settings(max_examples=40, deadline=None)
@given(
    length=st.integers(4, 40),
    window=st.integers(1, 6),
    layers=st.integers(1, 6),
)
def test_receptive_field_is_one_plus_layers_times_window_minus_one(
    length, window, layers
):
    causal = maps.receptive_field([maps.window_mask(length, window)] * layers)
    assert causal.max() == min(length, 1 + layers * (window - 1))
    assert torch.equal(
        causal,
        torch.clamp(
            torch.arange(1, length + 1), max=1 + layers * (window - 1)
        ),
    )
    w = 2 * (window // 2) + 1  # an odd window for the centred case
    centred = maps.receptive_field(
        [maps.window_mask(length, w, causal=False)] * layers
    )
    assert centred.max() == min(length, 1 + layers * (w - 1))


def test_window_mask_shapes():
    m = maps.window_mask(5, 2)
    assert m.dtype == torch.bool and m.sum() == 9 and (m.triu(1) == 0).all()
    assert torch.equal(maps.window_mask(4, 1), torch.eye(4, dtype=torch.bool))
    assert torch.equal(
        maps.window_mask(4, 4), torch.ones(4, 4, dtype=torch.bool).tril()
    )


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 8), depth=st.integers(1, 5), seed=st.integers(0, 1000))
def test_compose_is_row_stochastic_product(n, depth, seed):
    ms = [random_map(n, seed + i) for i in range(depth)]
    p = maps.compose(ms)
    torch.testing.assert_close(p.sum(-1), torch.ones(n, dtype=torch.float64))
    assert (p >= 0).all()
    x = torch.randn(n, 3, dtype=torch.float64)
    y = x
    for m in ms:
        y = m @ y
    torch.testing.assert_close(p @ x, y)


def test_mixing_extremes_and_submultiplicative():
    assert maps.mixing(torch.eye(5)) == 1.0
    assert maps.mixing(torch.full((5, 5), 0.2)) == pytest.approx(0.0)
    a, b = random_map(6, 1), random_map(6, 2)
    assert maps.mixing(a @ b) <= maps.mixing(a) * maps.mixing(b) + 1e-12


def test_mixing_of_a_batch_gives_one_coefficient_per_map():
    eye, flat = torch.eye(4), torch.full((4, 4), 0.25)
    ones = torch.ones(2, dtype=torch.float64)
    torch.testing.assert_close(maps.mixing(torch.stack([eye, eye])), ones)
    batch = torch.stack([eye, flat, random_map(4, 1), random_map(4, 2)])
    each = [maps.mixing(m) for m in batch]
    assert each[:2] == [1.0, pytest.approx(0.0)]
    torch.testing.assert_close(
        maps.mixing(batch.reshape(2, 2, 4, 4)),
        torch.tensor(each, dtype=torch.float64).reshape(2, 2),
    )


def test_layers_to_mix_grows_as_lambda_approaches_one():
    a = random_map(8, 3)
    counts = [maps.layers_to_mix(a, lam) for lam in (0.0, 0.5, 0.9, 0.99)]
    assert counts == sorted(counts) and counts[-1] > 5 * counts[2]
    torch.testing.assert_close(
        maps.lazy(a, 1.0), torch.eye(8, dtype=torch.float64)
    )
    with pytest.raises(ValueError, match="not mixed"):
        maps.layers_to_mix(torch.eye(4), 0.5, max_layers=10)


def test_rank_one_residual():
    row = torch.randn(1, 6)
    assert maps.rank_one_residual(row.expand(5, 6)).item() == pytest.approx(
        0.0, abs=1e-6
    )
    x = torch.randn(3, 5, 6)
    assert maps.rank_one_residual(x).shape == (3,)
    assert (
        (maps.rank_one_residual(x) > 0) & (maps.rank_one_residual(x) <= 1)
    ).all()


def test_draw_graph_draws_an_arrow_per_heavy_weight_and_a_ring_per_self_loop():
    from matplotlib.text import Annotation

    fig, ax = plt.subplots()
    a = torch.tensor([[1.0, 0.0, 0.0], [0.9, 0.1, 0.0], [0.0, 0.2, 0.8]])
    maps.draw_graph(ax, a, threshold=0.5, labels=["x", "y", "z"])
    arrows = [t for t in ax.texts if isinstance(t, Annotation)]
    labels = [t.get_text() for t in ax.texts if not isinstance(t, Annotation)]
    assert len(arrows) == 1  # only A[1, 0] = 0.9 off the diagonal
    assert arrows[0].xy == (1, 0) and arrows[0].xyann == (0, 0)  # 0 -> 1
    assert len(ax.patches) == 2  # rings for A[0, 0] and A[2, 2]
    assert labels == ["x", "y", "z"]
    plt.close(fig)


@pytest.mark.parametrize(
    "call, match",
    [
        (
            lambda: maps.compose([torch.ones(3, 4)]),
            r"square .* got shape \(3, 4\)",
        ),
        (
            lambda: maps.compose([torch.eye(3), torch.eye(4)]),
            r"different lengths \[\(3, 3\), \(4, 4\)\]",
        ),
        (lambda: maps.compose([]), "at least one"),
        (
            lambda: maps.receptive_field(
                [maps.window_mask(5, 2), maps.window_mask(6, 2)]
            ),
            "different lengths",
        ),
        (lambda: maps.window_mask(5, 0), "window >= 1, got 5, 0"),
        (lambda: maps.window_mask(5, 2, causal=False), "odd, got window=2"),
        (lambda: maps.mixing(torch.ones(2, 3)), r"got shape \(2, 3\)"),
        (lambda: maps.lazy(torch.eye(3), 1.5), "got 1.5"),
        (lambda: maps.rank_one_residual(torch.ones(3)), r"got shape \(3,\)"),
        (
            lambda: maps.draw_graph(None, torch.eye(3), labels=["a", "b"]),
            "2 labels for a map of 3 positions",
        ),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
