"""Explorables: a lesson's mechanism, recomputed in the reader's browser.

A lesson calls one function of this module on data it has already computed.
The function exports that data (weights, inputs, scores) as JSON, computes
with torch the numbers the page must show at a few control settings (the
``checks``), and returns an HTML output: a container, the JSON, and the one
shared front-end module ``static/explore.js`` (plain JavaScript on SVG, no
library, no network). The same output works in the rendered book (the Sphinx
extension ``book/_ext/explorables.py`` loads the module once per page and
drops the inlined copy) and in JupyterLab, Colab and VS Code, which run the
inlined module. Without JavaScript nothing is shown and the lesson's static
figure stands in. The browser test (``tests/browser/test_explorables.py``)
sets each check's controls and compares the page's numbers with the checks.

Arrays travel as base64 of little-endian bytes: ``float32``/``float64``
exactly, ``uint8`` as integers times ``1/scale`` (digit pixels are k/16).
"""

from __future__ import annotations

import base64
import html
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from livingdict.layers import attention
from livingdict.lookup import lookup, soft_keys

STATIC = Path(__file__).with_name("static")
#: the largest JSON payload one explorable may put on a page (bytes)
MAX_PAYLOAD = 200_000
#: what explore.js can draw, one kind per chapter
KINDS = (
    "filter_bank",
    "mlp_lookup",
    "attention_mixing",
    "hard_soft",
    "hopfield",
)


def encode(
    array: Any, dtype: str = "float32", scale: float = 1.0
) -> dict[str, Any]:
    """An array as ``{"shape", "dtype", "scale", "b64"}`` for the page.

    ``uint8`` stores ``round(a · scale)`` and refuses values that are not
    such integers in ``[0, 255]`` (the page divides by ``scale`` again).
    Raises ``ValueError`` for another ``dtype`` or an inexact ``uint8``.
    """
    a = np.asarray(torch.as_tensor(array).detach().cpu().numpy())
    if dtype in ("float32", "float64"):
        raw = a.astype("<f4" if dtype == "float32" else "<f8").tobytes()
    elif dtype == "uint8":
        q = np.rint(a * scale)
        if a.size and (
            np.abs(q - a * scale).max() > 1e-6 or q.min() < 0 or q.max() > 255
        ):
            raise ValueError(
                f"encode: array {a.shape} times {scale} is not in 0..255"
            )
        raw = q.astype(np.uint8).tobytes()
    else:
        raise ValueError(f"encode: dtype {dtype!r} is not float32/64 or uint8")
    return {
        "shape": list(a.shape),
        "dtype": dtype,
        "scale": scale,
        "b64": base64.b64encode(raw).decode("ascii"),
    }


def _floats(t: Any) -> Any:
    """Tensor → nested lists of Python floats (rounded to 9 digits)."""
    a = np.asarray(torch.as_tensor(t).detach().double().cpu().numpy())
    if a.ndim == 0:
        return float(f"{float(a):.9g}")
    return [_floats(v) for v in a]


@dataclass
class Explorable:
    """One explorable: what it draws (``kind``), its data, its checks.

    Displayed in a notebook, it is an HTML output (``_repr_html_``).
    """

    kind: str
    data: dict[str, Any]
    checks: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Explorable: unknown kind {self.kind!r}")
        if len(self.payload()) > MAX_PAYLOAD:
            raise ValueError(
                f"Explorable {self.kind}: {len(self.payload())} bytes of "
                f"data, more than {MAX_PAYLOAD}"
            )

    def payload(self) -> str:
        """The JSON the page reads, safe inside a ``<script>`` element."""
        text = json.dumps(
            {"kind": self.kind, "data": self.data, "checks": self.checks},
            separators=(",", ":"),
            allow_nan=False,
        )
        return text.replace("</", "<\\/")

    def _repr_html_(self) -> str:
        module = (STATIC / "explore.js").read_text(encoding="utf-8")
        style = (STATIC / "explore.css").read_text(encoding="utf-8")
        return (
            f'<div class="ld-explorable" data-kind="{html.escape(self.kind)}">'
            f'<script type="application/json" class="ld-data">'
            f"{self.payload()}</script></div>\n"
            f"<style data-ld-module>{style}</style>\n"
            f"<script data-ld-module>{module}</script>\n"
        )


def _pixels(x: Any) -> dict[str, Any]:
    """Digit pixels (k/16) exactly, else float32."""
    try:
        return encode(x, "uint8", 16.0)
    except ValueError:
        return encode(x, "float32")


def _check_index(name: str, i: int, n: int) -> None:
    if not 0 <= i < n:
        raise ValueError(f"{name}: index {i} outside [0, {n})")


