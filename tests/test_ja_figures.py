"""ja_figures: the Japanese edition shows each figure's Japanese drawing."""

import base64
import json
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from IPython.core.pylabtools import print_figure  # noqa: E402

from livingdict import figure_words as fw  # noqa: E402

EXTENSIONS = Path(__file__).resolve().parents[1] / "book" / "_ext"
pytestmark = pytest.mark.slow


def _output(messages):
    """A figure output as the kernel leaves it (figure_words.install)."""
    fig, ax = plt.subplots(figsize=(4, 2))
    ax.set_title("Training moves the filters")
    en = bytes(print_figure(fig, fmt="png"))
    ja, report = fw.translated_png(
        fig,
        lambda m: messages.get(m, ""),
        lambda f: bytes(print_figure(f, fmt="png")),
    )
    meta = {
        "words": fw.words(fig),
        "ja": base64.b64encode(ja).decode(),
        "size": fw.png_size(en),
        "size_ja": fw.png_size(ja),
        **report,
    }
    plt.close(fig)
    return {
        "output_type": "display_data",
        "data": {
            "image/png": base64.b64encode(en).decode(),
            "text/plain": "<Figure>",
        },
        "metadata": {"image/png": {"livingdict": meta}},
    }


def _project(tmp_path, drawn_with, catalog):
    src = tmp_path / "src"
    (src / "notebooks" / "ch").mkdir(parents=True)
    nb = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {
            "kernelspec": {
                "name": "python3",
                "language": "python",
                "display_name": "Python 3",
            }
        },
        "cells": [
            {
                "cell_type": "markdown",
                "id": "a",
                "metadata": {},
                "source": "# A lesson",
            },
            {
                "cell_type": "code",
                "id": "b",
                "metadata": {},
                "execution_count": 1,
                "source": "plot()",
                "outputs": [_output(drawn_with)],
            },
        ],
    }
    (src / "notebooks" / "ch" / "01_a.ipynb").write_text(json.dumps(nb))
    (src / "index.md").write_text(
        "# Book\n\n```{toctree}\nnotebooks/ch/01_a\n```\n"
    )
    po = src / "locale" / "ja" / "LC_MESSAGES" / "notebooks" / "ch"
    po.mkdir(parents=True)
    body = "".join(
        f'msgid "{k}"\nmsgstr "{v}"\n\n' for k, v in catalog.items()
    )
    (po / "01_a.po").write_text(body, encoding="utf-8")
    (src / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(EXTENSIONS)!r})\n"
        "extensions = ['myst_nb', 'ja_figures']\nproject = 'fixture'\n"
        "nb_execution_mode = 'off'\nlocale_dirs = ['locale']\n"
        "gettext_compact = False\n"
        # as the book's _config.yml: the gettext builder renders images
        "nb_mime_priority_overrides = [('gettext', 'image/png', 1)]\n"
    )
    return src


def _sphinx(src, out, *args):
    cmd = [
        sys.executable,
        "-m",
        "sphinx",
        "-W",
        "-q",
        *args,
        str(src),
        str(out),
    ]
    return subprocess.run(cmd, capture_output=True, text=True)


JA = {"Training moves the filters": "学習はフィルターを動かす"}


def test_the_words_are_extracted_with_the_page(tmp_path):
    src = _project(tmp_path, JA, JA)
    run = _sphinx(src, tmp_path / "pot", "-b", "gettext")
    assert run.returncode == 0, run.stderr
    pot = (tmp_path / "pot" / "notebooks" / "ch" / "01_a.pot").read_text()
    assert 'msgid "Training moves the filters"' in pot


def test_the_japanese_build_shows_the_japanese_drawing(tmp_path):
    src = _project(tmp_path, JA, JA)
    run = _sphinx(src, tmp_path / "ja", "-b", "html", "-D", "language=ja")
    assert run.returncode == 0, run.stderr
    html = (tmp_path / "ja" / "notebooks" / "ch" / "01_a.html").read_text()
    assert "figure-ja" in html
    en = _sphinx(src, tmp_path / "en", "-b", "html")
    assert en.returncode == 0, en.stderr
    assert (
        "figure-ja"
        not in (tmp_path / "en" / "notebooks" / "ch" / "01_a.html").read_text()
    )
    images = lambda d: {p.name for p in (d / "_images").glob("*.png")}
    assert images(tmp_path / "ja").isdisjoint(images(tmp_path / "en"))


@pytest.mark.parametrize(
    ("drawn_with", "catalog", "message"),
    [
        ({}, {}, "has no translation"),
        (JA, {"Training moves the filters": "学習で動く"}, "changed"),
    ],
)
def test_a_missing_or_stale_translation_fails_the_build(
    tmp_path, drawn_with, catalog, message
):
    src = _project(tmp_path, drawn_with, catalog)
    run = _sphinx(src, tmp_path / "ja", "-b", "html", "-D", "language=ja")
    assert run.returncode != 0
    assert message in run.stderr
