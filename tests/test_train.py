"""train: the one training loop and its accuracy."""

import pytest
import torch
from torch import nn

import livingdict
from livingdict import data, train


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


def test_accuracy_needs_one_label_per_row():
    model = nn.Linear(2, 3)
    x = torch.randn(6, 2)
    y = model(x).argmax(1)
    assert train.accuracy(model, x, y) == 1.0
    with pytest.raises(ValueError, match=r"\(6, 1\) must be \(6,\)"):
        train.accuracy(model, x, y[:, None])  # would broadcast to 6 × 6
