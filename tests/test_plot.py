"""plot: the figure style and the helpers every lesson uses."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

import livingdict
from livingdict import plot


@pytest.fixture(autouse=True)
def _close():
    livingdict.setup(0)
    yield
    plt.close("all")


def test_heatmap_centres_signed_data_on_zero():
    _, ax = plt.subplots()
    signed = plot.heatmap(ax, np.array([[-1.0, 2.0], [0.5, 0.0]]))
    assert signed.get_clim() == (-2.0, 2.0)
    assert signed.get_cmap().name == plot.DIVERGING
    positive = plot.heatmap(ax, np.array([[1.0, 3.0]]), colorbar=False)
    assert positive.get_clim() == (0.0, 3.0)
    assert positive.get_cmap().name == plot.SEQUENTIAL
    with pytest.raises(ValueError, match=r"\(3,\)"):
        plot.heatmap(ax, np.zeros(3))
    _, ax = plt.subplots()
    plot.heatmap(ax, np.array([[0.25, 1.0]]), annotate=True)
    assert [t.get_text() for t in ax.texts] == ["0.25", "1"]


def test_filter_grid_draws_each_filter_on_one_symmetric_scale():
    f = np.zeros((3, 4))
    f[0, 0], f[2, 3] = 2.0, -0.5
    fig = plot.filter_grid(f, (2, 2), ncols=2)
    images = [ax.images[0] for ax in fig.axes if ax.images]
    assert len(images) == 3  # the fourth cell of the grid stays empty
    np.testing.assert_array_equal(images[2].get_array(), f[2].reshape(2, 2))
    assert all(im.get_clim() == (-2.0, 2.0) for im in images)
    with pytest.raises(ValueError, match=r"\(3, 4\).*\(2, 3\)"):
        plot.filter_grid(f, (2, 3))


def test_grid_scores_evaluates_the_square():
    xx, yy, z = plot.grid_scores(lambda p: p[:, 0] + p[:, 1], lim=1, steps=5)
    assert xx.shape == yy.shape == z.shape == (5, 5)
    np.testing.assert_allclose(z, xx + yy)
    assert (xx[0, 0], xx[0, -1]) == (-1, 1)
    with pytest.raises(ValueError, match=r"\(24,\)"):
        plot.grid_scores(lambda p: p[1:, 0], lim=1, steps=5)


def test_the_figures_lessons_draw_fit_the_column_with_readable_text():
    """Draw the package's figures under the book's style, then read every text
    artist's size and the figure's width (a helper that set a 7-pt label, or
    a style file with a smaller default, fails here)."""
    from matplotlib.text import Text

    livingdict.setup(0)
    heat, ax = plt.subplots()
    plot.heatmap(ax, np.arange(12.0).reshape(3, 4) - 5, title="t", xlabel="x")
    ax.legend(ax.plot([0, 1], label="a line"), ["a line"])
    grid = plot.filter_grid(np.ones((16, 4)), (2, 2), ncols=8)
    for fig in (heat, grid):
        fig.canvas.draw()
        assert fig.get_size_inches()[0] == pytest.approx(plot.WIDTH)
        texts = [t for t in fig.findobj(Text) if t.get_text().strip()]
        assert texts or fig is grid
        small = [
            (t.get_text(), t.get_fontsize())
            for t in texts
            if t.get_fontsize() < plot.MIN_POINTS
        ]
        assert not small
    assert [
        c.lower() for c in plt.rcParams["axes.prop_cycle"].by_key()["color"]
    ] == [c.lower() for c in plot.PALETTE]
