"""Shared fixtures: notebooks, fixture book trees and fixture Sphinx builds.

- ``notebook(*code, markdown=(), tags=None)``: a notebook as a JSON dict
  (nbformat 4.5, python3 kernelspec) with the given markdown cells, then the
  given code cells; ``tags`` maps a code cell's index to its tags.
  ``new_cell(source, kind="code", tags=())``: one cell.
- ``write_nb(root, name, *code, markdown=("# A lesson",), tags=None)``: the
  same, written to ``root/<name>.ipynb``; returns the path.
- ``edit_nb(path, fn)``: read the JSON, ``fn(nb)``, write it back.
- ``lesson_functions(lesson)``: the functions a lesson notebook defines
  (after its imports), for the unit tests of a mechanism that lives in its
  lesson, e.g. ``lesson_functions("01_matrix_product/02_random_weights").blur``.
- ``write_registry(root, claims)``, ``write_toc(root, files)``: a fixture
  ``src/livingdict/claims.yml`` and ``_toc.yml``.
- ``write_lesson(root, name=LESSON, claim="C0.1")``: a lesson shaped as the
  book's lessons are (the Colab cell, the imports, a visible mechanism, a
  folded figure, the folded check of ``claim``).
- ``lesson_tree``: a book tree that passes every static check: the lesson
  ``LESSON`` checks C0.1, C1.1 is pending.
- ``registry_entry(id, notebook, verdict="holds")``: an entry of the registry.
- ``fixture_book(pages, extensions=("claims_ledger",), conf="")``: a Sphinx
  project in ``tmp_path/src`` with the book's extensions; ``.build(ledger)``
  runs an incremental ``sphinx -W`` build into ``tmp_path/html``.

``book/_ext`` is on ``sys.path``: ``import claims_ledger`` works in a test.
Tests that start a kernel, Sphinx, repo2docker, npm tools or a browser are
marked ``slow``; ``pytest -m "not slow"`` is the fast inner loop.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

from livingdict import claims
from tools.set_repo_url import colab_cell

ROOT = Path(__file__).resolve().parents[1]
EXTENSIONS = ROOT / "book" / "_ext"
sys.path.insert(0, str(EXTENSIONS))  # the tests of the Sphinx extensions
REPO_URL = "https://github.com/me/fixture-book"
LESSON = "notebooks/00_intro/01_lesson"
IMPORTS = "import livingdict\nfrom livingdict import claims\n\nSEED = livingdict.setup()"
MECHANISM = "err = abs(0.1 + 0.2 - 0.3)"
FIGURE = "import matplotlib.pyplot as plt\n\nplt.plot([0, 1], [err, err])"
CHECK = (
    'claims.check(\n    "C0.1",\n    err < 1e-5,\n    measured={"error": err},\n'
    '    expected={"error": claims.identity("< 1e-5")},\n'
    '    controls={"shuffled": False},\n)'
)


def _cell(
    source: str, kind: str = "code", tags: Sequence[str] = ()
) -> dict[str, Any]:
    """A cell as nbformat 4.5 stores it (written as JSON: importing nbformat
    costs about 2 s of CPU, which the fast tests need not pay)."""
    cell: dict[str, Any] = {
        "cell_type": kind,
        "id": uuid.uuid4().hex[:8],
        "metadata": {"tags": list(tags)} if tags else {},
        "source": source,
    }
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def _notebook(
    *code: str,
    markdown: Sequence[str] = (),
    tags: Mapping[int, Sequence[str]] | None = None,
) -> dict[str, Any]:
    tags = tags or {}
    cells = [_cell(m, "markdown") for m in markdown]
    cells += [_cell(s, tags=tags.get(i, ())) for i, s in enumerate(code)]
    kernel = {"name": "python3", "display_name": "Python 3"}
    return {
        "cells": cells,
        "metadata": {"kernelspec": {**kernel, "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def _write_nb(
    root: Path,
    name: str,
    *code: str,
    markdown: Sequence[str] = ("# A lesson",),
    tags: Mapping[int, Sequence[str]] | None = None,
) -> Path:
    path = Path(root) / f"{name}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nb = _notebook(*code, markdown=markdown, tags=tags)
    path.write_text(json.dumps(nb, indent=1))
    return path


def _edit_nb(path: Path, fn: Callable[[dict[str, Any]], None]) -> None:
    nb = json.loads(Path(path).read_text())
    fn(nb)
    Path(path).write_text(json.dumps(nb, indent=1))


def _write_registry(root: Path, entries: Sequence[Mapping]) -> Path:
    path = Path(root) / "src" / "livingdict" / "claims.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    chapters = {0: {"title": "t", "section": "s"}}
    path.write_text(
        yaml.safe_dump({"chapters": chapters, "claims": list(entries)})
    )
    claims._read.cache_clear()  # two writes may share a modification time
    return path


def _write_toc(root: Path, files: Sequence[str]) -> None:
    toc = {
        "format": "jb-book",
        "root": "book/intro",
        "parts": [{"caption": "c", "chapters": [{"file": f} for f in files]}],
    }
    (Path(root) / "_toc.yml").write_text(yaml.safe_dump(toc))


def _lesson_functions(lesson: str) -> SimpleNamespace:
    """Run a lesson's imports and top-level ``def``s (nothing else) in a
    fresh namespace; a cell that is not plain Python (``%pip``) is skipped."""
    path = ROOT / "notebooks" / f"{lesson}.ipynb"
    nodes: list[ast.stmt] = []
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] != "code":
            continue
        try:
            tree = ast.parse("".join(cell["source"]))
        except SyntaxError:
            continue
        keep = (ast.Import, ast.ImportFrom, ast.FunctionDef)
        nodes += [n for n in tree.body if isinstance(n, keep)]
    namespace: dict[str, Any] = {}
    module = ast.Module(body=nodes, type_ignores=[])
    exec(compile(module, str(path), "exec"), namespace)
    return SimpleNamespace(**namespace)


@pytest.fixture(scope="session")
def lesson_functions():
    return _lesson_functions


@pytest.fixture
def new_cell():
    return _cell


@pytest.fixture
def notebook():
    return _notebook


@pytest.fixture
def write_nb():
    return _write_nb


@pytest.fixture
def edit_nb():
    return _edit_nb


@pytest.fixture
def write_registry():
    return _write_registry


@pytest.fixture
def write_toc():
    return _write_toc


def entry(cid: str, notebook: str | None, verdict: str | None = "holds"):
    """A registry entry; a pending one has neither notebook nor verdict."""
    return {
        "id": cid,
        "chapter": int(cid[1]) if cid[1].isdigit() else "B",
        "claim": f"the claim {cid}",
        "verdict": verdict if notebook else None,
        "notebook": notebook,
    }


@pytest.fixture
def registry_entry():
    return entry


def _write_lesson(
    root: Path, name: str = LESSON, claim: str | None = "C0.1"
) -> Path:
    """A lesson as the book shapes them: code cells 0 Colab, 1 imports, 2 the
    mechanism, 3 a folded figure, 4 the folded check of ``claim`` (none if
    ``None``); in the notebook, cells 1-5, after its title."""
    code = [colab_cell(REPO_URL), IMPORTS, MECHANISM, FIGURE]
    if claim:
        code.append(CHECK.replace('"C0.1"', f'"{claim}"'))
    path = _write_nb(
        root,
        name,
        *code,
        tags={0: ["remove-cell"], 3: ["hide-input"], 4: ["hide-cell"]},
    )

    def figure(nb):
        nb["cells"][4]["metadata"]["mystnb"] = {
            "figure": {"caption": "The error, flat.", "name": "fig-c01"},
            "image": {"alt": "A flat line."},
        }

    _edit_nb(path, figure)
    return path


@pytest.fixture
def write_lesson():
    return _write_lesson


@pytest.fixture
def lesson_tree(tmp_path):
    """A tree that passes every static check: one lesson checking C0.1, C1.1
    pending."""
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "intro.md").write_text("# Intro\n")
    (tmp_path / "book" / "claims_ledger.md").write_text("# Ledger\n")
    (tmp_path / "_config.yml").write_text(
        yaml.safe_dump({"title": "t", "repository": {"url": REPO_URL}})
    )
    _write_lesson(tmp_path)
    _write_toc(tmp_path, [LESSON, "book/claims_ledger"])
    _write_registry(tmp_path, [entry("C0.1", LESSON), entry("C1.1", None)])
    return tmp_path


class FixtureBook:
    """A Sphinx project using the book's extensions (``book/_ext``)."""

    def __init__(
        self,
        folder: Path,
        pages: Mapping[str, str],
        extensions: Sequence[str] = ("claims_ledger",),
        conf: str = "",
    ) -> None:
        self.src, self.out = folder / "src", folder / "html"
        self.src.mkdir(parents=True, exist_ok=True)
        (self.src / "conf.py").write_text(
            f"import sys\nsys.path.insert(0, {str(EXTENSIONS)!r})\n"
            f"extensions = {list(extensions)!r}\nproject = 'fixture'\n{conf}"
        )
        for name, text in pages.items():
            path = self.src / f"{name}.rst"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)

    def build(
        self, ledger: Path | None = None, *, quiet: bool = True
    ) -> subprocess.CompletedProcess:
        """``sphinx -W --keep-going -b html`` (incremental), reading
        ``ledger`` as the claims ledger."""
        env = dict(os.environ)
        if ledger is not None:
            env["LIVINGDICT_LEDGER"] = str(ledger)
        cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going"]
        cmd += ["-q"] if quiet else []
        cmd += ["-b", "html", str(self.src), str(self.out)]
        return subprocess.run(cmd, env=env, capture_output=True, text=True)

    def html(self, page: str) -> str:
        return (self.out / f"{page}.html").read_text(encoding="utf-8")


@pytest.fixture
def fixture_book(tmp_path):
    def make(pages: Mapping[str, str], **kw) -> FixtureBook:
        return FixtureBook(tmp_path, pages, **kw)

    return make
