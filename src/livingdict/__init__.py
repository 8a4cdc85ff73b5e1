"""livingdict — the helper package of *The Living Dictionary*.

One module per idea, in the essay's words: the input is matched against
*filters*, the matches make a *key* (weights over slots), the key reads the
*values* (one row per slot). ``setup()`` starts every lesson; a mechanism
only one lesson teaches lives in that lesson, which shows package code with
``page.show``.

    lookup       the one operation: a key reads the weighted sum of value rows
    layers       a linear layer, an MLP and attention written as lookups
    networks     the MLPs (and seed ensembles) and the attention-only model
    maps         attention maps: the product through a stack, the graph
    projections  random matrices and random ReLU layers (chapter 1)
    data         offline data: digits, MNIST-1D, tasks in the plane, sequences
    train        one small deterministic training loop
    metrics      cosine, correlation, effective number of keys
    plot         the figure style and the figures several lessons draw
    page         what a page shows: glued numbers, the source of package code
    claims       the check behind every claim (the lessons' entry point), on
                 registry (claims.yml, verdicts, forms), conditions (their
                 kinds), ledger (records and their report), repo (the lessons)
"""

import os
import random

import numpy as np
import torch
from threadpoolctl import ThreadpoolController

__all__ = [
    "setup",
    "current_seed",
    "torch_threads",
    "DEFAULT_SEED",
    "TORCH_THREADS",
]
__version__ = "0.1.0"

DEFAULT_SEED = 0
#: Tiny models run faster on one thread than on two on a 2-core machine (the
#: six slowest lessons: 55 s against 378 s, sum of medians, ABBA order; the
#: second thread mostly waits), and one thread keeps results bit-for-bit
#: reproducible across machines. ``$LIVINGDICT_TORCH_THREADS`` overrides it.
TORCH_THREADS = 1

_seed: int | None = None


def current_seed() -> int | None:
    """The seed the last ``setup()`` used (``None`` before the first call)."""
    return _seed


def torch_threads() -> int:
    """Torch's intra-op threads: ``$LIVINGDICT_TORCH_THREADS`` if set (for the
    harness's thread measurement, ``tools.bench``), else ``TORCH_THREADS``."""
    env = os.environ.get("LIVINGDICT_TORCH_THREADS", "").strip()
    if not env:
        return TORCH_THREADS
    if not env.isdigit() or int(env) < 1:
        raise ValueError(
            f"LIVINGDICT_TORCH_THREADS must be an integer >= 1, got {env!r}"
        )
    return int(env)


def setup(seed: int | None = None) -> int:
    """Start a lesson: seed Python, NumPy and torch with ``seed`` (else
    ``$LIVINGDICT_SEED``, else ``DEFAULT_SEED``), give torch and NumPy's BLAS
    ``torch_threads()`` threads, turn on deterministic algorithms and apply
    the figure style. Returns the seed used."""
    global _seed
    if seed is None:
        env = os.environ.get("LIVINGDICT_SEED", "").strip()
        try:
            seed = int(env) if env else DEFAULT_SEED
        except ValueError as err:
            raise ValueError(
                f"LIVINGDICT_SEED must be an integer, got {env!r}"
            ) from err
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(torch_threads())
    # NumPy's BLAS too: on small arrays a second thread only waits (a 150 × 784
    # cosine matrix: 22-43 ms on 2 threads, 4-5 ms on 1)
    ThreadpoolController().limit(limits=torch_threads(), user_api="blas")
    # The public torch.use_deterministic_algorithms(True) imports
    # torch._inductor for torch.compile, which the book never uses: about one
    # floor of every lesson (measured: 5.4-8.0 s against 0.0 s, at load 15).
    # The flag it sets is this one.
    torch._C._set_deterministic_algorithms(True)
    from .figure_words import enable
    from .plot import use_style

    use_style()
    enable()  # the Japanese drawing of each figure, in the book's build
    _seed = seed
    return seed
