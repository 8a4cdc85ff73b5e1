"""One small, deterministic training loop for every lesson: full-batch by
default (the book's data sets are small), Adam, CPU, seeded by ``setup()``."""

import time
from collections.abc import Callable

import torch
from torch import Tensor, nn
from torch.nn import functional as F

LOSSES = {"cross_entropy": F.cross_entropy, "mse": F.mse_loss}
OPTIMIZERS = {"adam": torch.optim.Adam, "sgd": torch.optim.SGD}


def _pick(options: dict, name: str, what: str):
    if name not in options:
        raise ValueError(
            f"unknown {what} {name!r}; choose from {sorted(options)}"
        )
    return options[name]


def fit(
    model: nn.Module,
    x: Tensor,
    y: Tensor,
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

    ``batch_size=None`` trains full-batch, else on mini-batches in an order
    drawn from torch's seeded generator. ``params`` restricts training to a
    subset (the rest stay frozen); ``callback(epoch, model)`` sees the model
    after every epoch; ``progress=True`` prints four progress lines.
    """
    if x.shape[0] != y.shape[0]:
        raise ValueError(
            f"fit: x {tuple(x.shape)} and y {tuple(y.shape)} differ in length"
        )
    if epochs < 1:
        raise ValueError(f"fit: epochs must be >= 1, got {epochs}")
    loss_fn = _pick(LOSSES, loss, "loss")
    make_optimizer = _pick(OPTIMIZERS, optimizer, "optimizer")
    if params is None:
        params = [p for p in model.parameters() if p.requires_grad]
    opt = make_optimizer(params, lr=lr, weight_decay=weight_decay)
    n = x.shape[0]
    bs = n if batch_size is None else batch_size
    history: list[float] = []
    start = time.perf_counter()
    model.train()
    for epoch in range(epochs):
        batches = [(x, y)]  # full batch: no shuffling, no copy of the data
        if bs < n:
            order = torch.randperm(n)
            parts = [order[i : i + bs] for i in range(0, n, bs)]
            batches = [(x[idx], y[idx]) for idx in parts]
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


def _one_label_per_row(x: Tensor, y: Tensor, who: str) -> None:
    # a (n, 1) column of labels would broadcast to n × n
    if y.ndim != 1 or y.shape[0] != x.shape[0]:
        raise ValueError(
            f"{who}: y {tuple(y.shape)} must be ({x.shape[0]},), one "
            f"label per row of x {tuple(x.shape)}"
        )


@torch.no_grad()
def accuracy(model: nn.Module, x: Tensor, y: Tensor) -> float:
    """Fraction of rows whose arg-max output equals the label (``y (n,)``)."""
    _one_label_per_row(x, y, "accuracy")
    model.eval()
    return float((model(x).argmax(-1) == y).float().mean())
