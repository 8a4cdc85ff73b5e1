"""Offline data, the training loop and the figure helpers."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
import torch
from torch import nn

import livingdict
from livingdict import data, plot, train


def test_digits_split_shapes_and_range():
    s = data.digits(seed=0)
    assert s.x_train.shape[1] == 64 and len(s.y_train) + len(s.y_test) == 1797
    assert 0 <= s.x_train.min() and s.x_train.max() <= 1 and s.n_classes == 10
    assert torch.equal(data.digits(seed=0).y_test, s.y_test)
    assert not torch.equal(data.digits(seed=1).y_test, s.y_test)


def test_mnist1d_is_generated_offline_and_leaves_numpy_state(monkeypatch):
    import socket

    def no_network(*a, **k):
        raise AssertionError("mnist1d tried to use the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    np.random.seed(123)
    before = np.random.random()
    np.random.seed(123)
    s = data.mnist1d(num_samples=200, seed=3)
    assert np.random.random() == before
    assert s.x_train.shape == (160, 40) and s.x_test.shape == (40, 40)


def test_xor_is_not_linearly_separable_but_balanced():
    x, y = data.xor(400, seed=0)
    assert x.shape == (400, 2) and set(y.tolist()) == {0, 1}
    assert ((x[:, 0] * x[:, 1] < 0) == y.bool()).float().mean() > 0.95


def test_fit_is_deterministic_and_learns_xor():
    x, y = data.xor(200, seed=0)

    def run():
        livingdict.setup(0)
        model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
        hist = train.fit(model, x, y, epochs=150, lr=0.05)
        return hist, train.accuracy(model, x, y)

    (h1, a1), (h2, a2) = run(), run()
    assert h1 == h2 and a1 == a2
    assert h1[-1] < h1[0] and a1 > 0.95


def test_fit_minibatch_frozen_params_and_callback():
    livingdict.setup(0)
    x, y = torch.randn(50, 3), torch.randint(0, 2, (50,))
    model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2))
    frozen = model[0].weight.detach().clone()
    seen = []
    train.fit(
        model,
        x,
        y,
        epochs=3,
        batch_size=16,
        params=list(model[2].parameters()),
        callback=lambda e, m: seen.append(e),
    )
    assert torch.equal(model[0].weight, frozen) and seen == [0, 1, 2]


def test_fit_bad_input():
    m = nn.Linear(3, 2)
    with pytest.raises(ValueError, match=r"\(4, 3\).*\(5,\)"):
        train.fit(m, torch.randn(4, 3), torch.zeros(5, dtype=torch.long))
    with pytest.raises(ValueError, match="loss"):
        train.fit(
            m,
            torch.randn(4, 3),
            torch.zeros(4, dtype=torch.long),
            loss="hinge",
        )
    with pytest.raises(ValueError, match="optimizer"):
        train.fit(
            m,
            torch.randn(4, 3),
            torch.zeros(4, dtype=torch.long),
            optimizer="lbfgs",
        )
    with pytest.raises(ValueError, match="test_fraction"):
        data.digits(test_fraction=1.5)


def test_plot_helpers():
    livingdict.setup(0)
    fig = plot.filter_grid(
        np.random.randn(10, 64), (8, 8), ncols=5, suptitle="t"
    )
    assert len(fig.axes) == 10
    with pytest.raises(ValueError, match=r"\(10, 63\)"):
        plot.filter_grid(np.random.randn(10, 63), (8, 8))
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    im = plot.heatmap(ax, np.array([[-1.0, 2.0], [0.5, 0.0]]))
    assert im.get_clim() == (-2.0, 2.0)
    with pytest.raises(ValueError, match=r"\(3,\)"):
        plot.heatmap(ax, np.zeros(3))
    plt.close("all")
