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
            lambda: maps.draw_graph(None, torch.eye(3), labels=["a", "b"]),
            "2 labels for a map of 3 positions",
        ),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