def pearson_columns(x: Tensor, w: Tensor) -> Tensor:
    """Pearson correlation of the vector ``x (d,)`` with every column of
    ``w (d, N)``: centre both, scale to length 1, take inner products."""
    xc = x - x.mean()
    wc = w - w.mean(0, keepdim=True)
    return (xc / xc.norm()) @ (wc / wc.norm(dim=0, keepdim=True))


FILTER_SCALES = (0.25, 0.5, 1.0, 2.0, 4.0)


def filter_bank(
    W: Tensor,
    inputs: Tensor,
    labels: Sequence[int],
    filter_class: Sequence[int],
    probes: Sequence[int] = (0, 100, 200, 300, 400, 500, 600, 700),
) -> Explorable:
    """Chapter 1: the responses ``y = (s·x) W`` of a bank of filters (the
    columns of ``W (d, N)``) and their Pearson correlations with the input,
    for a picked or drawn input ``x`` scaled by ``s``. Raw responses grow
    with ``s``, correlations do not. ``inputs (n, d)`` are the digits to
    pick from, ``labels`` their classes, ``filter_class`` each filter's.
    """
    W, X = torch.as_tensor(W).float(), torch.as_tensor(inputs).float()
    if W.ndim != 2 or X.ndim != 2 or X.shape[1] != W.shape[0]:
        raise ValueError(
            f"filter_bank needs W (d, N) and inputs (n, d); got W "
            f"{tuple(W.shape)}, inputs {tuple(X.shape)}"
        )
    if len(labels) != len(X) or len(filter_class) != W.shape[1]:
        raise ValueError(
            f"filter_bank: {len(labels)} labels for {len(X)} inputs, "
            f"{len(filter_class)} classes for {W.shape[1]} filters"
        )
    checks = []
    for i, s in [(0, 2), (min(1, len(X) - 1), 4), (0, 0)]:
        x = FILTER_SCALES[s] * X[i]
        raw, corr = x @ W, pearson_columns(x, W)
        checks.append(
            {
                "controls": {"input": str(i), "scale": str(s)},
                "expect": {
                    "raw_max": _floats(raw.max()),
                    "raw_argmax": int(raw.argmax()),
                    "corr_max": _floats(corr.max()),
                    "corr_argmax": int(corr.argmax()),
                    "raw_at": _floats(raw[list(probes)]),
                    "corr_at": _floats(corr[list(probes)]),
                },
            }
        )
    data = {
        "W": _pixels(W),
        "inputs": _pixels(X),
        "labels": [int(v) for v in labels],
        "filter_class": [int(v) for v in filter_class],
        "scales": list(FILTER_SCALES),
        "probes": list(probes),
        "side": int(round(math.sqrt(W.shape[0]))),
    }
    return Explorable("filter_bank", data, checks)


