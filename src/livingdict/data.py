"""Offline data only: nothing here touches the network. Every generator takes
a ``seed`` (``None``: the last ``setup()``'s) or, for sequences, a
``Generator`` (``None``: torch's global one).
"""

import gzip
import importlib.util
import os
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

import numpy as np
import torch
from torch import Generator, Tensor

from . import current_seed
from .repo import repo_root


@dataclass(frozen=True)
class Split:
    """A train/test split: float32 inputs ``(n, d)``, int64 labels ``(n,)``."""

    x_train: Tensor
    y_train: Tensor
    x_test: Tensor
    y_test: Tensor


def _seed(seed: int | None) -> int:
    return (current_seed() or 0) if seed is None else seed


def _tensors(x, y) -> tuple[Tensor, Tensor]:
    x = torch.as_tensor(np.asarray(x), dtype=torch.float32)
    return x, torch.as_tensor(np.asarray(y), dtype=torch.int64)


def _split(x, y, test_fraction: float, seed: int) -> Split:
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction {test_fraction} is not in (0, 1)")
    perm = np.random.default_rng(seed).permutation(len(y))
    n_test = int(round(test_fraction * len(y)))
    te, tr = perm[:n_test], perm[n_test:]
    return Split(*_tensors(x[tr], y[tr]), *_tensors(x[te], y[te]))


def digits_file() -> Path:
    """The digits file inside scikit-learn, found without importing it
    (``import sklearn.datasets`` costs about a second)."""
    spec = importlib.util.find_spec("sklearn")
    if spec is None or spec.origin is None:  # pragma: no cover
        raise ImportError("scikit-learn is not installed")
    return Path(spec.origin).parent / "datasets" / "data" / "digits.csv.gz"


def digits(test_fraction: float = 0.25, seed: int | None = None) -> Split:
    """scikit-learn's 1,797 bundled 8 × 8 digits (those of ``load_digits``),
    pixels scaled from 0..16 to [0, 1], in a shuffled train/test split."""
    with gzip.open(digits_file(), "rt") as f:
        table = np.loadtxt(f, delimiter=",", dtype=np.float32)
    x, y = table[:, :-1] / 16.0, table[:, -1].astype(np.int64)
    return _split(x, y, test_fraction, _seed(seed))


def cache_dir() -> Path | None:
    """Where generated data sets are kept between runs: ``$LIVINGDICT_CACHE``,
    else ``<repo>/_build/cache`` in a checkout of the book, else nowhere."""
    env = os.environ.get("LIVINGDICT_CACHE")
    if env:
        return Path(env)
    root = repo_root()
    return None if root is None else root / "_build" / "cache"


def mnist1d(num_samples: int = 5000, seed: int | None = None) -> Split:
    """MNIST-1D (Greydanus 2020), signals of length 40, generated locally by
    ``mnist1d.data.make_dataset`` (never its download), 80/20 split. With
    ``seed=42`` and 5,000 samples this is the published data set. The arrays
    are kept in ``cache_dir()`` (generating takes seconds) and read back.
    """
    if num_samples < 10:
        raise ValueError(f"mnist1d needs >= 10 samples, got {num_samples}")
    seed = _seed(seed)
    folder = cache_dir()
    name = f"mnist1d-{version('mnist1d')}-seed{seed}-n{num_samples}.npz"
    path = None if folder is None else folder / name
    if path is not None and path.is_file():
        d = dict(np.load(path))
    else:
        d = _make_mnist1d(num_samples, seed)
        if path is not None:
            folder.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp.npz")
            np.savez(tmp, **d)
            os.replace(tmp, path)  # atomic: a parallel run never reads half
    train, test = _tensors(d["x"], d["y"]), _tensors(d["x_test"], d["y_test"])
    return Split(*train, *test)


def _make_mnist1d(num_samples: int, seed: int) -> dict[str, np.ndarray]:
    from mnist1d.data import get_dataset_args, make_dataset

    args = get_dataset_args()
    args.num_samples, args.seed = num_samples, seed
    state = np.random.get_state()  # make_dataset reseeds the global generator
    try:
        d = make_dataset(args)
    finally:
        np.random.set_state(state)
    return {k: d[k] for k in ("x", "y", "x_test", "y_test")}


def xor(
    n: int = 400, noise: float = 0.15, seed: int | None = None
) -> tuple[Tensor, Tensor]:
    """``n`` points around the corners (±1, ±1); label 1 when the signs
    differ. Returns ``x (n, 2)`` float32 and ``y (n,)`` int64."""
    if n < 4 or noise < 0:
        raise ValueError(f"xor: need n >= 4, noise >= 0; got {n}, {noise}")
    rng = np.random.default_rng(_seed(seed))
    corners = rng.integers(0, 2, size=(n, 2)) * 2 - 1
    x = corners + noise * rng.standard_normal((n, 2))
    return _tensors(x, corners[:, 0] != corners[:, 1])


def checkerboard(
    n: int = 600, cells: int = 3, seed: int | None = None
) -> tuple[Tensor, Tensor]:
    """``n`` uniform points on ``[−c/2, c/2]²`` coloured like a c × c board,
    ``y = (⌊x₁ + c/2⌋ + ⌊x₂ + c/2⌋) mod 2``: no line beats the majority."""
    if n < 1 or cells < 2:
        raise ValueError(
            f"checkerboard: need n >= 1, cells >= 2; got {n}, {cells}"
        )
    half = cells / 2
    rng = np.random.default_rng(_seed(seed))
    x = rng.uniform(-half, half, size=(n, 2))
    cell = np.clip(np.floor(x + half), 0, cells - 1).astype(np.int64)
    return _tensors(x, (cell[:, 0] + cell[:, 1]) % 2)


