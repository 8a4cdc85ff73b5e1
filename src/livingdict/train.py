"""One small, deterministic training loop for every lesson.

Full-batch by default (the book's data sets are small), Adam, CPU, seeded by
``livingdict.setup()``. ``fit`` returns the loss after every epoch;
``callback`` sees the model after every epoch (to record how the dictionary
changes).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import torch
from torch import nn
from torch.nn import functional as F

LOSSES: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "cross_entropy": F.cross_entropy,
    "mse": F.mse_loss,
}


def fit(
    model: nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    *,
    epochs: int = 200,
    lr: float = 1e-2,
    batch_size: int | None = None,
    loss: str = "cross_entropy",
    weight_decay: float = 0.0,
    optimizer: str = "adam",
    params: list[torch.nn.Parameter] | None = None,
    callback: Callable[[int, nn.Module], None] | None = None,
    progress: bool = False,
) -> list[float]:
    """Minimise ``loss(model(x), y)``; return the mean loss of every epoch.

    ``batch_size=None`` trains full-batch; otherwise mini-batches are drawn
    in an order fixed by torch's seeded generator. ``params`` restricts
    training to a subset (the rest stay frozen). ``optimizer`` is ``"adam"`` or
    ``"sgd"``. ``progress=True`` prints four progress lines. Raises
    ``ValueError`` when ``x`` and ``y`` disagree in length or an option is
    unknown.
    """
    if x.shape[0] != y.shape[0]:
        raise ValueError(
            f"fit: x {tuple(x.shape)} and y {tuple(y.shape)} differ in length"
        )
    if loss not in LOSSES:
        raise ValueError(
            f"fit: unknown loss {loss!r}; choose from {sorted(LOSSES)}"
        )
    if epochs < 1:
        raise ValueError(f"fit: epochs must be >= 1, got {epochs}")
    params = (
        [p for p in model.parameters() if p.requires_grad]
        if params is None
        else params
    )
    if optimizer == "adam":
        opt: torch.optim.Optimizer = torch.optim.Adam(
            params, lr=lr, weight_decay=weight_decay
        )
    elif optimizer == "sgd":
        opt = torch.optim.SGD(params, lr=lr, weight_decay=weight_decay)
    else:
        raise ValueError(
            f"fit: unknown optimizer {optimizer!r}; choose 'adam' or 'sgd'"
        )
    loss_fn = LOSSES[loss]
    n = x.shape[0]
    bs = n if batch_size is None else batch_size
    history: list[float] = []
    start = time.perf_counter()
    model.train()
    for epoch in range(epochs):
        if bs >= n:  # full batch: no shuffling, no copy of the data
            batches = [(x, y)]
        else:
            order = torch.randperm(n)
            batches = [
                (x[idx], y[idx])
                for idx in (order[i : i + bs] for i in range(0, n, bs))
            ]
        total = 0.0
        for xb, yb in batches:
            opt.zero_grad()
            batch_loss = loss_fn(model(xb), yb)
            batch_loss.backward()
            opt.step()
            total += batch_loss.item() * len(xb)
        history.append(total / n)
        if callback is not None:
            callback(epoch, model)
        if progress and (epoch + 1) % max(1, epochs // 4) == 0:
            print(
                f"epoch {epoch + 1:>5}/{epochs}  loss {history[-1]:.4f}  "
                f"({time.perf_counter() - start:.1f} s)"
            )
    model.eval()
    return history


@torch.no_grad()
def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    """Fraction of rows whose arg-max output equals the label.

    Raises ``ValueError`` unless ``y`` holds one label per row of ``x``
    (shape ``(n,)``: a ``(n, 1)`` column would broadcast to ``n × n``).
    """
    if y.ndim != 1 or y.shape[0] != x.shape[0]:
        raise ValueError(
            f"accuracy: y {tuple(y.shape)} must be ({x.shape[0]},), one "
            f"label per row of x {tuple(x.shape)}"
        )
    model.eval()
    return float((model(x).argmax(-1) == y).float().mean())
