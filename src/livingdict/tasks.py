"""Synthetic sequence tasks for attention, generated in one vectorised call.

* ``associative_recall`` — ``k₁ v₁ k₂ v₂ … kₙ vₙ q``: ``n`` key/value pairs, then a
  query key ``q = kᵢ``; the answer is its value ``vᵢ``. Keys are distinct within a
  sequence, and so are values, so no position and no token frequency gives the
  answer away: a model must find *where* ``q`` occurred and read the token *after*
  it — two hops (Elhage et al. 2021; Olsson et al. 2022).
* ``copy_at_offset`` — random tokens; the answer is the token ``offset`` places
  before the last one. One fixed, positional hop: the control that one attention
  layer solves.

Token ids: keys are ``0 … n_keys − 1``, values ``n_keys … n_keys + n_values − 1``
(``Batch.vocab`` ids in all). Every generator takes an optional ``torch.Generator``;
``None`` draws from torch's global generator (seeded by ``livingdict.setup()``).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = ["Batch", "associative_recall", "copy_at_offset"]


@dataclass(frozen=True)
class Batch:
    """A batch of sequences and their answers.

    ``tokens (batch, length)`` int64 inputs; ``targets (batch,)`` int64 answers (the
    token the model should predict after the last position); ``source (batch,)``
    int64, the position whose token *is* the answer (where a perfect reader looks);
    ``vocab`` the number of token ids.
    """

    tokens: torch.Tensor
    targets: torch.Tensor
    source: torch.Tensor
    vocab: int

    def __len__(self) -> int:
        return self.tokens.shape[0]

    @property
    def length(self) -> int:
        """Sequence length ``L``."""
        return self.tokens.shape[1]


def _distinct(
    batch: int, n: int, pool: int, generator: torch.Generator | None
) -> torch.Tensor:
    """``(batch, n)`` ids drawn without replacement from ``0 … pool − 1`` per row."""
    return torch.rand(batch, pool, generator=generator).argsort(dim=1)[:, :n]


def associative_recall(
    batch: int,
    n_pairs: int,
    n_keys: int,
    n_values: int | None = None,
    *,
    generator: torch.Generator | None = None,
) -> Batch:
    """Sequences ``k₁ v₁ … kₙ vₙ q`` (length ``2n + 1``) with answer ``vᵢ`` where ``q = kᵢ``.

    Keys are drawn without replacement from ``0 … n_keys − 1``, values without
    replacement from ``n_keys … n_keys + n_values − 1`` (``n_values`` defaults to
    ``n_keys``), the queried pair ``i`` uniformly. ``source = 2i + 1`` is the position
    of the answer. A reader that knows only that the answer is one of the ``n``
    values in view is right with probability ``1/n`` (chance).

    Raises ``ValueError`` when ``batch < 1``, ``n_pairs < 1``, or there are fewer
    keys or values than pairs.
    """
    n_values = n_keys if n_values is None else n_values
    if batch < 1 or n_pairs < 1:
        raise ValueError(
            f"associative_recall: need batch >= 1 and n_pairs >= 1, got {batch}, {n_pairs}"
        )
    if n_keys < n_pairs or n_values < n_pairs:
        raise ValueError(
            f"associative_recall: {n_pairs} pairs need at least as many distinct keys and "
            f"values, got n_keys={n_keys}, n_values={n_values}"
        )
    keys = _distinct(batch, n_pairs, n_keys, generator)
    values = _distinct(batch, n_pairs, n_values, generator) + n_keys
    which = torch.randint(n_pairs, (batch,), generator=generator)
    pairs = torch.stack([keys, values], dim=2).reshape(batch, 2 * n_pairs)
    query = keys.gather(1, which[:, None])
    targets = values.gather(1, which[:, None])[:, 0]
    return Batch(
        torch.cat([pairs, query], dim=1),
        targets,
        2 * which + 1,
        n_keys + n_values,
    )


def copy_at_offset(
    batch: int,
    length: int,
    vocab: int,
    offset: int,
    *,
    generator: torch.Generator | None = None,
) -> Batch:
    """Uniform random tokens ``x₀ … x_{L−1}``; the answer is ``x_{L−1−offset}``.

    ``offset = 0`` copies the last token, ``offset = L − 1`` the first. The answer's
    position is the same in every sequence, so one attention layer can read it
    positionally. Raises ``ValueError`` unless ``batch, length >= 1``, ``vocab >= 2``
    and ``0 <= offset < length``.
    """
    if batch < 1 or length < 1 or vocab < 2:
        raise ValueError(
            f"copy_at_offset: need batch >= 1, length >= 1, vocab >= 2, got "
            f"{batch}, {length}, {vocab}"
        )
    if not 0 <= offset < length:
        raise ValueError(
            f"copy_at_offset: offset must lie in [0, {length}), got {offset}"
        )
    tokens = torch.randint(vocab, (batch, length), generator=generator)
    src = length - 1 - offset
    return Batch(
        tokens, tokens[:, src].clone(), torch.full((batch,), src), vocab
    )
