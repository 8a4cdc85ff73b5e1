"""Declare two jupyter-book dependencies parallel-safe, so ``sphinx-build -j N`` reads in parallel.

``sphinx_multitoc_numbering`` 0.1.3 (loaded by sphinx-external-toc 1.1 unconditionally)
and ``sphinx_jupyterbook_latex`` 1.0.0 (loaded by jupyter-book's config) return no
metadata from ``setup``, so ``sphinx-build -j N`` warns that each "does not declare if it
is safe for parallel reading" (an error with ``-W``) and reads serially. The first only
replaces ``TocTreeCollector.assign_section_numbers`` (run in the main process after
reading); the second only acts for the LaTeX builder. Both are safe for HTML and gettext,
so we mark their registry entries before the build starts.

Only ``tools/sphinx_conf.py``'s conf.py loads this (jupyter-book builds serially).
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx

SAFE = ("sphinx_multitoc_numbering", "sphinx_jupyterbook_latex")


def _declare(app: Sphinx) -> None:
    for name in SAFE:
        ext = app.extensions.get(name)
        if ext is not None:
            ext.parallel_read_safe = True
            ext.parallel_write_safe = True


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", _declare)
    return {
        "version": "0.1",
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
