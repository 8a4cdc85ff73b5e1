"""livingdict.explore: what the explorables export, and the torch numbers the browser
test compares the page with (tests/browser/test_explorables.py)."""

from __future__ import annotations

import base64
import json
import math
import re

import numpy as np
import pytest
import torch

from livingdict import explore
from livingdict.lookup import soft_keys


def _decode(a: dict) -> np.ndarray:
    raw = base64.b64decode(a["b64"])
    dtype = {"float32": "<f4", "float64": "<f8", "uint8": "u1"}[a["dtype"]]
    return np.frombuffer(raw, dtype).reshape(a["shape"]) / a["scale"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_encode_floats_exactly(dtype):
    x = torch.randn(3, 5, dtype=torch.float64)
    back = _decode(explore.encode(x, dtype))
    want = x.numpy().astype(dtype)
    assert back.shape == (3, 5) and np.array_equal(back, want)


def test_encode_uint8_pixels_exactly_and_refuses_others():
    x = torch.tensor([[0.0, 1 / 16, 1.0], [0.5, 15 / 16, 0.25]])
    assert np.array_equal(_decode(explore.encode(x, "uint8", 16.0)), x.numpy())
    with pytest.raises(ValueError, match="not in 0..255"):
        explore.encode(torch.tensor([0.3]), "uint8", 16.0)
    with pytest.raises(ValueError, match="not in 0..255"):
        explore.encode(torch.tensor([-1.0]), "uint8", 16.0)
    with pytest.raises(ValueError, match="dtype"):
        explore.encode(x, "int16")


def test_pearson_columns_is_the_correlation():
    x, w = torch.randn(64, dtype=torch.float64), torch.randn(64, 7).double()
    got = explore.pearson_columns(x, w)
    want = [np.corrcoef(x.numpy(), w[:, j].numpy())[0, 1] for j in range(7)]
    assert np.allclose(got.numpy(), want)
    assert torch.allclose(explore.pearson_columns(3 * x, w), got)


def _digits(n=5, d=64, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 17, (n, d), generator=g).float() / 16


def test_filter_bank_checks_raw_responses_scale_and_correlations_do_not():
    W, X = _digits(20).T, _digits(3, seed=1)
    e = explore.filter_bank(W, X, [0, 1, 2], list(range(20)), probes=(0, 5))
    assert e.data["W"]["dtype"] == "uint8"  # k/16 pixels travel exactly
    by_scale = {c["controls"]["scale"]: c["expect"] for c in e.checks}
    one, quarter = by_scale["2"], by_scale["0"]  # × 1 and × 0.25, input 0
    assert math.isclose(quarter["raw_max"], one["raw_max"] / 4, rel_tol=1e-6)
    assert math.isclose(quarter["corr_max"], one["corr_max"], rel_tol=1e-5)
    assert one["raw_at"] == pytest.approx((X[0] @ W)[[0, 5]].tolist())
    with pytest.raises(ValueError, match=r"W \(d, N\)"):
        explore.filter_bank(W.T, X, [0, 1, 2], list(range(20)))
    with pytest.raises(ValueError, match="labels"):
        explore.filter_bank(W, X, [0, 1], list(range(20)))


def _mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(64, 6), torch.nn.ReLU(), torch.nn.Linear(6, 3)
    )


def test_mlp_lookup_checks_are_the_models_own_outputs():
    model, X = _mlp(), _digits(4)
    with torch.no_grad():
        out = model(X)
        e = explore.mlp_lookup(
            model[0].weight.T,
            model[0].bias,
            model[2].weight.T,
            model[2].bias,
            X,
            [0, 1, 2, 0],
            out,
        )
    for check in e.checks:
        i = int(check["controls"]["input"])
        assert check["expect"]["scores"] == pytest.approx(out[i].tolist())
        h = torch.relu(X[i] @ model[0].weight.T + model[0].bias)
        assert check["expect"]["key"] == pytest.approx(h.tolist(), abs=1e-6)
    with pytest.raises(ValueError, match="W1 \\(d, N\\)"):
        explore.mlp_lookup(
            model[0].weight,  # torch's (N, d), not W1
            model[0].bias,
            model[2].weight.T,
            model[2].bias,
            X,
            [0] * 4,
            out,
        )


def test_window_mask():
    m = explore.window_mask(5, 2, causal=True)
    assert m[3].tolist() == [False, False, True, True, False]
    assert explore.window_mask(5, 5, causal=False).all()
    with pytest.raises(ValueError):
        explore.window_mask(5, 0, causal=False)


