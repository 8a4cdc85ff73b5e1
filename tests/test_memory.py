"""The hand-built exact dictionary returns every stored value: the key of a
stored pattern is one-hot."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from livingdict.layers import as_dictionary
from livingdict.memory import exact_dictionary, match_margins


@settings(max_examples=25, deadline=None)
@given(
    st.integers(2, 60),
    st.integers(2, 30),
    st.integers(1, 8),
    st.integers(0, 10**6),
)
def test_every_stored_value_comes_back(n, d, d_v, seed):
    g = torch.Generator().manual_seed(seed)
    patterns = torch.nn.functional.normalize(
        torch.randn(n, d, generator=g), dim=1
    )
    values = torch.randn(n, d_v, generator=g)
    if (
        match_margins(patterns).min() < 1e-3
    ):  # nearly duplicate patterns: separable but fragile
        return
    net = exact_dictionary(patterns, values)
    d_ = as_dictionary(net)
    with torch.no_grad():
        h = d_.keys(patterns)
        torch.testing.assert_close(h, torch.eye(n), atol=2e-3, rtol=0)
        torch.testing.assert_close(net(patterns), values, atol=2e-3, rtol=0)


def test_float64_patterns_give_a_float64_network_exact_to_round_off():
    g = torch.Generator().manual_seed(0)
    patterns = torch.nn.functional.normalize(
        torch.rand(200, 16, generator=g, dtype=torch.float64), dim=1
    )
    values = torch.randn(200, 3, generator=g, dtype=torch.float64)
    net = exact_dictionary(patterns, values)
    assert net[0].weight.dtype == torch.float64
    with torch.no_grad():
        assert (net(patterns) - values).abs().max() < 1e-9


def test_raw_patterns_of_unequal_norm_work_when_each_is_its_own_best_match():
    patterns = torch.tensor([[1.0, 0.0], [0.0, 2.0], [-1.0, -1.0]])
    assert (match_margins(patterns) > 0).all()
    values = torch.tensor([[1.0], [2.0], [3.0]])
    with torch.no_grad():
        torch.testing.assert_close(
            exact_dictionary(patterns, values)(patterns), values
        )


def test_bad_input():
    with pytest.raises(ValueError, match=r"\(3, 2\).*\(4, 1\)"):
        exact_dictionary(torch.randn(3, 2), torch.randn(4, 1))
    with pytest.raises(ValueError, match="best match"):
        exact_dictionary(torch.ones(2, 3), torch.randn(2, 1))
    with pytest.raises(
        ValueError, match="best match"
    ):  # a pattern inside a longer one's cone
        exact_dictionary(
            torch.tensor([[1.0, 0.0], [2.0, 0.1]]), torch.randn(2, 1)
        )
    with pytest.raises(ValueError, match=r"\(5,\)"):
        match_margins(torch.randn(5))