def mlp_lookup(
    filters: Tensor,
    key_bias: Tensor,
    values: Tensor,
    bias: Tensor,
    inputs: Tensor,
    labels: Sequence[int],
    outputs: Tensor,
) -> Explorable:
    """Chapter 2: the trained MLP as a lookup. The key
    ``h = relu(x W₁ + b₁)`` (``filters`` = W₁ (d, N), ``key_bias`` = b₁)
    weighs the value rows of ``values`` = W₂ (N, C); the class scores are
    ``y = h W₂ + b₂``. ``outputs (n, C)`` are the model's own scores for
    ``inputs (n, d)`` (torch's forward pass): the page must reproduce them.
    """
    W1, b1 = torch.as_tensor(filters).float(), torch.as_tensor(key_bias)
    W2, b2 = torch.as_tensor(values).float(), torch.as_tensor(bias)
    X, out = torch.as_tensor(inputs).float(), torch.as_tensor(outputs)
    d, N = W1.shape
    if (
        W2.shape[0] != N
        or b1.shape != (N,)
        or b2.shape != (W2.shape[1],)
        or X.ndim != 2
        or X.shape[1] != d
        or out.shape != (len(X), W2.shape[1])
        or len(labels) != len(X)
    ):
        raise ValueError(
            f"mlp_lookup needs W1 (d, N), b1 (N,), W2 (N, C), b2 (C,), "
            f"inputs (n, d), outputs (n, C), n labels; got W1 "
            f"{tuple(W1.shape)}, b1 {tuple(b1.shape)}, W2 {tuple(W2.shape)}, "
            f"b2 {tuple(b2.shape)}, inputs {tuple(X.shape)}, outputs "
            f"{tuple(out.shape)}, {len(labels)} labels"
        )
    h = torch.relu(X @ W1 + b1)
    checks = [
        {
            "controls": {"input": str(i)},
            "expect": {
                "key": _floats(h[i]),
                "scores": _floats(out[i]),
                "predicted": int(out[i].argmax()),
            },
        }
        for i in sorted({0, len(X) // 2, len(X) - 1})
    ]
    data = {
        "W1": encode(W1),
        "b1": encode(b1),
        "W2": encode(W2),
        "b2": encode(b2),
        "inputs": _pixels(X),
        "labels": [int(v) for v in labels],
        "side": int(round(math.sqrt(d))),
    }
    return Explorable("mlp_lookup", data, checks)


def window_mask(length: int, window: int, causal: bool) -> Tensor:
    """``True`` where position ``t`` may read ``s``: ``|t − s| < window``,
    and ``s <= t`` when ``causal``."""
    if length < 1 or window < 1:
        raise ValueError(f"window_mask: length {length}, window {window}")
    t = torch.arange(length)
    dist = t[:, None] - t[None, :]
    allowed = dist.abs() < window
    return allowed & (dist >= 0) if causal else allowed


def mixing(p: Tensor) -> float:
    """Dobrushin's ``δ(P) = ½ max_{i,j} Σ_k |P_ik − P_jk|``."""
    return float(0.5 * (p[:, None, :] - p[None, :, :]).abs().sum(-1).max())


ATTENTION_BETAS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)


def attention_map(
    q: Tensor, k: Tensor, beta: float, causal: bool, window: int
) -> Tensor:
    """The map ``A = softmax(β q kᵀ/√d)`` with the causal and window masks
    (the package's ``layers.attention``, values the identity)."""
    L = q.shape[0]
    eye = torch.eye(L, dtype=q.dtype)
    _, a = attention(
        q,
        k,
        eye,
        scale=beta / math.sqrt(q.shape[1]),
        mask=window_mask(L, window, causal),
    )
    return a


def attention_mixing(
    q: Tensor, k: Tensor, layers: int = 8, position: int | None = None
) -> Explorable:
    """Chapter 3: the attention map of queries ``q (L, d)`` and filters
    ``k (L, d)``, ``A = softmax(β q kᵀ/√d)`` with a causal mask and a window
    of width ``w`` (position ``t`` reads ``s`` when ``|t − s| < w``), drawn
    as a matrix and as a graph; and how far position ``t`` has mixed after
    ``n = 1..layers`` layers: its own share ``(Mⁿ)_tt`` and ``δ(Mⁿ)`` for
    pure attention, ``M = A``, and with the residual, ``M = ½(I + A)``.
    """
    q, k = torch.as_tensor(q).double(), torch.as_tensor(k).double()
    if q.ndim != 2 or q.shape != k.shape or layers < 1:
        raise ValueError(
            f"attention_mixing needs q, k (L, d) and layers >= 1; got q "
            f"{tuple(q.shape)}, k {tuple(k.shape)}, layers {layers}"
        )
    L = q.shape[0]
    t_default = L // 2 if position is None else position
    _check_index("attention_mixing position", t_default, L)
    eye = torch.eye(L, dtype=q.dtype)
    checks = []
    settings = [(2, False, L, t_default), (4, True, 3, L - 1)]
    settings.append((0, True, L, t_default))
    for b, causal, w, t in settings:
        a = attention_map(q, k, ATTENTION_BETAS[b], causal, w)
        own = {"pure": [], "residual": []}
        delta = {"pure": [], "residual": []}
        for name, m in (("pure", a), ("residual", 0.5 * (eye + a))):
            for n in range(1, layers + 1):
                p = torch.linalg.matrix_power(m, n)
                own[name].append(float(p[t, t]))
                delta[name].append(mixing(p))
        checks.append(
            {
                "controls": {
                    "beta": str(b),
                    "causal": causal,
                    "window": str(w),
                    "position": str(t),
                },
                "expect": {
                    "map": _floats(a),
                    "own_pure": _floats(torch.tensor(own["pure"])),
                    "own_residual": _floats(torch.tensor(own["residual"])),
                    "delta_pure": _floats(torch.tensor(delta["pure"])),
                    "delta_residual": _floats(torch.tensor(delta["residual"])),
                },
            }
        )
    data = {
        "q": encode(q, "float64"),
        "k": encode(k, "float64"),
        "betas": list(ATTENTION_BETAS),
        "layers": layers,
        "position": t_default,
    }
    return Explorable("attention_mixing", data, checks)


def hard_soft(
    scores: Tensor,
    values: Tensor,
    names: Sequence[str],
    betas: Sequence[float],
    side: int = 8,
) -> Explorable:
    """Chapter 4: the soft key ``w = softmax(β s_j)`` over the dictionary
    for the query ``j`` (row ``j`` of ``scores (n, n)``) and the answer it
    reads, ``w V``, from the mean of all values (``β → 0``) to the entry's
    own value (``β = ∞``, the Python dict). The slider runs over ``betas``
    and then ``∞``; ``values (n, side²)`` are pictures."""
    s, V = torch.as_tensor(scores).float(), torch.as_tensor(values).float()
    n = len(names)
    if s.shape != (n, n) or V.ndim != 2 or V.shape[0] != n:
        raise ValueError(
            f"hard_soft needs scores (n, n), values (n, d), n names; got "
            f"scores {tuple(s.shape)}, values {tuple(V.shape)}, {n} names"
        )
    grid = [float(b) for b in betas]
    if not grid or min(grid) <= 0 or not all(map(math.isfinite, grid)):
        raise ValueError(f"hard_soft: betas must be finite and > 0: {grid}")
    checks = []
    j = min(3, n - 1)
    for b_index in (0, len(grid) // 2, len(grid)):
        beta = grid[b_index] if b_index < len(grid) else math.inf
        key = soft_keys(s[j], beta)
        answer = lookup(key[None], V)[0]
        err = (answer - V[j]).norm() / V[j].norm()
        checks.append(
            {
                "controls": {"beta": str(b_index), "query": str(j)},
                "expect": {
                    "key": _floats(key),
                    "answer": _floats(answer),
                    "error": _floats(err),
                    "to_mean": _floats((answer - V.mean(0)).norm()),
                },
            }
        )
    data = {
        "scores": encode(s),
        "values": encode(V),
        "names": list(names),
        "betas": grid,
        "query": j,
        "side": side,
    }
    return Explorable("hard_soft", data, checks)


HOPFIELD_COUNTS = (2, 5, 10, 14, 20, 30, 50, 100, 300, 1000)
HOPFIELD_BETAS = (0.01, 0.03, 0.1, 0.3, 1.0)


def hopfield_step(
    patterns: Tensor,
    order: Sequence[int],
    count: int,
    flip: float,
    beta: float,
) -> dict[str, Any]:
    """One attention step of a modern Hopfield network: the first ``count``
    stored ``patterns`` (±1), the query pattern 0 with its bits at
    ``order[:round(flip·d)]`` flipped; ``key = softmax(β ξ Xᵀ)``, answer
    ``sign(key X)``."""
    X = torch.as_tensor(patterns).double()[:count]
    d = X.shape[1]
    flips = list(order[: int(round(flip * d))])
    query = X[0].clone()
    query[flips] = -query[flips]
    key = soft_keys(query @ X.T, beta)
    read = lookup(key[None], X)[0]
    answer = torch.where(read >= 0, 1.0, -1.0).double()
    return {
        "key_own": _floats(key[0]),
        "wrong_query": int((query != X[0]).sum()),
        "wrong_answer": int((answer != X[0]).sum()),
        "read": _floats(read),
    }


def hopfield(
    patterns: Any,
    order: Sequence[int],
    counts: Sequence[int] = HOPFIELD_COUNTS,
    betas: Sequence[float] = HOPFIELD_BETAS,
) -> Explorable:
    """Beyond: corrupt stored pattern 0 by a chosen fraction of its bits
    (flipped in the fixed random ``order``, a permutation of ``0..d-1``)
    and read the first ``P`` stored ``patterns (P_max, d)`` (±1) with one
    attention step, ``sign(softmax(β ξ Xᵀ) X)``: recalled or not as ``P``
    grows."""
    X = torch.as_tensor(np.asarray(patterns)).double()
    if X.ndim != 2 or not bool(((X == 1) | (X == -1)).all()):
        raise ValueError(
            f"hopfield needs ±1 patterns (P, d); got {tuple(X.shape)}"
        )
    d = X.shape[1]
    if sorted(int(i) for i in order) != list(range(d)):
        raise ValueError(f"hopfield: order is no permutation of 0..{d - 1}")
    if max(counts) > len(X) or min(counts) < 1:
        raise ValueError(f"hopfield: counts {list(counts)} for {len(X)} kept")
    checks = []
    for c, f, b in [(2, 2, 4), (len(counts) - 1, 4, 4), (5, 6, 1)]:
        c, b = min(c, len(counts) - 1), min(b, len(betas) - 1)
        checks.append(
            {
                "controls": {"count": str(c), "flip": str(f), "beta": str(b)},
                "expect": hopfield_step(
                    X, order, counts[c], f * 0.05, betas[b]
                ),
            }
        )
    bits = np.packbits((X > 0).numpy().astype(np.uint8).ravel())
    data = {
        "bits": {
            "shape": [len(X), d],
            "b64": base64.b64encode(bits.tobytes()).decode("ascii"),
        },
        "order": [int(i) for i in order],
        "counts": [int(c) for c in counts],
        "betas": [float(b) for b in betas],
        "flip_step": 0.05,
        "side": int(round(math.sqrt(d))),
    }
    return Explorable("hopfield", data, checks)
