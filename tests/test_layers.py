"""The three guises agree with torch's own modules."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from livingdict.layers import as_dictionary, attention, linear_as_lookup


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def test_linear_as_lookup_matches_nn_linear():
    layer = nn.Linear(7, 3)
    x = torch.randn(5, 7)
    torch.testing.assert_close(linear_as_lookup(layer, x), layer(x))


def test_linear_without_bias():
    layer = nn.Linear(7, 3, bias=False)
    x = torch.randn(5, 7)
    torch.testing.assert_close(linear_as_lookup(layer, x), layer(x))


@pytest.mark.parametrize("act", [nn.ReLU(), nn.Tanh(), nn.GELU()])
def test_mlp_dictionary_matches_sequential(act):
    mlp = nn.Sequential(nn.Linear(6, 16), act, nn.Linear(16, 4))
    d = as_dictionary(mlp)
    x = torch.randn(9, 6)
    torch.testing.assert_close(d.read(x), mlp(x))
    assert d.keys(x).shape == (9, 16) and d.values.shape == (16, 4)
    manual = (
        sum(d.keys(x)[:, j : j + 1] * d.values[j] for j in range(16)) + d.bias
    )
    torch.testing.assert_close(manual, mlp(x))


@pytest.mark.parametrize("causal", [False, True])
def test_attention_matches_sdpa(causal):
    q, k, v = (
        torch.randn(2, 3, 5, 8),
        torch.randn(2, 3, 5, 8),
        torch.randn(2, 3, 5, 4),
    )
    out, w = attention(q, k, v, causal=causal)
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    torch.testing.assert_close(out, ref)
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 3, 5))
    if causal:
        assert (w.triu(1) == 0).all()


def test_attention_rectangular_causal_and_scale():
    q, k, v = torch.randn(3, 4), torch.randn(6, 4), torch.randn(6, 2)
    out, _ = attention(q, k, v, causal=True, scale=0.3)
    ref = F.scaled_dot_product_attention(
        q[None], k[None], v[None], is_causal=True, scale=0.3
    )
    torch.testing.assert_close(out, ref[0])


def test_attention_boolean_mask():
    q, k, v = torch.randn(5, 4), torch.randn(5, 4), torch.randn(5, 3)
    mask = torch.rand(5, 5) > 0.3
    mask.fill_diagonal_(True)
    out, w = attention(q, k, v, mask=mask)
    ref = F.scaled_dot_product_attention(
        q[None], k[None], v[None], attn_mask=mask
    )
    torch.testing.assert_close(out, ref[0])
    assert (w[~mask] == 0).all()


def test_bad_inputs_name_shapes():
    with pytest.raises(ValueError, match=r"\(5, 4\).*\(5, 3\)"):
        attention(torch.randn(5, 4), torch.randn(5, 3), torch.randn(5, 2))
    with pytest.raises(ValueError, match=r"\(4, 4\)"):
        attention(
            torch.randn(5, 4),
            torch.randn(5, 4),
            torch.randn(5, 2),
            mask=torch.ones(4, 4) > 0,
        )
    with pytest.raises(ValueError, match="Linear"):
        as_dictionary(nn.Sequential(nn.Linear(3, 4), nn.ReLU()))
    with pytest.raises(ValueError, match=r"\(4, 3\).*\(2, 5\)"):
        as_dictionary(
            nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(5, 2))
        )
    with pytest.raises(ValueError, match=r"\(2, 5\)"):
        linear_as_lookup(nn.Linear(3, 2), torch.randn(2, 5))
