"""persistent: an FFN as attention over persistent slots; layout; bad input."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from livingdict.layers import attention
from livingdict.persistent import ffn_slots


@settings(max_examples=25, deadline=None)
@given(
    st.integers(1, 9),
    st.integers(1, 9),
    st.integers(1, 5),
    st.integers(0, 1000),
)
def test_relu_read_equals_the_ffn(d, n, d_out, seed):
    torch.manual_seed(seed)
    ffn = nn.Sequential(nn.Linear(d, n), nn.ReLU(), nn.Linear(n, d_out))
    x = torch.randn(4, d)
    torch.testing.assert_close(ffn_slots(ffn).read(x), ffn(x))


def test_filters_are_rows_of_w1_and_values_columns_of_w2():
    ffn = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 2))
    m = ffn_slots(ffn)
    assert m.filters.shape == (5, 3) and m.values.shape == (5, 2)
    assert torch.equal(m.filters[4], ffn[0].weight[4]) and torch.equal(
        m.values[4], ffn[2].weight[:, 4]
    )


def test_wrong_layout_is_wrong_even_when_shapes_fit():
    torch.manual_seed(0)
    ffn = nn.Sequential(nn.Linear(6, 6), nn.ReLU(), nn.Linear(6, 6))
    x = torch.randn(8, 6)
    m = ffn_slots(ffn)
    wrong = (
        torch.relu(x @ m.filters + m.filter_bias) @ m.values + m.out_bias
    )  # Kᵀ in place of K
    assert (wrong - ffn(x)).abs().max() > 1e-2


def test_softmax_kernel_is_attention_over_the_slots():
    torch.manual_seed(1)
    ffn = nn.Sequential(
        nn.Linear(4, 7), nn.ReLU(), nn.Linear(7, 3, bias=False)
    )
    nn.init.zeros_(ffn[0].bias)
    x = torch.randn(5, 4)
    m = ffn_slots(ffn)
    out, w = attention(x, m.filters, m.values, scale=2.0)
    torch.testing.assert_close(m.read(x, "softmax", beta=2.0), out)
    torch.testing.assert_close(
        m.keys(x, "softmax", beta=2.0).sum(1), torch.ones(5)
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda: ffn_slots(nn.Sequential(nn.Linear(3, 4), nn.ReLU())),
        lambda: ffn_slots(
            nn.Sequential(nn.ReLU(), nn.Linear(3, 4), nn.Linear(4, 2))
        ),
        lambda: ffn_slots(
            nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(5, 2))
        ),
        lambda: ffn_slots(
            nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
        ).read(torch.ones(2, 4)),
        lambda: ffn_slots(
            nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
        ).read(torch.ones(2, 3), kernel="tanh"),
    ],
)
def test_bad_input_raises(call):
    with pytest.raises(ValueError):
        call()


def test_error_names_the_shapes():
    ffn = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(5, 2))
    with pytest.raises(ValueError, match=r"\(4, 3\).*\(2, 5\)"):
        ffn_slots(ffn)
