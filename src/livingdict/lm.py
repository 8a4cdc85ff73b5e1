"""One small language model, trained on real text, built from the book's
parts: a GPT-style decoder (Radford et al. 2019) whose feed-forward layers
are ``layers.MLPDictionary`` lookups and whose heads are
``layers.attention`` lookups.

    x⁰ = E[tokens] + P[positions]
    per block:  m = x + Σ_heads attention(LN₁(x))   (heads: lookups)
                x' = m + lookup(relu(LN₂(m) W₁ + b₁), W₂) + b₂
    logits = LN_f(x^L) W_U

*Pre-LayerNorm* (each sublayer reads a normalised copy, writes unnormalised
into the residual stream): the stream is then the plain sum of what every
sublayer wrote, so a value row ``W₂[j]`` is added to the stream as it is and
is read the way Geva et al. (2021) read it, through the final norm and the
unembedding (:func:`value_logits`).

The corpus is English documentation: the Python Language Reference and the
standard library's docstrings (Python 3.11.7, © PSF, PSF License; see
``lmdata/PROVENANCE.md``). Tokens are word pieces, a byte-pair vocabulary of
``VOCAB_SIZE`` entries learned on the training part (``lm_train.train_bpe``):
characters would make a unit's trigger context and the tokens its value
promotes read as letters; whole words would need a vocabulary larger than
the model. Word pieces read as words (`` the``, `` function``, ``ing``).

Training (``livingdict.lm_train``, ``make model``) is plain next-token
prediction on this text. Within its budget (4 M tokens) the model grew no
induction head, nor did it with a quarter of its windows replaced by
repeated random token spans (the ``"repeats"`` models; see
``lmdata/PROVENANCE.md``): a lesson must say so.

    load(which, seed)           committed models: "main", "init", "repeats"
    training_log(n_layers)      config, every step's loss, held-out losses
    heldout_windows(n)          the fixed held-out sample of token windows
    run(model, windows)         logits and the Trace, without gradients
    mean_loss, token_losses     next-token loss (nats/token)
    baseline_losses()           unigram and bigram on the same tokens
    generate, samples           deterministic continuations of prompts
    trigger_contexts(keys, …)   where an FFN unit fires, firing token marked
    value_logits, promoted_tokens  a value row through final norm + W_U
    repeated_random, copying_losses, head_scores  induction and copying
    effective_units, effective_positions          how soft the keys are
    reset(model, init, groups)  filters / values put back to their init
"""

import hashlib
import json
import lzma
import math
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np
import torch
from torch import Tensor, nn
from torch.nn import functional as F

from .layers import MLPDictionary, as_dictionary, attention
from .lookup import lookup
from .metrics import effective_keys

DATA = Path(__file__).parent / "lmdata"
VOCAB_SIZE = 2048
#: Every ``HELDOUT_EVERY``-th document (of the fixed order) is held out.
HELDOUT_EVERY = 10
#: Pre-tokens (GPT-2's rule on ASCII): a word with its leading space, a
#: number, a run of punctuation, whitespace. Merges stay inside a pre-token.
PRETOKEN = re.compile(r" ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+")


# --- the corpus and the tokenizer -------------------------------------------


@cache
def documents() -> tuple[dict, ...]:
    """The corpus: ``{"source", "text"}`` documents in their fixed order."""
    raw = lzma.decompress((DATA / "corpus.jsonl.xz").read_bytes()).decode()
    return tuple(json.loads(line) for line in raw.splitlines())


def split_text(docs: Sequence[dict]) -> tuple[str, str]:
    """``(train, heldout)`` text: every ``HELDOUT_EVERY``-th document is
    held out; documents are joined by a blank line."""
    parts: tuple[list[str], list[str]] = ([], [])
    for i, d in enumerate(docs):
        parts[i % HELDOUT_EVERY == HELDOUT_EVERY - 1].append(d["text"])
    return "\n\n".join(parts[0]), "\n\n".join(parts[1])


