"""networks: MLP builders, collapse, seed ensembles, attention-only models."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import livingdict
from livingdict import data, networks, train
from livingdict.lookup import lookup
from livingdict.networks import AttentionOnly, SelfAttention


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def test_mlp_layout_and_param_count():
    net = networks.mlp([5, 7, 7, 3], "tanh")
    assert [type(m).__name__ for m in net] == [
        "Linear",
        "Tanh",
        "Linear",
        "Tanh",
        "Linear",
    ]
    n_params = 5 * 7 + 7 + 7 * 7 + 7 + 7 * 3 + 3
    assert sum(p.numel() for p in net.parameters()) == n_params
    assert isinstance(networks.mlp([4, 3, 2], "none")[1], nn.Identity)
    x = torch.randn(6, 4)
    net = networks.mlp([4, 5, 3], "abs")
    h = net[0](x)
    torch.testing.assert_close(net(x), net[2](h.abs()))
    assert not torch.allclose(net(x), net[2](h))  # the activation acts
    torch.testing.assert_close(networks.Square()(x), x**2)
    torch.testing.assert_close(networks.Abs()(x), x.abs())


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=2, max_size=5), st.booleans())
def test_collapse_equals_the_stack(sizes, bias):
    net = networks.mlp(sizes, "none", bias=bias)
    one = networks.collapse(net)
    x = torch.randn(4, sizes[0])
    torch.testing.assert_close(one(x), net(x), atol=1e-5, rtol=1e-4)
    rank = torch.linalg.matrix_rank(one.weight).item()
    assert rank <= min(sizes)


@pytest.mark.parametrize("width", [5, 20])
def test_ensemble_members_train_as_if_alone(width):
    livingdict.setup(0)
    x, y = torch.randn(40, 3), torch.randint(0, 2, (40,))
    ens = networks.Ensemble([3, width, 2], members=3)
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


def test_bad_input():
    with pytest.raises(ValueError, match=r"\[5\]"):
        networks.mlp([5])
    with pytest.raises(ValueError, match="activation"):
        networks.mlp([2, 2], "gelu")
    with pytest.raises(ValueError, match="ReLU"):
        networks.collapse(networks.mlp([3, 4, 2], "relu"))
    with pytest.raises(ValueError, match=r"\(2, 3\).*width 4"):
        networks.collapse(nn.Sequential(nn.Linear(3, 4), nn.Linear(3, 2)))
    ens = networks.Ensemble([3, 4, 2], members=2)
    with pytest.raises(ValueError, match=r"\(5, 4\)"):
        ens(torch.randn(5, 4))
    with pytest.raises(ValueError, match="index 2"):
        ens.member(2)
    with pytest.raises(ValueError, match=r"\(5,\)"):
        ens.accuracy(torch.randn(4, 3), torch.zeros(5, dtype=torch.long))
    with pytest.raises(ValueError, match="members"):
        networks.Ensemble([3, 2], members=0)


def test_ensemble_layers_are_lookups():
    """Each member's hidden layer reads the rows of its W₂ with its key."""
    ens = networks.Ensemble([3, 6, 2], members=2, activation="tanh")
    x = torch.randn(5, 3)
    for s in range(2):
        net = ens.member(s)
        key = torch.tanh(net[0](x))
        torch.testing.assert_close(
            ens(x)[..., s], lookup(key, net[2].weight.T) + net[2].bias
        )


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("causal", [False, True])
def test_self_attention_equals_multihead_attention(bias, causal):
    mha = nn.MultiheadAttention(12, 3, bias=bias, batch_first=True)
    x = torch.randn(4, 7, 12)
    mask = (
        nn.Transformer.generate_square_subsequent_mask(7) if causal else None
    )
    ref, ref_w = mha(x, x, x, attn_mask=mask, average_attn_weights=False)
    out, w = SelfAttention.from_multihead(mha)(x, causal=causal)
    torch.testing.assert_close(out, ref)
    torch.testing.assert_close(w, ref_w)


def test_run_returns_row_stochastic_causal_maps_and_stream():
    m = AttentionOnly(10, 6, n_layers=3, n_heads=2)
    tr = m.run(torch.randint(10, (5, 6)))
    assert (
        tr.logits.shape == (5, 6, 10)
        and len(tr.maps) == 3
        and len(tr.stream) == 4
    )
    for w in tr.maps:
        assert (
            w.shape == (5, 2, 6, 6)
            and (w >= 0).all()
            and (w.triu(1) == 0).all()
        )
        torch.testing.assert_close(w.sum(-1), torch.ones(5, 2, 6))
    torch.testing.assert_close(
        m(torch.zeros(2, 6, dtype=torch.long)),
        m.run(torch.zeros(2, 6, dtype=torch.long)).logits[:, -1],
    )


def test_content_free_maps_do_not_depend_on_input():
    m = AttentionOnly(10, 6, content_maps=False)
    a, b = m.maps(torch.randint(10, (3, 6))), m.maps(torch.randint(10, (3, 6)))
    for wa, wb in zip(a, b, strict=True):
        torch.testing.assert_close(wa, wb)
        torch.testing.assert_close(wa[0], wa[1])


def test_mask_restricts_the_maps_and_no_residual_option():
    mask = (
        torch.ones(6, 6, dtype=torch.bool).tril().triu(-1)
    )  # self and previous token
    m = AttentionOnly(10, 6, mask=mask, residual=False)
    for w in m.maps(torch.randint(10, (3, 6))):
        assert (w[..., ~mask] == 0).all()
    tr = m.run(torch.randint(10, (3, 6)))
    assert not torch.allclose(tr.stream[1], tr.stream[0])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (
            dict(mask=torch.ones(5, 5, dtype=torch.bool)),
            r"\(6, 6\), got torch.bool \(5, 5\)",
        ),
        (dict(mask=torch.ones(6, 6)), "boolean"),
        (dict(n_layers=0), "n_layers >= 1"),
    ],
)
def test_bad_construction(kwargs, match):
    with pytest.raises(ValueError, match=match):
        AttentionOnly(10, 6, **kwargs)


def test_bad_tokens_and_bad_stream():
    m = AttentionOnly(10, 6)
    with pytest.raises(ValueError, match=r"\(batch, 6\), got \(2, 5\)"):
        m(torch.zeros(2, 5, dtype=torch.long))
    with pytest.raises(ValueError, match=r"got \(2, 6\)"):
        SelfAttention(8)(torch.zeros(2, 6))
    with pytest.raises(ValueError, match="add_bias_kv"):
        SelfAttention.from_multihead(
            nn.MultiheadAttention(8, 2, add_bias_kv=True)
        )


def test_two_layers_learn_recall_quickly():
    livingdict.setup(0)
    g = torch.Generator().manual_seed(0)
    tr = data.associative_recall(4096, 3, 6, generator=g)
    te = data.associative_recall(500, 3, 6, generator=g)
    m = AttentionOnly(tr.vocab, tr.length, n_layers=2)
    train.fit(m, tr.tokens, tr.targets, epochs=8, batch_size=128, lr=3e-3)
    assert train.accuracy(m, te.tokens, te.targets) > 0.9