def test_attention_mixing_residual_keeps_more_of_the_own_content():
    torch.manual_seed(0)
    q, k = torch.randn(2, 8, 4, dtype=torch.float64)
    e = explore.attention_mixing(q, k, layers=4)
    for check in e.checks:
        want = check["expect"]
        a = torch.tensor(want["map"], dtype=torch.float64)
        assert torch.allclose(a.sum(1), torch.ones(8, dtype=a.dtype))
        if check["controls"]["causal"]:
            assert torch.equal(a.triu(1), torch.zeros_like(a))
        # the residual's map ½(I + A) keeps at least half of the own content
        assert min(want["own_residual"]) > 0 and want["own_residual"][0] >= 0.5
        assert want["delta_residual"][0] >= want["delta_pure"][0] - 1e-12
    beta_1 = e.checks[0]
    a = explore.attention_map(q, k, 1.0, False, 8)
    manual = torch.softmax(q @ k.T / 2, -1)  # √d = 2
    assert torch.allclose(a, manual)
    got = torch.tensor(beta_1["expect"]["map"], dtype=torch.float64)
    assert torch.allclose(got, manual)
    with pytest.raises(ValueError, match="q, k"):
        explore.attention_mixing(q, k[:, :3])


def test_mixing_is_one_for_the_identity_and_zero_for_equal_rows():
    assert explore.mixing(torch.eye(4)) == 1.0
    assert explore.mixing(torch.full((4, 4), 0.25)) == 0.0


def test_hard_soft_runs_from_the_mean_to_the_dict():
    torch.manual_seed(0)
    A = torch.nn.functional.normalize(torch.randn(10, 16), dim=1)
    V = torch.rand(10, 64)
    names = [f"n{i}" for i in range(10)]
    e = explore.hard_soft(A @ A.T, V, names, np.logspace(-4, 3, 9))
    flat, _, hard = (c["expect"] for c in e.checks)
    assert flat["to_mean"] < 1e-3  # β = 1e-4: the mean of all values
    j = e.data["query"]
    assert hard["answer"] == pytest.approx(V[j].tolist())  # β = ∞: the dict
    assert hard["key"] == soft_keys(A[j] @ A.T, math.inf).tolist()
    with pytest.raises(ValueError, match="betas"):
        explore.hard_soft(A @ A.T, V, names, [0.0, 1.0])
    with pytest.raises(ValueError, match="scores"):
        explore.hard_soft(A, V, names, [1.0])


def test_hopfield_step_flips_in_order_and_recalls_a_small_memory():
    rng = np.random.default_rng(0)
    X = rng.choice([-1.0, 1.0], size=(30, 100))
    order = rng.permutation(100)
    step = explore.hopfield_step(torch.as_tensor(X), order, 5, 0.1, 1.0)
    assert step["wrong_query"] == 10 and step["wrong_answer"] == 0
    assert step["key_own"] > 0.99
    e = explore.hopfield(X, order, counts=(2, 5, 30))
    assert all(c["expect"]["wrong_query"] >= 10 for c in e.checks)
    bits = np.unpackbits(
        np.frombuffer(base64.b64decode(e.data["bits"]["b64"]), np.uint8)
    )[: X.size]
    assert np.array_equal(bits.reshape(X.shape) * 2.0 - 1, X)
    with pytest.raises(ValueError, match="no permutation"):
        explore.hopfield(X, order[:50])
    with pytest.raises(ValueError, match="±1"):
        explore.hopfield(X * 0.5, order)
    with pytest.raises(ValueError, match="counts"):
        explore.hopfield(X, order, counts=(2, 50))


def test_html_output_carries_data_and_the_module_and_stays_small():
    e = explore.hopfield(
        np.ones((4, 9)), list(range(9)), counts=(1, 2, 4), betas=(1.0,)
    )
    page = e._repr_html_()
    assert page.startswith('<div class="ld-explorable" data-kind="hopfield">')
    payload = re.search(r'class="ld-data">(.*?)</script>', page, re.S)
    assert json.loads(payload.group(1))["kind"] == "hopfield"
    assert "<script data-ld-module>" in page and "window.LDExplore" in page
    assert "</" not in e.payload()
    with pytest.raises(ValueError, match="unknown kind"):
        explore.Explorable("nope", {})
    with pytest.raises(ValueError, match="more than"):
        explore.Explorable("hopfield", {"x": "a" * explore.MAX_PAYLOAD})


def test_every_label_of_the_module_is_translated_in_explore_po():
    """One source for the strings: t("...") in explore.js, the Japanese in
    locale/ja/LC_MESSAGES/explore.po (the book injects it, see explorables)."""
    from babel.messages.extract import extract_from_file
    from babel.messages.pofile import read_po

    root = explore.STATIC.parents[2]
    found = {
        m
        for _l, m, _c, _x in extract_from_file(
            "javascript",
            str(explore.STATIC / "explore.js"),
            keywords={"t": None},
        )
    }
    with (root / "locale/ja/LC_MESSAGES/explore.po").open("rb") as f:
        catalog = {m.id: m for m in read_po(f) if m.id}
    missing = sorted(found - set(catalog))
    assert not missing, f"not in explore.po: {missing}"
    assert not sorted(set(catalog) - found), "stale entries in explore.po"
    for message in catalog.values():
        assert message.string and not message.fuzzy, message.id
        assert set(re.findall(r"\{\w+\}", message.id)) == set(
            re.findall(r"\{\w+\}", message.string)
        ), message.id
