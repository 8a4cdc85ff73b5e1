"""Products of maps, and maps drawn as graphs."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
import torch

from livingdict import maps


def test_compose_applies_the_first_layer_first():
    """Known products, not the implementation's loop: layer 1 reads the next
    position, layer 2 makes every position read position 0; the stack reads
    what position 0 read in layer 1 (position 1). The other order would read
    position 0."""
    shift = torch.roll(torch.eye(4, dtype=torch.float64), 1, dims=1)
    to_first = torch.zeros(4, 4, dtype=torch.float64)
    to_first[:, 0] = 1
    expected = torch.zeros(4, 4, dtype=torch.float64)
    expected[:, 1] = 1
    torch.testing.assert_close(maps.compose([shift, to_first]), expected)
    two = torch.roll(torch.eye(4, dtype=torch.float64), 2, dims=1)
    torch.testing.assert_close(maps.compose([shift, shift]), two)


def test_draw_graph_draws_an_arrow_per_heavy_weight_and_a_ring_per_self_loop():
    from matplotlib.text import Annotation

    fig, ax = plt.subplots()
    a = torch.tensor([[1.0, 0.0, 0.0], [0.9, 0.1, 0.0], [0.0, 0.2, 0.8]])
    maps.draw_graph(ax, a, threshold=0.5, labels=["x", "y", "z"])
    arrows = [t for t in ax.texts if isinstance(t, Annotation)]
    labels = [t.get_text() for t in ax.texts if not isinstance(t, Annotation)]
    assert len(arrows) == 1  # only A[1, 0] = 0.9 off the diagonal
    (head_x, head_y), (tail_x, tail_y) = arrows[0].xy, arrows[0].xyann
    assert 0 < tail_x < head_x < 1  # 0 -> 1
    assert head_y == tail_y > 0  # above the line
    rings = [p for p in ax.patches if not p.get_fill()]
    nodes = [p for p in ax.patches if p.get_fill()]
    assert len(rings) == 2  # rings for A[0, 0] and A[2, 2]
    assert [p.center for p in nodes] == [(0, 0), (1, 0), (2, 0)]
    assert labels == ["x", "y", "z"]
    plt.close(fig)


def test_draw_graph_arrows_end_on_the_rims_not_inside_the_nodes():
    # Fig 3.20: arrows between neighbours used to end inside the nodes
    from matplotlib.text import Annotation

    for size in (200, 300, 420):
        fig, ax = plt.subplots()
        n = 6
        a = torch.zeros(n, n)
        a[torch.arange(1, n), torch.arange(n - 1)] = 1.0  # t reads t - 1
        a[0, 3] = 1.0  # and one arc backwards
        maps.draw_graph(ax, a, threshold=0.5, node_size=size)
        r = [p for p in ax.patches if p.get_fill()][0].radius
        arrows = [t for t in ax.texts if isinstance(t, Annotation)]
        assert len(arrows) == n
        for arrow in arrows:
            for x, y in (arrow.xy, arrow.xyann):
                nearest = min(abs(x - i) for i in range(n))
                dist = (nearest**2 + y**2) ** 0.5
                assert abs(dist - r) < 1e-9  # exactly on a node's rim
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
            lambda: maps.draw_graph(None, torch.eye(3), labels=["a", "b"]),
            "2 labels for a map of 3 positions",
        ),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
