"""The same-class pair task and the 2-D checkerboard."""

import pytest
import torch

from livingdict.planar import checkerboard, grid_scores
from livingdict.relations import same_class_pairs


def test_pairs_are_balanced_and_labelled_right():
    x = torch.arange(30, dtype=torch.float32)[:, None].repeat(1, 2)
    y = torch.arange(30) % 3
    xp, same = same_class_pairs(x, y, 101, seed=1)
    assert xp.shape == (101, 4) and same.dtype == torch.int64
    assert int(same.sum()) == 50
    a, b = xp[:, 0].long(), xp[:, 2].long()
    assert torch.equal(same, (y[a] == y[b]).long())
    assert not (a == b).any()
    assert torch.equal(same_class_pairs(x, y, 101, seed=1)[0], xp)


def test_pairs_bad_input():
    with pytest.raises(ValueError, match=r"\(4, 2\).*\(3,\)"):
        same_class_pairs(
            torch.zeros(4, 2), torch.zeros(3, dtype=torch.long), 10
        )
    with pytest.raises(ValueError, match="class counts"):
        same_class_pairs(
            torch.zeros(3, 2), torch.zeros(3, dtype=torch.long), 10
        )
    with pytest.raises(ValueError, match="n_pairs"):
        same_class_pairs(torch.zeros(3, 2), torch.tensor([0, 0, 1]), 1)


def test_checkerboard_labels_and_no_line_beats_majority():
    x, y = checkerboard(3000, 3, seed=0)
    assert x.shape == (3000, 2) and x.abs().max() <= 1.5
    centre = (x.abs() < 0.5).all(1)
    assert (y[centre] == 0).all()
    edge = (x[:, 0].abs() < 0.5) & (x[:, 1] > 0.5)
    assert (y[edge] == 1).all()


def test_grid_scores_shapes_and_bad_input():
    xx, yy, z = grid_scores(lambda p: p[:, 0] + p[:, 1], lim=1.0, steps=5)
    assert xx.shape == yy.shape == z.shape == (5, 5)
    torch.testing.assert_close(z, xx + yy)
    with pytest.raises(ValueError, match="lim"):
        grid_scores(lambda p: p[:, 0], lim=0.0)
    _, _, zs = grid_scores(lambda p: p, lim=1.0, steps=5)
    assert zs.shape == (5, 5, 2)
    with pytest.raises(ValueError, match=r"\(24,\)"):
        grid_scores(lambda p: p[1:, 0], lim=1.0, steps=5)
    with pytest.raises(ValueError, match="cells"):
        checkerboard(10, 1)
