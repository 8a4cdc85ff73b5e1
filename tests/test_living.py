"""living: snapshots of filters and values during training, drift; bad input."""

import numpy as np
import pytest
import torch
from torch import nn

from livingdict import train
from livingdict.living import Snapshots, drift


def small_run():
    torch.manual_seed(0)
    x, y = torch.randn(64, 4), torch.randint(0, 3, (64,))
    m = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3))
    snaps = Snapshots(m, at=(1, 5, 10))
    train.fit(m, x, y, epochs=10, callback=snaps)
    return m, snaps


def test_snapshots_record_epoch_zero_and_the_requested_epochs():
    m, snaps = small_run()
    assert snaps.epochs == [0, 1, 5, 10]
    assert snaps.filters[0].shape == (6, 4)
    assert snaps.values[0].shape == (6, 3)
    np.testing.assert_array_equal(
        snaps.filters[-1], m[0].weight.detach().numpy()
    )
    np.testing.assert_array_equal(
        snaps.values[-1], m[2].weight.detach().numpy().T
    )


def test_drift_starts_at_zero_and_measures_relative_distance():
    w0 = np.ones((2, 2))
    np.testing.assert_allclose(drift([w0, 2 * w0, w0]), [0.0, 1.0, 0.0])
    _, snaps = small_run()
    d = drift(snaps.filters)
    assert d[0] == 0 and (d[1:] > 0).all()


def test_snapshots_are_copies_not_views():
    m, snaps = small_run()
    with torch.no_grad():
        m[0].weight.add_(1.0)
    assert not np.array_equal(snaps.filters[-1], m[0].weight.detach().numpy())


@pytest.mark.parametrize(
    "call",
    [
        lambda: Snapshots(nn.Sequential(nn.Linear(2, 2))),
        lambda: Snapshots(
            nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)),
            at=(0, 5),
        ),
        lambda: drift([]),
        lambda: drift([np.ones((2, 2)), np.ones((3, 2))]),
        lambda: drift([np.zeros((2, 2))]),
    ],
)
def test_bad_input_raises(call):
    with pytest.raises(ValueError):
        call()


def test_error_names_the_shapes():
    with pytest.raises(ValueError, match=r"\(2, 2\).*\(3, 2\)"):
        drift([np.ones((2, 2)), np.ones((3, 2))])