def same_class_pairs(
    x: Tensor, y: Tensor, n_pairs: int, seed: int | None = None
) -> tuple[Tensor, Tensor]:
    """``n_pairs`` pairs ``[x_a, x_b]`` (shape ``(n_pairs, 2d)``) labelled
    ``1[y_a = y_b]``, half of them same-class, in shuffled order. A linear
    score ``w_a·x_a + w_b·x_b`` judges each half alone and cannot compare."""
    if x.ndim != 2 or y.shape != (x.shape[0],):
        raise ValueError(
            f"same_class_pairs: x {tuple(x.shape)} and y {tuple(y.shape)} "
            "do not match"
        )
    labels = y.numpy()
    classes, counts = np.unique(labels, return_counts=True)
    if n_pairs < 2 or len(classes) < 2 or counts.max() < 2:
        raise ValueError(
            f"same_class_pairs needs n_pairs >= 2 and two classes, one with "
            f"two members; got n_pairs={n_pairs}, counts {counts.tolist()}"
        )
    rng = np.random.default_rng(_seed(seed))
    members = {c: np.flatnonzero(labels == c) for c in classes}
    n_same = n_pairs // 2
    a, b = np.empty((2, n_pairs), dtype=np.int64)
    for i, c in enumerate(rng.choice(classes[counts >= 2], n_same)):
        a[i], b[i] = rng.choice(members[c], 2, replace=False)
    for i in range(n_same, n_pairs):
        ca, cb = rng.choice(classes, 2, replace=False)
        a[i], b[i] = rng.choice(members[ca]), rng.choice(members[cb])
    order = rng.permutation(n_pairs)
    a, b = a[order], b[order]
    same = torch.as_tensor((labels[a] == labels[b]).astype(np.int64))
    return torch.cat([x[a], x[b]], dim=1), same


@dataclass(frozen=True)
class Batch:
    """Sequences and their answers: ``tokens (batch, L)``, ``targets (batch,)``
    (the token to predict after the last position), ``source (batch,)`` (the
    position whose token is the answer) and ``vocab`` (the number of ids)."""

    tokens: Tensor
    targets: Tensor
    source: Tensor
    vocab: int

    def __len__(self) -> int:
        return self.tokens.shape[0]

    @property
    def length(self) -> int:
        """Sequence length ``L``."""
        return self.tokens.shape[1]


def _distinct(batch: int, n: int, pool: int, generator) -> Tensor:
    # (batch, n) ids drawn without replacement from 0 … pool − 1
    scores = torch.rand(batch, pool, generator=generator)
    return scores.argsort(dim=1)[:, :n]


def associative_recall(
    batch: int,
    n_pairs: int,
    n_names: int,
    n_entries: int | None = None,
    *,
    generator: Generator | None = None,
) -> Batch:
    """A phone book: ``a₁ b₁ … aₙ bₙ q`` (length ``2n + 1``) where ``q = aᵢ``;
    the answer is ``bᵢ`` at position ``source = 2i + 1``.

    Names are distinct ids from ``0 … n_names − 1``, entries distinct ids
    from ``n_names …``, the asked pair uniform: guessing among the entries in
    view is right 1/n of the time.
    """
    n_entries = n_names if n_entries is None else n_entries
    if batch < 1 or n_pairs < 1:
        raise ValueError(
            f"associative_recall: need batch >= 1, n_pairs >= 1; "
            f"got {batch}, {n_pairs}"
        )
    if n_names < n_pairs or n_entries < n_pairs:
        raise ValueError(
            f"associative_recall: {n_pairs} pairs need as many distinct "
            f"names and entries, got {n_names} names, {n_entries} entries"
        )
    names = _distinct(batch, n_pairs, n_names, generator)
    entries = _distinct(batch, n_pairs, n_entries, generator) + n_names
    asked = torch.randint(n_pairs, (batch,), generator=generator)
    pairs = torch.stack([names, entries], dim=2).reshape(batch, 2 * n_pairs)
    question = names.gather(1, asked[:, None])
    answer = entries.gather(1, asked[:, None])[:, 0]
    tokens = torch.cat([pairs, question], dim=1)
    return Batch(tokens, answer, 2 * asked + 1, n_names + n_entries)


def copy_at_offset(
    batch: int,
    length: int,
    vocab: int,
    offset: int,
    *,
    generator: Generator | None = None,
) -> Batch:
    """Random tokens ``x₀ … x_{L−1}``; the answer is ``x_{L−1−offset}``, the
    same position in every sequence (one attention layer reads it by
    position)."""
    if batch < 1 or length < 1 or vocab < 2 or not 0 <= offset < length:
        raise ValueError(
            f"copy_at_offset: need batch, length >= 1, vocab >= 2 and "
            f"0 <= offset < length; got {batch}, {length}, {vocab}, {offset}"
        )
    tokens = torch.randint(vocab, (batch, length), generator=generator)
    src = length - 1 - offset
    answer, source = tokens[:, src].clone(), torch.full((batch,), src)
    return Batch(tokens, answer, source, vocab)
