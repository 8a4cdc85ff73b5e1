"""MLP builders, the collapse of linear stacks, and seed ensembles."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import livingdict
from livingdict import mlps, train


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def test_mlp_layout_and_param_count():
    net = mlps.mlp([5, 7, 7, 3], "tanh")
    assert [type(m).__name__ for m in net] == [
        "Linear",
        "Tanh",
        "Linear",
        "Tanh",
        "Linear",
    ]
    assert sum(p.numel() for p in net.parameters()) == mlps.n_params(
        [5, 7, 7, 3]
    )
    assert isinstance(mlps.mlp([4, 3, 2], "none")[1], nn.Identity)
    x = torch.randn(6, 4)
    torch.testing.assert_close(
        mlps.mlp([4, 3], "abs")(x).shape, torch.Size([6, 3])
    )
    torch.testing.assert_close(mlps.Square()(x), x**2)
    torch.testing.assert_close(mlps.Abs()(x), x.abs())


@settings(max_examples=30, deadline=None)
@given(
    st.integers(1, 80),
    st.integers(1, 20),
    st.integers(1, 5),
    st.integers(50, 20000),
)
def test_width_for_params_is_closest(d_in, d_out, layers, budget):
    w = mlps.width_for_params(d_in, d_out, layers, budget)
    count = lambda v: mlps.n_params([d_in, *[v] * layers, d_out])  # noqa: E731
    best = min(range(1, w + 3), key=lambda v: abs(count(v) - budget))
    assert abs(count(w) - budget) == abs(count(best) - budget)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=2, max_size=5), st.booleans())
def test_collapse_equals_the_stack(sizes, bias):
    net = mlps.mlp(sizes, "none", bias=bias)
    one = mlps.collapse(net)
    x = torch.randn(4, sizes[0])
    torch.testing.assert_close(one(x), net(x), atol=1e-5, rtol=1e-4)
    rank = torch.linalg.matrix_rank(one.weight).item()
    assert rank <= min(sizes)


@pytest.mark.parametrize(
    "width", [5, 20]
)  # narrow first layer: one product; wide: bmm
def test_ensemble_members_train_as_if_alone(width):
    livingdict.setup(0)
    x, y = torch.randn(40, 3), torch.randint(0, 2, (40,))
    ens = mlps.Ensemble([3, width, 2], members=3)
    alone = [ens.member(s) for s in range(3)]
    out = ens(x)
    assert out.shape == (40, 2, 3)
    for s, net in enumerate(alone):
        torch.testing.assert_close(out[..., s], net(x))
    train.fit(ens, x, ens.targets(y), epochs=20, lr=1e-2)
    for s, net in enumerate(alone):
        train.fit(net, x, y, epochs=20, lr=1e-2)
        torch.testing.assert_close(
            ens.member(s)(x), net(x), atol=1e-4, rtol=1e-3
        )
    acc = ens.accuracy(x, y)
    assert acc.shape == (3,) and float(acc[1]) == train.accuracy(
        alone[1], x, y
    )


def test_init_scale_shrinks_weights_only():
    net = mlps.mlp([3, 4, 2])
    w, b = net[0].weight.clone(), net[0].bias.clone()
    mlps.init_scale(net, 0.1)
    torch.testing.assert_close(net[0].weight, 0.1 * w)
    torch.testing.assert_close(net[0].bias, b)


def test_bad_input():
    with pytest.raises(ValueError, match=r"\[5\]"):
        mlps.mlp([5])
    with pytest.raises(ValueError, match=r"\[5, 0, 2\]"):
        mlps.n_params([5, 0, 2])
    with pytest.raises(ValueError, match="activation"):
        mlps.mlp([2, 2], "gelu")
    with pytest.raises(ValueError, match="hidden_layers=0"):
        mlps.width_for_params(4, 2, 0, 100)
    with pytest.raises(ValueError, match="ReLU"):
        mlps.collapse(mlps.mlp([3, 4, 2], "relu"))
    with pytest.raises(ValueError, match=r"\(2, 3\).*width 4"):
        mlps.collapse(nn.Sequential(nn.Linear(3, 4), nn.Linear(3, 2)))
    ens = mlps.Ensemble([3, 4, 2], members=2)
    with pytest.raises(ValueError, match=r"\(5, 4\)"):
        ens(torch.randn(5, 4))
    with pytest.raises(ValueError, match="index 2"):
        ens.member(2)
    with pytest.raises(ValueError, match=r"\(5,\)"):
        ens.accuracy(torch.randn(4, 3), torch.zeros(5, dtype=torch.long))
    with pytest.raises(ValueError, match="members"):
        mlps.Ensemble([3, 2], members=0)
    with pytest.raises(ValueError, match="scale"):
        mlps.init_scale(mlps.mlp([2, 2]), 0.0)
