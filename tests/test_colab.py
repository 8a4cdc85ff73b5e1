"""Colab: every notebook installs the book's package first, from the URL in _config.yml.

The repository URL is set once, in ``_config.yml``; the launch buttons derive from it,
and each notebook's first code cell must name the same URL
(``python -m tools.set_repo_url URL`` rewrites both after a fork).
"""

from __future__ import annotations

import difflib

import bookconfig
import nbformat
import pytest

NOTEBOOKS = bookconfig.notebooks()


def test_there_are_notebooks():
    assert NOTEBOOKS


@pytest.mark.parametrize(
    "path", NOTEBOOKS, ids=lambda p: p.relative_to(bookconfig.ROOT).as_posix()
)
def test_first_code_cell_is_the_guarded_colab_install(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, "a lesson has code"
    first = code[0]
    expected = bookconfig.colab_cell()
    diff = "\n".join(
        difflib.unified_diff(expected.splitlines(), first.source.splitlines())
    )
    assert first.source == expected, (
        "first code cell is not the Colab cell:\n" + diff
    )
    assert "remove-cell" in first.metadata.get("tags", []), (
        "tag the Colab cell remove-cell"
    )


def test_the_colab_cell_is_guarded_and_names_the_repository():
    cell = bookconfig.colab_cell()
    guard, install = cell.splitlines()[-2:]
    assert guard == 'if "google.colab" in sys.modules:'
    assert install.startswith("    %pip install") and "git+$REPO" in install
    assert f'REPO = "{bookconfig.repo_url()}"' in cell
    assert max(len(line) for line in cell.splitlines()) <= 79


def test_launch_urls_come_from_the_repository_url():
    slug = bookconfig.github_slug()
    doc = "notebooks/00_introduction/01_three_guises"
    assert bookconfig.binder_url(doc) == (
        f"https://mybinder.org/v2/gh/{slug}/{bookconfig.branch()}?urlpath=lab/tree/{doc}.ipynb"
    )
    assert bookconfig.colab_url(doc) == (
        f"https://colab.research.google.com/github/{slug}/blob/{bookconfig.branch()}/{doc}.ipynb"
    )