class Tokenizer:
    """Byte-pair word pieces: ``alphabet`` (characters) then one token per
    merge, in the order learned. ``encode`` applies the merges by rank
    inside each pre-token; ``decode(encode(t)) == t`` for ASCII text over
    the alphabet."""

    def __init__(self, alphabet: Sequence[str], merges: Sequence):
        self.vocab = list(alphabet) + [a + b for a, b in merges]
        self.index = {t: i for i, t in enumerate(self.vocab)}
        self.rank = {(a, b): r for r, (a, b) in enumerate(merges)}
        self._cache: dict[str, list[int]] = {}

    def __len__(self) -> int:
        return len(self.vocab)

    def _word(self, word: str) -> list[int]:
        if word in self._cache:
            return self._cache[word]
        missing = sorted({c for c in word if c not in self.index})
        if missing:
            raise ValueError(f"Tokenizer: characters {missing} not in vocab")
        parts, rank = list(word), self.rank
        while len(parts) > 1:
            # the pair of lowest rank; of equal ones, the first
            best, at = math.inf, -1
            for i in range(len(parts) - 1):
                r = rank.get((parts[i], parts[i + 1]), math.inf)
                if r < best:
                    best, at = r, i
            if at < 0:
                break
            parts[at : at + 2] = [parts[at] + parts[at + 1]]
        ids = [self.index[p] for p in parts]
        self._cache[word] = ids
        return ids

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``."""
        cache, out = self._cache, []
        for w in PRETOKEN.findall(text):
            ids = cache.get(w)
            out.extend(self._word(w) if ids is None else ids)
        return out

    def decode(self, ids: Iterable[int]) -> str:
        """The text of token ids (``ValueError`` outside the vocabulary)."""
        ids = [int(i) for i in ids]
        bad = [i for i in ids if not 0 <= i < len(self.vocab)]
        if bad:
            raise ValueError(f"decode: ids {bad[:5]} outside [0, {len(self)})")
        return "".join(self.vocab[i] for i in ids)


@cache
def tokenizer() -> Tokenizer:
    """The committed vocabulary (``lmdata/vocab.json``)."""
    v = json.loads((DATA / "vocab.json").read_text())
    return Tokenizer(v["alphabet"], v["merges"])


@cache
def tokens(split: str = "heldout") -> Tensor:
    """All token ids of ``"train"`` or ``"heldout"`` (int64, 1-D)."""
    if split not in ("train", "heldout"):
        raise ValueError(f"tokens: split must be train or heldout: {split!r}")
    text = split_text(documents())[split == "heldout"]
    return torch.tensor(tokenizer().encode(text), dtype=torch.int64)


def heldout_windows(n: int = 64, length: int | None = None) -> Tensor:
    """A fixed held-out sample: ``n`` windows of ``length`` tokens (default
    the context) at evenly spaced offsets of the held-out tokens,
    ``(n, length)``. The same on every call and machine."""
    length = LMConfig().context if length is None else length
    data = tokens("heldout")
    if n < 1 or length < 2 or n * length > len(data):
        raise ValueError(
            f"heldout_windows: n={n}, length={length} do not fit "
            f"{len(data)} held-out tokens"
        )
    starts = torch.linspace(0, len(data) - length, n).long()
    return data[starts[:, None] + torch.arange(length)]


def baseline_losses() -> dict[str, float]:
    """Held-out next-token loss (nats/token) of two count models fitted on
    the training tokens, on the same tokens :func:`mean_loss` scores:

    unigram  p(b) = (c(b) + 1) / (n + V)
    bigram   p(b | a) = λ c(a, b) / c(a) + (1 − λ) p_unigram(b),

    λ picked on the held-out windows themselves from a grid (a favour to
    the baseline)."""
    train, windows = tokens("train"), heldout_windows()
    v = VOCAB_SIZE
    uni = torch.bincount(train, minlength=v).double() + 1
    uni = uni / uni.sum()
    pair = torch.bincount(train[:-1] * v + train[1:], minlength=v * v)
    pair = pair.double().reshape(v, v)
    rows = pair.sum(1, keepdim=True)
    cond = torch.where(rows > 0, pair / rows.clamp(min=1), uni)
    a, b = windows[:, :-1].reshape(-1), windows[:, 1:].reshape(-1)
    out = {"unigram": -uni[b].log().mean().item()}
    out["bigram"] = min(
        -(lam * cond[a, b] + (1 - lam) * uni[b]).log().mean().item()
        for lam in np.linspace(0.05, 0.95, 19)
    )
    return out


# --- the model ---------------------------------------------------------------


@dataclass(frozen=True)
class LMConfig:
    """Sizes of the model (nanoGPT's CPU scale)."""

    vocab_size: int = VOCAB_SIZE
    context: int = 128
    d_model: int = 128
    n_layers: int = 2
    n_heads: int = 4
    d_ffn: int = 512

    def n_params(self) -> int:
        """The number of parameters of ``LM(self)``."""
        d, v, n = self.d_model, self.vocab_size, self.d_ffn
        block = 4 * d * d + 2 * d * n + n + d + 4 * d
        return v * d + self.context * d + self.n_layers * block + 2 * d + d * v


class Attention(nn.Module):
    """Causal multi-head attention: per head ``h``, with ``x`` the
    normalised stream,

        key_h = softmax(x W_Q,h (x W_K,h)ᵀ / √d_h)   (causal)
        z_h   = lookup(key_h, x W_V,h),  out = [z_1 … z_H] W_O

    (torch stores each ``W`` transposed: ``W_Q = wq.weight.T``, (d, d)).
    The filters are the rows of ``x W_K``; the values the rows of ``x W_V``.
    """

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(
                f"Attention: {n_heads} heads do not divide {d_model}"
            )
        self.n_heads = n_heads
        self.wq = nn.Linear(d_model, d_model, bias=False)
        self.wk = nn.Linear(d_model, d_model, bias=False)
        self.wv = nn.Linear(d_model, d_model, bias=False)
        self.wo = nn.Linear(d_model, d_model, bias=False)

    def forward(
        self, x: Tensor, ablate: Sequence[int] = ()
    ) -> tuple[Tensor, Tensor]:
        """``(out (B, T, d), key (B, H, T, T))``; heads in ``ablate`` write
        zero (their map is still returned)."""
        b, t, d = x.shape
        heads = [
            w(x).view(b, t, self.n_heads, -1).transpose(1, 2)
            for w in (self.wq, self.wk, self.wv)
        ]
        z, key = attention(*heads, causal=True)
        if len(ablate):
            keep = torch.ones(self.n_heads, 1, 1)
            keep[list(ablate)] = 0.0
            z = z * keep
        return self.wo(z.transpose(1, 2).reshape(b, t, d)), key


class Block(nn.Module):
    """``m = x + attn(LN₁(x))``, ``x' = m + ffn(LN₂(m))``; the FFN is
    ``Sequential(Linear, ReLU, Linear)`` computed as its dictionary."""

    def __init__(self, cfg: LMConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.attn = Attention(cfg.d_model, cfg.n_heads)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        self.mlp = nn.Sequential(
            nn.Linear(cfg.d_model, cfg.d_ffn),
            nn.ReLU(),
            nn.Linear(cfg.d_ffn, cfg.d_model),
        )

    @property
    def ffn(self) -> MLPDictionary:
        """The FFN as filters ``W₁`` (d, N), key, values ``W₂`` (N, d)."""
        return as_dictionary(self.mlp)


@dataclass
class Trace:
    """What a forward pass computed, per layer ``l`` (lists of length L):

    ``pre[l]``  stream entering block l            (B, T, d)
    ``mid[l]``  after its attention sublayer        (B, T, d)
    ``post[l]`` after its FFN sublayer              (B, T, d)
    ``maps[l]`` each head's attention key           (B, H, T, T)
    ``keys[l]`` the FFN key h = relu(LN₂(m) W₁ + b₁) (B, T, N)
    ``attn_out[l]``, ``ffn_out[l]``: what each sublayer wrote (B, T, d)
    """

    pre: list[Tensor] = field(default_factory=list)
    mid: list[Tensor] = field(default_factory=list)
    post: list[Tensor] = field(default_factory=list)
    maps: list[Tensor] = field(default_factory=list)
    keys: list[Tensor] = field(default_factory=list)
    attn_out: list[Tensor] = field(default_factory=list)
    ffn_out: list[Tensor] = field(default_factory=list)


class LM(nn.Module):
    """The decoder: embeddings, ``n_layers`` blocks, final norm, unembedding
    ``W_U = unembed.weight.T`` (d, V), untied from the embedding."""

    def __init__(self, cfg: LMConfig | None = None):
        super().__init__()
        cfg = LMConfig() if cfg is None else cfg
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos_embed = nn.Embedding(cfg.context, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.unembed = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        for name, p in self.named_parameters():
            if p.ndim == 2:  # GPT-2's init; residual writers scaled by depth
                std = 0.02
                if name.endswith(("wo.weight", "mlp.2.weight")):
                    std = 0.02 / math.sqrt(2 * cfg.n_layers)
                nn.init.normal_(p, std=std)
            elif "ln" not in name:
                nn.init.zeros_(p)

    def forward(
        self,
        idx: Tensor,
        *,
        trace: bool = False,
        ablate: Iterable[tuple[int, int]] = (),
        attn_residual: bool | Sequence[bool] = True,
    ) -> Tensor | tuple[Tensor, Trace]:
        """Logits ``(B, T, V)`` for token ids ``idx (B, T)``, ``T <=
        context``; with ``trace=True`` also the :class:`Trace`.

        ``ablate``: ``(layer, head)`` pairs whose output is zeroed.
        ``attn_residual=False`` (or one bool per layer) drops the residual
        path around attention: ``m = attn(LN₁(x))`` instead of ``x + …``.
        """
        if idx.ndim != 2 or idx.shape[1] > self.cfg.context:
            raise ValueError(
                f"LM: idx must be (B, T) with T <= {self.cfg.context}, got "
                f"{tuple(idx.shape)}"
            )
        if idx.numel() and (idx.min() < 0 or idx.max() >= self.cfg.vocab_size):
            raise ValueError(
                f"LM: token ids of idx {tuple(idx.shape)} outside "
                f"[0, {self.cfg.vocab_size})"
            )
        n = self.cfg.n_layers
        residual = (
            [attn_residual] * n
            if isinstance(attn_residual, bool)
            else list(attn_residual)
        )
        ablate = list(ablate)
        if len(residual) != n or any(
            not (0 <= l < n and 0 <= h < self.cfg.n_heads) for l, h in ablate
        ):
            raise ValueError(
                f"LM: attn_residual {len(residual)} flags for {n} layers, "
                f"ablate {ablate} for {n} layers x {self.cfg.n_heads} heads"
            )
        t = idx.shape[1]
        x = self.embed(idx) + self.pos_embed(torch.arange(t))
        tr = Trace()
        for l, block in enumerate(self.blocks):
            heads = [h for ll, h in ablate if ll == l]
            a, key = block.attn(block.ln1(x), heads)
            m = x + a if residual[l] else a
            ffn = block.ffn
            h = ffn.keys(block.ln2(m))
            f = lookup(h, ffn.values) + ffn.bias
            if trace:
                for lst, v in zip(
                    (
                        tr.pre,
                        tr.mid,
                        tr.maps,
                        tr.keys,
                        tr.attn_out,
                        tr.ffn_out,
                    ),
                    (x, m, key, h, a, f),
                    strict=True,
                ):
                    lst.append(v)
            x = m + f
            if trace:
                tr.post.append(x)
        logits = self.unembed(self.ln_f(x))
        return (logits, tr) if trace else logits


#: The training seeds whose models are committed (``make model SEED=…``).
TRAINING_SEEDS = (0, 1, 2)
#: What :func:`load` can load: ``(layers, curriculum)``; ``"init"`` is not a
#: file but the main model's initial weights, regenerated from its seed.
MODELS = {
    "main": (2, ""),
    "one_layer": (1, ""),
    "repeats": (2, "repeats"),
    "one_layer_repeats": (1, "repeats"),
}


#: The models whose records are committed, per training seed: the copying
#: curriculum's two (``"repeats"``, ``"one_layer_repeats"``) for seed 0 only,
#: where it failed to grow an induction head (``lmdata/PROVENANCE.md``);
#: ``make model SEED=…`` trains all four.
COMMITTED = {
    0: ("main", "one_layer", "repeats", "one_layer_repeats"),
    1: ("main", "one_layer"),
    2: ("main", "one_layer"),
}


def training_seed() -> int:
    """The training seed lessons load: ``$LIVINGDICT_TRAINING_SEED``, else
    0 (one of ``TRAINING_SEEDS``)."""
    env = os.environ.get("LIVINGDICT_TRAINING_SEED", "").strip() or "0"
    if not env.isdigit() or int(env) not in TRAINING_SEEDS:
        raise ValueError(
            f"LIVINGDICT_TRAINING_SEED must be one of {TRAINING_SEEDS}, "
            f"got {env!r}"
        )
    return int(env)


def checkpoint_name(
    n_layers: int = 2, seed: int = 0, curriculum: str = ""
) -> str:
    """File stem of a trained model, e.g. ``lm-2layer-seed0`` or, trained
    with repeated random sequences mixed in, ``lm-2layer-seed0-repeats``."""
    return f"lm-{n_layers}layer-seed{seed}" + (
        f"-{curriculum}" if curriculum else ""
    )


def pack(state: dict[str, Tensor]) -> dict[str, Tensor]:
    """The committed form of a state dict (about 1 byte per weight): each
    matrix row ``w`` as int8 ``q = round(127 w / max|w|)`` with its scale
    ``max|w| / 127`` in float16 (under ``name + ".scale"``); vectors in
    float16. :func:`unpack` inverts it up to that rounding."""
    out = {}
    for k, v in state.items():
        v = v.detach().float()
        if v.ndim == 2:
            scale = (v.abs().amax(1, keepdim=True) / 127).half()
            scale = torch.where(scale > 0, scale, torch.ones_like(scale))
            out[k] = torch.round(v / scale.float()).clamp(-127, 127)
            out[k] = out[k].to(torch.int8)
            out[k + ".scale"] = scale
        else:
            out[k] = v.half()
    return out


def unpack(packed: dict[str, Tensor]) -> dict[str, Tensor]:
    """A float32 state dict from :func:`pack`'s form: ``q · scale``."""
    return {
        k: v.float() * packed[k + ".scale"].float()
        if k + ".scale" in packed
        else v.float()
        for k, v in packed.items()
        if not k.endswith(".scale")
    }


def initial_model(cfg: "LMConfig", seed: int) -> LM:
    """The weights training starts from, regenerated: ``LM(cfg)`` right
    after ``torch.manual_seed(seed)``, as ``lm_train.train`` builds it
    (the global random state is left as it was)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return LM(cfg).eval()


def state_digest(state: dict[str, Tensor]) -> str:
    """SHA-256 of a state dict: each name (sorted) and its values as
    little-endian float32 bytes. The same on every machine."""
    h = hashlib.sha256()
    for k in sorted(state):
        h.update(k.encode())
        h.update(state[k].detach().float().contiguous().numpy().tobytes())
    return h.hexdigest()


def load(which: str = "main", seed: int | None = None) -> LM:
    """A trained model in eval mode, float32: ``"main"`` (two layers),
    ``"init"`` (the main model's initial weights, regenerated from its
    seed), ``"one_layer"``, and the two trained with repeated random
    sequences mixed into the text, ``"repeats"`` and
    ``"one_layer_repeats"``. ``seed`` defaults to :func:`training_seed`."""
    seed = training_seed() if seed is None else seed
    if which == "init":
        cfg = training_log(2, seed)["config"]
        return initial_model(LMConfig(**cfg["model"]), cfg["seed"])
    if which not in MODELS:
        raise ValueError(
            f"load: which must be one of {sorted([*MODELS, 'init'])}"
        )
    layers, curriculum = MODELS[which]
    path = DATA / f"{checkpoint_name(layers, seed, curriculum)}.pt"
    if not path.exists():
        raise ValueError(f"load: no checkpoint {path.name} (make model)")
    state = unpack(torch.load(path, weights_only=True))
    n_layers = 1 + max(
        int(k.split(".")[1]) for k in state if k.startswith("blocks.")
    )
    cfg = LMConfig(
        context=state["pos_embed.weight"].shape[0], n_layers=n_layers
    )
    model = LM(cfg)
    model.load_state_dict(state)
    return model.eval()


def training_log(
    n_layers: int = 2, seed: int | None = None, curriculum: str = ""
) -> dict:
    """The JSON record a training run wrote: config, every step's loss,
    held-out and copying losses during training, baselines, report."""
    seed = training_seed() if seed is None else seed
    path = DATA / f"{checkpoint_name(n_layers, seed, curriculum)}.json"
    if not path.exists():
        raise ValueError(f"training_log: no record {path.name} (make model)")
    return json.loads(path.read_text())


# --- analyses several lessons share ----------------------------------------


def run(model: LM, windows: Tensor, **forward) -> tuple[Tensor, Trace]:
    """``model(windows, trace=True, **forward)`` without gradients (a
    lesson's forward over the held-out sample: about 0.3 s)."""
    model.eval()
    with torch.no_grad():
        return model(windows, trace=True, **forward)


def token_losses(model: LM, windows: Tensor, **forward) -> Tensor:
    """Next-token cross-entropy (nats) at each position, ``(B, T-1)``:
    ``-log softmax(logits[:, t])[windows[:, t+1]]``."""
    with torch.no_grad():
        logits = model(windows[:, :-1], **forward)
    return F.cross_entropy(
        logits.transpose(1, 2), windows[:, 1:], reduction="none"
    )


def mean_loss(model: LM, windows: Tensor, **forward) -> float:
    """Mean next-token loss over ``windows`` (nats/token)."""
    model.eval()
    return token_losses(model, windows, **forward).mean().item()


def generate(
    model: LM,
    prompt: str,
    n_tokens: int = 40,
    temperature: float = 0.8,
    top_k: int = 20,
    seed: int = 0,
) -> str:
    """Continue ``prompt`` by sampling ``n_tokens`` tokens from the top
    ``top_k`` of ``softmax(logits / temperature)`` with a generator seeded
    by ``seed`` (deterministic). Returns the prompt and its continuation."""
    tok = tokenizer()
    ids = tok.encode(prompt)
    if not ids:
        raise ValueError("generate: empty prompt")
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for _ in range(n_tokens):
            x = torch.tensor([ids[-model.cfg.context :]])
            logits = model(x)[0, -1] / temperature
            top = torch.topk(logits, top_k)
            p = torch.softmax(top.values, -1)
            ids.append(
                int(top.indices[torch.multinomial(p, 1, generator=gen)])
            )
    return tok.decode(ids)


PROMPTS = (
    "The return value of this function is",
    "Raise a ValueError if",
    "A list of",
)


def samples(model: LM, prompts: Sequence[str] = PROMPTS) -> list[str]:
    """One deterministic continuation of each prompt (:func:`generate`)."""
    return [generate(model, p, seed=i) for i, p in enumerate(prompts)]


@dataclass(frozen=True)
class Trigger:
    """One position that makes a unit fire: the unit's key entry
    ``activation``, the ``before`` text, the firing ``token`` and the token
    that actually ``follows`` it."""

    activation: float
    window: int
    position: int
    before: str
    token: str
    follows: str

    @property
    def text(self) -> str:
        """``before ⟦token⟧ → follows``."""
        return f"{self.before}⟦{self.token}⟧ → {self.follows}"


def trigger_contexts(
    keys: Tensor, windows: Tensor, unit: int, k: int = 5, before: int = 8
) -> list[Trigger]:
    """The ``k`` positions of ``windows (B, T)`` with the largest key entry
    ``keys[b, t, unit]`` (``keys`` one layer's FFN key, ``(B, T, N)``; ties
    by position), each with ``before`` tokens of context. The last position
    of a window has no following token and is skipped."""
    if keys.ndim != 3 or keys.shape[:2] != windows.shape:
        raise ValueError(
            f"trigger_contexts: keys {tuple(keys.shape)} must be (B, T, N) "
            f"over windows {tuple(windows.shape)}"
        )
    if not 0 <= unit < keys.shape[2]:
        raise ValueError(f"trigger_contexts: unit {unit} of {keys.shape[2]}")
    tok = tokenizer()
    act = keys[:, :-1, unit].detach().reshape(-1)
    order = torch.argsort(act, descending=True, stable=True)[:k]
    t_max = keys.shape[1] - 1
    out = []
    for i in order.tolist():
        b, t = divmod(i, t_max)
        out.append(
            Trigger(
                activation=float(act[i]),
                window=b,
                position=t,
                before=tok.decode(windows[b, max(0, t - before) : t]),
                token=tok.decode(windows[b, t : t + 1]),
                follows=tok.decode(windows[b, t + 1 : t + 2]),
            )
        )
    return out


def value_logits(model: LM, layer: int) -> Tensor:
    """Each value row of ``layer``'s FFN read through the final norm and
    the unembedding, ``(N, V)``:

        logits_j = (γ ⊙ (W₂[j] − mean W₂[j]) / std W₂[j]) W_U

    (LN_f without its bias β, which adds the same vector for every unit)."""
    if not 0 <= layer < model.cfg.n_layers:
        raise ValueError(
            f"value_logits: layer {layer} of {model.cfg.n_layers}"
        )
    values = model.blocks[layer].ffn.values
    ln = model.ln_f
    with torch.no_grad():
        normed = F.layer_norm(
            values, ln.normalized_shape, ln.weight, None, ln.eps
        )
        return normed @ model.unembed.weight.T


def promoted_tokens(
    model: LM, layer: int, unit: int, k: int = 10
) -> list[str]:
    """The ``k`` tokens whose logit a value row raises most
    (:func:`value_logits`), as text."""
    logits = value_logits(model, layer)
    if not 0 <= unit < logits.shape[0]:
        raise ValueError(f"promoted_tokens: unit {unit} of {logits.shape[0]}")
    top = torch.topk(logits[unit], k).indices
    return [tokenizer().vocab[i] for i in top.tolist()]


def repeated_random(n: int = 32, length: int = 50, seed: int = 0) -> Tensor:
    """``n`` sequences of ``length`` uniformly random token ids, each
    repeated once: ``(n, 2 · length)``. On the first repeat nothing can be
    predicted; on the second a model that copies from context can."""
    if n < 1 or length < 2 or 2 * length > LMConfig().context:
        raise ValueError(
            f"repeated_random: n={n}, 2 x length={2 * length} must fit "
            f"the context {LMConfig().context}"
        )
    gen = torch.Generator().manual_seed(seed)
    first = torch.randint(VOCAB_SIZE, (n, length), generator=gen)
    return torch.cat([first, first], dim=1)


def copying_losses(model: LM, seqs: Tensor, **forward) -> tuple[float, float]:
    """Mean next-token loss on the first and on the second repeat of
    :func:`repeated_random` sequences (positions predicting tokens
    ``1 … L−1`` and ``L+1 … 2L−1``)."""
    half = seqs.shape[1] // 2
    losses = token_losses(model, seqs, **forward)  # predicts token t + 1
    return (
        losses[:, : half - 1].mean().item(),
        losses[:, half:].mean().item(),
    )


@dataclass(frozen=True)
class HeadScores:
    """Per head, ``(layers, heads)`` arrays of mean attention weight:
    ``previous_token`` on ``t − 1``; ``induction`` on ``t − L + 1``, the
    token after the previous occurrence of the current one."""

    previous_token: np.ndarray
    induction: np.ndarray


def head_scores(model: LM, seqs: Tensor) -> HeadScores:
    """Scores of every head on repeated random sequences ``(B, 2L)``:

    previous_token = mean over t ≥ 1 of key[t, t−1]
    induction      = mean over L ≤ t < 2L of key[t, t−L+1]
    """
    if seqs.ndim != 2 or seqs.shape[1] % 2:
        raise ValueError(f"head_scores: seqs {tuple(seqs.shape)} not (B, 2L)")
    half = seqs.shape[1] // 2
    _, tr = run(model, seqs)
    t = torch.arange(half, 2 * half)
    prev, ind = [], []
    for key in tr.maps:  # (B, H, T, T)
        diag = torch.arange(1, seqs.shape[1])
        prev.append(key[:, :, diag, diag - 1].mean((0, 2)))
        ind.append(key[:, :, t, t - half + 1].mean((0, 2)))
    return HeadScores(torch.stack(prev).numpy(), torch.stack(ind).numpy())


def effective_units(trace: Trace) -> list[np.ndarray]:
    """Per layer, the effective number of active FFN units of each token,
    ``exp H(h / Σh)`` (``metrics.effective_keys``), over the tokens with
    any active unit (a token with ``h = 0`` has none to count)."""
    out = []
    for h in trace.keys:
        rows = h.reshape(-1, h.shape[-1])
        out.append(effective_keys(rows[rows.sum(-1) > 0]))
    return out


def effective_positions(trace: Trace) -> list[np.ndarray]:
    """Per layer, ``(H, B·T)``: the effective number of positions each
    query attends to (at most ``t + 1`` for position ``t``)."""
    return [
        effective_keys(m.transpose(0, 1).reshape(m.shape[1], -1, m.shape[-1]))
        for m in trace.maps
    ]


#: Parameter groups per block (names under ``blocks.<l>.``): the filters
#: decide which slots a key weights, the values what the slots write.
GROUPS = {
    "ffn_filters": ("mlp.0.weight", "mlp.0.bias"),
    "attn_filters": ("attn.wq.weight", "attn.wk.weight"),
    "ffn_values": ("mlp.2.weight", "mlp.2.bias"),
    "attn_values": ("attn.wv.weight", "attn.wo.weight"),
}


def reset(
    model: LM,
    init: LM,
    groups: Iterable[str],
    layers: Iterable[int] | None = None,
) -> LM:
    """A copy of ``model`` whose parameters in ``groups`` (keys of
    ``GROUPS``; default all layers) are put back to ``init``'s."""
    groups = list(groups)
    unknown = [g for g in groups if g not in GROUPS]
    if unknown:
        raise ValueError(f"reset: unknown groups {unknown}; see GROUPS")
    n = model.cfg.n_layers
    layers = list(range(n)) if layers is None else list(layers)
    if init.cfg != model.cfg or any(not 0 <= l < n for l in layers):
        raise ValueError(
            f"reset: init {init.cfg} must match {model.cfg}; layers {layers}"
        )
    state = {k: v.clone() for k, v in model.state_dict().items()}
    start = init.state_dict()
    for l in layers:
        for g in groups:
            for name in GROUPS[g]:
                key = f"blocks.{l}.{name}"
                state[key] = start[key].clone()
    out = LM(model.cfg)
    out.load_state_dict(state)
    return out.eval()
