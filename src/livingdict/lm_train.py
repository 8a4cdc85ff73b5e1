"""How the book's language model (``livingdict.lm``) was made: the corpus
extract, the word-piece vocabulary and the one deterministic training run.

Nothing here runs at lesson time; ``make model`` calls :func:`main`, which
writes ``src/livingdict/lmdata/`` (the checkpoints, the config, the loss log).
``make corpus`` re-extracts the corpus and the vocabulary (Python 3.11.7).
"""

import argparse
import ast
import hashlib
import json
import lzma
import math
import multiprocessing
import re
import sys
import sysconfig
import time
import unicodedata
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
from torch import Tensor
from torch.nn import functional as F

from . import lm

#: The interpreter whose documentation the committed extract comes from.
PYTHON_VERSION = (3, 11, 7)
#: Standard-library folders left out: tests, the IDE, the 2to3 fixers,
#: codec tables and bundled installers hold little English prose.
SKIP_PARTS = {
    "idlelib",
    "lib2to3",
    "site-packages",
    "turtledemo",
    "ensurepip",
    "pydoc_data",
    "encodings",
    "__pycache__",
    "venv",
}
MIN_DOCSTRING = 40  # characters; shorter docstrings are mostly "Return x."


def to_ascii(text: str) -> str:
    """NFKD-fold to printable ASCII (é → e); tabs become four spaces, other
    control and non-ASCII characters are dropped (22 of 2 M characters)."""
    text = unicodedata.normalize("NFKD", text).replace("\t", "    ")
    return "".join(c for c in text if c == "\n" or " " <= c <= "~")


_NOT_PROSE = re.compile(r"\s|>>>|[-*+|=.:#]|[0-9]+[.)] ")


def reflow(text: str) -> str:
    """Join the hard-wrapped lines of prose paragraphs with spaces: a
    paragraph (lines between blank lines) is prose when no line starts with
    whitespace, ``>>>``, a bullet, a table or underline character. Code,
    lists and tables keep their lines. (A wrapped word would otherwise
    start its line without its space and become another token.)"""
    paras = text.split("\n\n")
    for i, para in enumerate(paras):
        lines = para.split("\n")
        if len(lines) > 1 and not any(_NOT_PROSE.match(x) for x in lines):
            paras[i] = " ".join(x.strip() for x in lines)
    return "\n\n".join(paras)


def extract_corpus() -> list[dict]:
    """The documents of the corpus, in a fixed order: every topic of
    ``pydoc_data.topics`` (the Language Reference, as ``help()`` shows it),
    then every docstring of at least ``MIN_DOCSTRING`` characters of a
    module, class or function of the standard library's Python sources
    (parsed with ``ast``, nothing imported), duplicates dropped, then
    folded to ASCII (:func:`to_ascii`) and reflowed (:func:`reflow`). Both are
    © Python Software Foundation, under the PSF License Agreement.
    """
    if sys.version_info[:3] != PYTHON_VERSION:
        raise ValueError(
            f"extract_corpus: the extract is pinned to Python "
            f"{PYTHON_VERSION}, this is {sys.version_info[:3]}"
        )
    from pydoc_data.topics import topics

    docs = [
        {"source": f"pydoc_data.topics:{name}", "text": topics[name]}
        for name in sorted(topics)
    ]
    root = Path(sysconfig.get_paths()["stdlib"])
    seen: set[str] = set()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if any(p in SKIP_PARTS or p.startswith("test") for p in rel.parts):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module = ".".join(rel.with_suffix("").parts)
        for node in ast.walk(tree):
            if not isinstance(
                node,
                ast.Module
                | ast.ClassDef
                | ast.FunctionDef
                | ast.AsyncFunctionDef,
            ):
                continue
            doc = ast.get_docstring(node, clean=True)
            if not doc or len(doc) < MIN_DOCSTRING or doc in seen:
                continue
            seen.add(doc)
            name = getattr(node, "name", "")
            docs.append({"source": f"{module}:{name}", "text": doc})
    for d in docs:
        d["text"] = reflow(to_ascii(d["text"]).strip("\n"))
    return [d for d in docs if d["text"]]


