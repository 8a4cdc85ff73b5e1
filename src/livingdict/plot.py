"""The book's figure style: readable at the page's width, in light and dark
themes, colour-blind safe.

Figures are drawn ``WIDTH`` inches wide at 100 dpi: the book's text column is
672 px at a 1280-pixel window (656 px of picture in dark mode), so they are
shown at their own size, and an 11-point label is about 15 pixels high, like
the body text. No text is smaller than ``MIN_POINTS`` (12.5 px). They have an
opaque white background (so dark page themes do not swallow black text), the
Okabe–Ito palette for lines and points, ``viridis`` for magnitudes and
``RdBu_r`` centred on zero for signed quantities.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
from cycler import cycler

#: Every figure's width in inches at 100 dpi: it fits the text column.
WIDTH = 6.5
#: The smallest text a figure may use, in points (the browser test uses it).
MIN_POINTS = 9
#: Okabe & Ito (2008): eight colours distinguishable with every common
#: colour-vision deficiency.
PALETTE = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#D55E00",  # vermillion
    "#F0E442",  # yellow
    "#000000",  # black
)
SEQUENTIAL = "viridis"
DIVERGING = "RdBu_r"


def use_style() -> None:
    """Apply the book's matplotlib style (white background, palette, sizes)."""
    mpl.rcParams.update(
        {
            "figure.facecolor": "white",
            "axes.facecolor": "white",
            "savefig.facecolor": "white",
            "figure.dpi": 100,
            "figure.figsize": (WIDTH, 3.4),
            "figure.constrained_layout.use": True,
            "axes.prop_cycle": cycler(color=PALETTE),
            "axes.grid": True,
            "grid.alpha": 0.3,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.titlesize": 12,
            "axes.labelsize": 11,
            "xtick.labelsize": 10,
            "ytick.labelsize": 10,
            "legend.fontsize": 10,
            "legend.frameon": False,
            "figure.titlesize": 12,
            "image.cmap": SEQUENTIAL,
            "font.size": 11,
            "lines.linewidth": 1.8,
        }
    )
    _retina()


def _retina() -> None:
    """In a notebook, draw PNGs at twice the pixels, shown at the same size
    (sharp on high-resolution screens; the page still sees ``WIDTH``)."""
    try:
        from IPython import get_ipython
        from matplotlib_inline.backend_inline import set_matplotlib_formats
    except ImportError:  # pragma: no cover - IPython is a dependency
        return
    if get_ipython() is not None:
        set_matplotlib_formats("retina")


def heatmap(
    ax: plt.Axes,
    matrix: np.ndarray,
    *,
    title: str = "",
    xlabel: str = "",
    ylabel: str = "",
    signed: bool | None = None,
    colorbar: bool = True,
    vmax: float | None = None,
    aspect: str = "auto",
    annotate: bool = False,
) -> mpl.image.AxesImage:
    """Draw ``matrix`` on ``ax``: diverging colours centred on 0 when
    ``signed`` (default: when it has negative entries), sequential otherwise.
    ``annotate`` writes each entry's value in its cell."""
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2:
        raise ValueError(f"heatmap needs a 2-D matrix, got shape {m.shape}")
    if signed is None:
        signed = bool((m < 0).any())
    top = vmax if vmax is not None else float(np.abs(m).max()) or 1.0
    cmap, low = (DIVERGING, -top) if signed else (SEQUENTIAL, 0.0)
    im = ax.imshow(
        m,
        cmap=cmap,
        vmin=low,
        vmax=top,
        interpolation="nearest",
        aspect=aspect,
    )
    if annotate:
        for (r, c), value in np.ndenumerate(m):
            dark = im.cmap(im.norm(value))[:3]
            ink = "black" if sum(dark) / 3 > 0.5 else "white"
            ax.text(c, r, f"{value:.2g}", ha="center", va="center", color=ink)
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    ax.grid(False)
    ax.xaxis.set_major_locator(mpl.ticker.MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(mpl.ticker.MaxNLocator(integer=True))
    if colorbar:
        ax.figure.colorbar(im, ax=ax, shrink=0.8)
    return im


def filter_grid(
    filters: np.ndarray,
    shape: Sequence[int],
    *,
    ncols: int = 8,
    titles: Sequence[str] | None = None,
    suptitle: str = "",
    signed: bool = True,
) -> plt.Figure:
    """Draw each filter (a row of ``filters``) as an image of ``shape`` in a
    grid.

    ``filters`` is ``(n, prod(shape))``; signed filters share one symmetric
    colour scale centred on zero. Raises ``ValueError`` when a row does not fit
    ``shape``.
    """
    f = np.asarray(filters, dtype=float)
    if f.ndim != 2 or f.shape[1] != int(np.prod(shape)):
        raise ValueError(
            f"filter_grid: filters {f.shape} do not reshape to {tuple(shape)}"
        )
    n = f.shape[0]
    nrows = int(np.ceil(n / ncols))
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(WIDTH, WIDTH / ncols * 1.1 * nrows + 0.4),
        squeeze=False,
    )
    lim = float(np.abs(f).max()) or 1.0
    for i, ax in enumerate(axes.flat):
        ax.set_axis_off()
        if i >= n:
            continue
        kw = (
            dict(cmap=DIVERGING, vmin=-lim, vmax=lim)
            if signed
            else dict(cmap="gray_r")
        )
        ax.imshow(f[i].reshape(shape), interpolation="nearest", **kw)
        if titles is not None:
            ax.set_title(titles[i], fontsize=10)
    if suptitle:
        fig.suptitle(suptitle)
    return fig


def grid_scores(
    predict, lim: float = 2.0, steps: int = 101
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A 2-D classifier's scores on the square ``[−lim, lim]²``, for maps of
    its decision regions: ``(xx, yy, z)`` with ``xx, yy`` of shape
    ``(steps, steps)`` and ``z = predict(points)`` reshaped to
    ``(steps, steps, ...)``."""
    import torch

    if lim <= 0 or steps < 2:
        raise ValueError(
            f"grid_scores needs lim > 0 and steps >= 2, got {lim}, {steps}"
        )
    axis = torch.linspace(-lim, lim, steps)
    xx, yy = torch.meshgrid(axis, axis, indexing="xy")
    with torch.no_grad():
        z = predict(torch.stack([xx.ravel(), yy.ravel()], 1))
    if z.ndim < 1 or z.shape[0] != steps * steps:
        raise ValueError(
            f"grid_scores: predict returned {tuple(z.shape)}, "
            f"want ({steps**2}, ...)"
        )
    return (
        xx.numpy(),
        yy.numpy(),
        z.reshape(steps, steps, *z.shape[1:]).numpy(),
    )
