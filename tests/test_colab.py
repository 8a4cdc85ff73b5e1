"""Colab: every notebook installs the book's package first, from the URL in _config.yml.

The repository URL is set once, in ``_config.yml``; that each lesson's first code
cell is ``bookconfig.colab_cell()`` and tagged ``remove-cell`` is a static check
(``tools.static_checks.check_colab``). Here the cell is *run*, as IPython would run
it: outside Colab it must install nothing; in Colab it must install the package from
the repository that ``_config.yml`` names.
"""

from __future__ import annotations

import sys
import types

import bookconfig
from IPython.core.inputtransformer2 import TransformerManager


def run_colab_cell(monkeypatch, in_colab: bool) -> list[str]:
    """The shell lines (``%pip`` ...) the cell sends to IPython."""
    if in_colab:
        monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("c"))
    else:
        monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    sent: list[str] = []
    ns: dict = {}

    def run_line_magic(name: str, line: str) -> None:
        # IPython expands $NAME from the user's namespace, as here
        sent.append(f"%{name} " + line.replace("$REPO", ns["REPO"]))

    ip = types.SimpleNamespace(run_line_magic=run_line_magic)
    ns["get_ipython"] = lambda: ip
    exec(TransformerManager().transform_cell(bookconfig.colab_cell()), ns)
    return sent


def test_outside_colab_the_cell_installs_nothing(monkeypatch):
    assert run_colab_cell(monkeypatch, in_colab=False) == []


def test_in_colab_the_cell_installs_the_package_of_this_repository(
    monkeypatch,
):
    (line,) = run_colab_cell(monkeypatch, in_colab=True)
    assert line.startswith("%pip install")
    assert f"git+{bookconfig.repo_url()}" in line


def test_the_cell_fits_the_page():
    assert max(len(ln) for ln in bookconfig.colab_cell().splitlines()) <= 79
