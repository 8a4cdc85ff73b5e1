"""livingdict — the helper package of *The Living Dictionary*.

One module per idea; the book's words are the essay's: the input is matched
against *filters*, the matches make a *key* (weights over slots), the key
reads the *values* (one row per slot).

    lookup       the one operation: a key reads the weighted sum of value rows
    layers       a linear layer, an MLP and attention written as lookups
    networks     the MLPs (and seed ensembles) and the attention-only model
    maps         attention maps as objects: masks, products, reach, mixing
    projections  random and structured matrices, and what they do to
                 similarity (chapter 1)
    data         offline data: digits, MNIST-1D, tasks in the plane, sequences
    train        one small deterministic training loop
    metrics      cosine, correlation, effective number of keys, drift
    plot         the figure style and the figures several lessons draw
    page         what a page shows: glued numbers, the source of package code
    claims       the check behind every claim; the registry, verdicts, lessons

``setup()`` starts every lesson. A mechanism only one lesson teaches lives in
that lesson; lessons show package code with ``page.show``.
"""

from __future__ import annotations

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
#: Tiny models run faster on one thread than on two on a 2-core machine: the
#: six slowest lessons took 55 s on 1 thread and 378 s on 2 (sum of medians,
#: ABBA order, 2 shared cores; with other work on the cores, torch's second
#: thread mostly waits). One thread also keeps results bit-for-bit
#: reproducible across machines. ``$LIVINGDICT_TORCH_THREADS`` overrides it,
#: for that measurement.
TORCH_THREADS = 1

_seed: int | None = None


def current_seed() -> int | None:
    """The seed the last ``setup()`` used (``None`` before the first call)."""
    return _seed


def torch_threads() -> int:
    """Torch's intra-op threads: ``$LIVINGDICT_TORCH_THREADS`` if set, else
    ``TORCH_THREADS``.

    The override exists for the harness's thread measurement (``tools.bench``).
    """
    env = os.environ.get("LIVINGDICT_TORCH_THREADS", "").strip()
    if not env:
        return TORCH_THREADS
    if not env.isdigit() or int(env) < 1:
        raise ValueError(
            f"LIVINGDICT_TORCH_THREADS must be an integer >= 1, got {env!r}"
        )
    return int(env)


def setup(seed: int | None = None) -> int:
    """Start a lesson: seed everything, pin torch's threads, apply the figure
    style.

    The seed is ``seed`` if given, else ``$LIVINGDICT_SEED`` if set, else
    ``DEFAULT_SEED``. Seeds Python's ``random``, NumPy's global generator and
    torch; gives torch and NumPy's BLAS ``torch_threads()`` threads; turns on
    deterministic algorithms; applies ``livingdict.plot.use_style()``. Returns
    the seed used.
    """
    global _seed
    if seed is None:
        env = os.environ.get("LIVINGDICT_SEED", "").strip()
        try:
            seed = int(env) if env else DEFAULT_SEED
        except ValueError as err:
            raise ValueError(
                f"LIVINGDICT_SEED must be an integer, got {env!r}"
            ) from err
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(torch_threads())
    # NumPy's BLAS too: on small arrays a second thread only waits (a 150 × 784
    # cosine matrix took 22-43 ms on 2 threads, 4-5 ms on 1, shared machine)
    ThreadpoolController().limit(limits=torch_threads(), user_api="blas")
    # torch.use_deterministic_algorithms(True) also imports torch._inductor to
    # tell torch.compile (1.4 s of every lesson); the book never compiles, so
    # set the flag itself
    torch._C._set_deterministic_algorithms(True)
    from .plot import use_style

    use_style()
    _seed = seed
    return seed
