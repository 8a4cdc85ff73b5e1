"""One small, deterministic training loop for every lesson: full-batch by
default (the book's data sets are small), Adam, CPU, seeded by ``setup()``."""

from collections.abc import Callable

import torch
from torch import Tensor, nn
from torch.nn import functional as F

LOSSES = {"cross_entropy": F.cross_entropy, "mse": F.mse_loss}
OPTIMIZERS = {"adam": torch.optim.Adam, "sgd": torch.optim.SGD}


def choose(options: dict, name: str, what: str):
    """``options[name]``, or a ``ValueError`` that lists the choices."""
    if not isinstance(name, str) or name not in options:
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
    optimizer: str = "adam",
    params: list[torch.nn.Parameter] | None = None,
    callback: Callable[[int, nn.Module], None] | None = None,
) -> list[float]:
    """Minimise ``loss(model(x), y)``; return the mean loss of every epoch.

    ``batch_size=None`` trains full-batch, else on mini-batches in an order
    drawn from torch's seeded generator. ``params`` restricts training to a
    subset (the rest stay frozen); ``callback(epoch, model)`` sees the model
    after every epoch.
    """
    if not isinstance(x, Tensor) or not isinstance(y, Tensor):
        raise TypeError(
            f"fit: x and y must be tensors, got {type(x).__name__} and "
            f"{type(y).__name__}"
        )
    if x.shape[0] != y.shape[0]:
        raise ValueError(
            f"fit: x {tuple(x.shape)} and y {tuple(y.shape)} differ in length"
        )
    if epochs < 1:
        raise ValueError(f"fit: epochs must be >= 1, got {epochs}")
    loss_fn = choose(LOSSES, loss, "loss")
    make_optimizer = choose(OPTIMIZERS, optimizer, "optimizer")
    if params is None:
        params = [p for p in model.parameters() if p.requires_grad]
    opt = make_optimizer(params, lr=lr)
    n = x.shape[0]
    bs = n if batch_size is None else batch_size
    history: list[float] = []
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
    model.eval()
    return history


def one_label_per_row(x: Tensor, y: Tensor, who: str) -> None:
    """A ``ValueError`` unless ``y`` is ``(n,)`` for ``x`` of ``n`` rows (a
    ``(n, 1)`` column of labels would broadcast to n × n)."""
    if y.ndim != 1 or y.shape[0] != x.shape[0]:
        raise ValueError(
            f"{who}: y {tuple(y.shape)} must be ({x.shape[0]},), one "
            f"label per row of x {tuple(x.shape)}"
        )


@torch.no_grad()
def accuracy(model: nn.Module, x: Tensor, y: Tensor) -> float:
    """Fraction of rows whose arg-max output equals the label (``y (n,)``)."""
    one_label_per_row(x, y, "accuracy")
    model.eval()
    return float((model(x).argmax(-1) == y).float().mean())