def train_bpe(text: str, vocab_size: int) -> dict:
    """Byte-pair merges learned on ``text`` (Sennrich et al. 2016): start
    from its characters, repeatedly merge the most frequent adjacent pair
    inside a pre-token (ties: the larger pair as strings), until the
    vocabulary has ``vocab_size`` entries. Deterministic. Returns
    ``{"alphabet": [...], "merges": [[a, b], ...]}``.
    """
    words = Counter(lm.PRETOKEN.findall(text))
    alphabet = sorted({c for w in words for c in w})
    if vocab_size <= len(alphabet):
        raise ValueError(
            f"train_bpe: vocab_size {vocab_size} <= alphabet {len(alphabet)}"
        )
    seqs = [list(w) for w in words]
    freq = list(words.values())
    pairs: Counter = Counter()
    where: dict = defaultdict(set)
    for i, s in enumerate(seqs):
        for pair in zip(s, s[1:], strict=False):
            pairs[pair] += freq[i]
            where[pair].add(i)
    merges = []
    while len(alphabet) + len(merges) < vocab_size and pairs:
        best = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))[0]
        merges.append(list(best))
        joined = best[0] + best[1]
        for i in sorted(where.pop(best)):
            s = seqs[i]
            for pair in zip(s, s[1:], strict=False):
                pairs[pair] -= freq[i]
                if pairs[pair] <= 0:
                    del pairs[pair]
            out, j = [], 0
            while j < len(s):
                if j + 1 < len(s) and (s[j], s[j + 1]) == best:
                    out.append(joined)
                    j += 2
                else:
                    out.append(s[j])
                    j += 1
            seqs[i] = out
            for pair in zip(out, out[1:], strict=False):
                pairs[pair] += freq[i]
                where[pair].add(i)
        pairs.pop(best, None)
    return {"alphabet": alphabet, "merges": merges}


def write_corpus(
    data: Path = lm.DATA, vocab_size: int = lm.VOCAB_SIZE
) -> None:
    """``make corpus``: write ``corpus.jsonl.xz`` and ``vocab.json``."""
    docs = extract_corpus()
    lines = "".join(json.dumps(d, ensure_ascii=True) + "\n" for d in docs)
    (data / "corpus.jsonl.xz").write_bytes(
        lzma.compress(lines.encode(), preset=9 | lzma.PRESET_EXTREME)
    )
    train_text, _ = lm.split_text(docs)
    vocab = train_bpe(train_text, vocab_size)
    (data / "vocab.json").write_text(json.dumps(vocab, indent=0) + "\n")
    print(f"{len(docs)} documents, {len(lines)} characters of JSON lines")


@dataclass(frozen=True)
class TrainConfig:
    """Everything that decides the weights (with the corpus and vocab).

    ``repeat_fraction > 0`` mixes in a copying curriculum
    (:func:`repeat_spans`), used by the ``"repeats"`` models only (see
    :data:`REPEAT_FRACTION`); within this budget it grew no induction head
    either, see ``lmdata/PROVENANCE.md``."""

    seed: int = 0
    model: lm.LMConfig = field(default_factory=lm.LMConfig)
    steps: int = 2000
    batch_size: int = 16
    lr: float = 3e-3
    warmup: int = 50
    min_lr_fraction: float = 0.1
    weight_decay: float = 0.1
    betas: tuple[float, float] = (0.9, 0.95)
    grad_clip: float = 1.0
    threads: int = 1
    eval_every: int = 100
    repeat_fraction: float = 0.0
    repeat_min: int = 12
    repeat_max: int = 64

    def to_json(self) -> dict:
        return asdict(self)

    @staticmethod
    def from_json(d: dict) -> "TrainConfig":
        d = dict(d)
        d["model"] = lm.LMConfig(**d["model"])
        d["betas"] = tuple(d["betas"])
        return TrainConfig(**d)


