"""The tiny attention-only transformer: agreement with torch, maps, masks, training."""

import pytest
import torch
from torch import nn

import livingdict
from livingdict import tasks, train
from livingdict.transformer import AttentionOnly, SelfAttention


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


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
    tr = tasks.associative_recall(4096, 3, 6, generator=g)
    te = tasks.associative_recall(500, 3, 6, generator=g)
    m = AttentionOnly(tr.vocab, tr.length, n_layers=2)
    train.fit(m, tr.tokens, tr.targets, epochs=8, batch_size=128, lr=3e-3)
    assert train.accuracy(m, te.tokens, te.targets) > 0.9
