"""The book's figure style and the figures several lessons draw: opaque white
(dark page themes would swallow black text), colour-blind safe, ``WIDTH``
inches at 100 dpi, shown at their own size in the 672-px text column.
"""

from collections.abc import Sequence
from pathlib import Path

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np

#: Every figure's width in inches at 100 dpi: it fits the text column.
WIDTH = 6.5
#: The smallest text a figure may use, in points (the browser test uses it).
MIN_POINTS = 9
#: Okabe & Ito (2008), distinguishable with every common colour-vision
#: deficiency: blue, orange, bluish green, reddish purple, sky blue,
#: vermillion, yellow, black.
PALETTE = tuple(
    "#0072B2 #E69F00 #009E73 #CC79A7 #56B4E9 #D55E00 #F0E442 #000000".split()
)
SEQUENTIAL = "viridis"
#: The style file: sizes, colours, grid (``use_style`` applies it).
STYLE = Path(__file__).with_name("book.mplstyle")
DIVERGING = "RdBu_r"


def use_style() -> None:
    """Apply the book's matplotlib style (white background, palette, sizes);
    in a notebook, draw PNGs at twice the pixels, shown at the same size."""
    from IPython import get_ipython
    from matplotlib_inline.backend_inline import set_matplotlib_formats

    plt.style.use(STYLE)
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
    ``signed`` (default: when it has negative entries), sequential otherwise;
    ``annotate`` writes each entry's value in its cell."""
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2:
        raise ValueError(f"heatmap needs a 2-D matrix, got shape {m.shape}")
    if signed is None:
        signed = bool((m < 0).any())
    top = vmax if vmax is not None else float(np.abs(m).max()) or 1.0
    cmap, low = (DIVERGING, -top) if signed else (SEQUENTIAL, 0.0)
    scale = dict(cmap=cmap, vmin=low, vmax=top)
    im = ax.imshow(m, interpolation="nearest", aspect=aspect, **scale)
    if annotate:
        for (r, c), value in np.ndenumerate(m):
            dark = im.cmap(im.norm(value))[:3]
            ink = "black" if sum(dark) / 3 > 0.5 else "white"
            ax.text(c, r, f"{value:.2g}", ha="center", va="center", color=ink)
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    ax.grid(False)
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(mpl.ticker.MaxNLocator(integer=True))
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
    """Draw each filter (a row of ``filters``, ``(n, prod(shape))``) as an
    image of ``shape`` in a grid; signed filters share one colour scale
    centred on zero."""
    f = np.asarray(filters, dtype=float)
    if f.ndim != 2 or f.shape[1] != int(np.prod(shape)):
        raise ValueError(
            f"filter_grid: filters {f.shape} do not reshape to {tuple(shape)}"
        )
    n = f.shape[0]
    nrows = int(np.ceil(n / ncols))
    size = (WIDTH, WIDTH / ncols * 1.1 * nrows + 0.4)
    fig, axes = plt.subplots(nrows, ncols, figsize=size, squeeze=False)
    lim = float(np.abs(f).max()) or 1.0
    signs = dict(cmap=DIVERGING, vmin=-lim, vmax=lim)
    kw = signs if signed else dict(cmap="gray_r")
    for i, ax in enumerate(axes.flat):
        ax.set_axis_off()
        if i >= n:
            continue
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
    its decision regions: ``(xx, yy, z)``, all ``(steps, steps, ...)``, with
    ``z = predict(points)``."""
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
    z = z.reshape(steps, steps, *z.shape[1:])
    return xx.numpy(), yy.numpy(), z.numpy()