def repeat_spans(
    batch: Tensor, cfg: "TrainConfig", gen: torch.Generator
) -> Tensor:
    """The copying curriculum: the first ``round(repeat_fraction · B)``
    windows of a batch become ``ℓ`` uniformly random token ids (``ℓ``
    uniform in ``[repeat_min, repeat_max]``), repeated to fill the window:
    ``s s s …``. The rest stay plain text. Nothing in a random span can be
    predicted but by copying it from earlier in the window."""
    batch = batch.clone()
    k = round(cfg.repeat_fraction * batch.shape[0])
    lengths = torch.randint(
        cfg.repeat_min, cfg.repeat_max + 1, (k,), generator=gen
    )
    span = batch.shape[1]
    for i, n in enumerate(lengths.tolist()):
        seq = torch.randint(cfg.model.vocab_size, (n,), generator=gen)
        batch[i] = seq.repeat(-(-span // n))[:span]
    return batch


def learning_rate(cfg: TrainConfig, step: int) -> float:
    """Linear warm-up for ``warmup`` steps, then cosine decay to
    ``min_lr_fraction · lr`` at the last step."""
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    t = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
    lo = cfg.min_lr_fraction
    return cfg.lr * (lo + (1 - lo) * 0.5 * (1 + math.cos(math.pi * t)))


def _optimizer(model: lm.LM, cfg: TrainConfig) -> torch.optim.AdamW:
    # weight decay on matrices only (not on biases, norms, embeddings)
    decay, rest = [], []
    for name, p in model.named_parameters():
        matrix = p.ndim == 2 and "embed" not in name
        (decay if matrix else rest).append(p)
    groups = [
        {"params": decay, "weight_decay": cfg.weight_decay},
        {"params": rest, "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=cfg.betas)


def train(
    cfg: TrainConfig,
    steps: int | None = None,
    progress: str = "",
) -> tuple[lm.LM, dict, dict]:
    """Train one model from ``cfg``; returns ``(model, init_state, log)``.

    Each step draws ``batch_size`` windows of ``context + 1`` tokens at
    uniformly random offsets of the training tokens (torch generator seeded
    with ``seed``) and takes one AdamW step on the mean next-token
    cross-entropy. ``steps`` stops early (the provenance test); the
    schedule is still the one of ``cfg.steps``. ``log["loss"]`` holds every
    step's training loss, ``log["heldout"]`` the held-out loss and
    ``log["copying"]`` the two repeats' losses every ``eval_every`` steps.
    A non-empty ``progress`` prints a line with that label as it goes.
    """
    torch.set_num_threads(cfg.threads)
    torch._C._set_deterministic_algorithms(True)
    model = lm.initial_model(cfg.model, cfg.seed)
    init = {k: v.clone() for k, v in model.state_dict().items()}
    data = lm.tokens("train")
    heldout = lm.heldout_windows()
    gen = torch.Generator().manual_seed(cfg.seed)
    opt = _optimizer(model, cfg)
    span = cfg.model.context + 1
    seqs = lm.repeated_random()
    log: dict = {"loss": [], "heldout": [], "copying": [], "seconds": 0.0}
    start = time.perf_counter()
    n_steps = cfg.steps if steps is None else steps
    for step in range(n_steps):
        if step % cfg.eval_every == 0:
            log["heldout"].append([step, lm.mean_loss(model, heldout)])
            log["copying"].append([step, *lm.copying_losses(model, seqs)])
            model.train()
        for group in opt.param_groups:
            group["lr"] = learning_rate(cfg, step)
        offsets = torch.randint(
            len(data) - span, (cfg.batch_size,), generator=gen
        )
        batch = repeat_spans(
            data[offsets[:, None] + torch.arange(span)], cfg, gen
        )
        logits = model(batch[:, :-1])
        loss = F.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1)
        )
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        log["loss"].append(round(loss.item(), 6))
        if progress and step % cfg.eval_every == 0:
            print(
                f"{progress} step {step:>5}/{n_steps}  loss {loss.item():.3f} "
                f"held-out {log['heldout'][-1][1]:.3f}  copying "
                f"{log['copying'][-1][1]:.2f} -> {log['copying'][-1][2]:.2f}"
                f"  ({time.perf_counter() - start:.0f} s, "
                f"cpu {time.process_time():.0f} s)",
                flush=True,
            )
    if steps is None:
        log["heldout"].append([cfg.steps, lm.mean_loss(model, heldout)])
        log["copying"].append([cfg.steps, *lm.copying_losses(model, seqs)])
    log["seconds"] = round(time.perf_counter() - start, 1)
    model.eval()
    return model, init, log


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def report(model: lm.LM) -> dict:
    """Numbers the note reports: held-out loss, copying, head scores."""
    windows = lm.heldout_windows()
    seqs = lm.repeated_random()
    first, second = lm.copying_losses(model, seqs)
    scores = lm.head_scores(model, seqs)
    return {
        "heldout_loss": lm.mean_loss(model, windows),
        "first_repeat_loss": first,
        "second_repeat_loss": second,
        "induction_score": float(scores.induction.max()),
        "previous_token_score": float(scores.previous_token.max()),
        "induction_by_head": scores.induction.tolist(),
        "previous_token_by_head": scores.previous_token.tolist(),
    }


#: The repeated share of each batch for the models trained with the copying
#: curriculum (``lm.MODELS``' ``"repeats"``): a quarter of the windows.
REPEAT_FRACTION = 0.25
#: Which trained models are committed with their weights; the one-layer
#: controls are committed as their records only (lessons compare with their
#: logged held-out loss, copying losses and head scores, which ``report``
#: measured on the weights as packed), to keep ``lmdata/`` near 6 MB.
COMMITTED_WEIGHTS = ("main", "repeats")


def run_config(which: str, seed: int, **changes) -> TrainConfig:
    """The config ``make model`` trains ``which`` (a key of ``lm.MODELS``)
    with: the defaults, its number of layers, and for the ``repeats``
    curriculum ``repeat_fraction = REPEAT_FRACTION``."""
    n_layers, curriculum = lm.MODELS[which]
    base = {"repeat_fraction": REPEAT_FRACTION} if curriculum else {}
    cfg = TrainConfig(
        seed=seed,
        model=lm.LMConfig(n_layers=n_layers),
        **(base | changes),
    )
    return TrainConfig.from_json(asdict(cfg))  # as the record stores it


def _train_one(job: tuple[str, dict]) -> dict:
    # one training run in a worker process: the packed weights (as
    # committed), the initial weights' digest, the log and the report
    which, cfg_json = job
    cfg = TrainConfig.from_json(cfg_json)
    model, init, log = train(cfg, progress=which)
    packed = lm.pack(model.state_dict())
    model.load_state_dict(lm.unpack(packed))  # measured as committed
    return {
        "which": which,
        "packed": packed,
        "init": lm.state_digest(init),
        "log": log,
        "report": report(model),
    }


def main(argv: list[str] | None = None) -> None:
    """``make model [SEED=…]``: train, for one seed, the main model, the
    one-layer control, and both again with the copying curriculum, two at
    a time (``--jobs``, one thread each), and write them to ``--out``
    (default ``lmdata/``): weights (:func:`lm.pack`) and a JSON record."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--models", nargs="*", default=list(lm.MODELS))
    parser.add_argument("--out", type=Path, default=lm.DATA)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=None)
    parser.add_argument("--repeat-fraction", type=float, default=None)
    args = parser.parse_args(argv)
    given = {
        "steps": args.steps,
        "lr": args.lr,
        "repeat_fraction": args.repeat_fraction,
    }
    changes = {k: v for k, v in given.items() if v is not None}
    jobs = [
        (w, run_config(w, args.seed, **changes).to_json()) for w in args.models
    ]
    baselines = lm.baseline_losses()
    start = time.perf_counter()
    if args.jobs > 1:
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(min(args.jobs, len(jobs))) as pool:
            results = pool.map(_train_one, jobs, chunksize=1)
    else:
        results = [_train_one(j) for j in jobs]
    args.out.mkdir(parents=True, exist_ok=True)
    summary = {"baselines": baselines}
    for (which, cfg_json), res in zip(jobs, results, strict=True):
        n_layers, curriculum = lm.MODELS[which]
        name = lm.checkpoint_name(n_layers, args.seed, curriculum)
        summary[name] = res["report"] | {"seconds": res["log"]["seconds"]}
        sha = {"init": res["init"]}
        if which in COMMITTED_WEIGHTS:
            torch.save(res["packed"], args.out / f"{name}.pt")
            sha["weights"] = _sha(args.out / f"{name}.pt")
        record = {
            "config": cfg_json,
            "torch": torch.__version__,
            "python": sys.version.split()[0],
            "sha256": sha,
            "report": res["report"],
            "baselines": baselines,
            **res["log"],
        }
        (args.out / f"{name}.json").write_text(json.dumps(record) + "\n")
    summary["wall_seconds"] = round(time.perf_counter() - start, 1)
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
