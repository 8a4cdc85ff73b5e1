"""Sphinx extension: where chapter numbering starts (0 for the introduction).

With ``numbered:`` parts in ``_toc.yml``, sphinx-external-toc 1.1 numbers the chapters
of all numbered parts continuously, in the style each part asks for (``style:
numerical`` by default, or ``alphaupper``, ``romanupper``...), always from 1 (or A, I):
its ``TocTreeCollectorWithStyles`` keeps one private counter per style, starting at 0
and incremented before each chapter. We start them elsewhere::

    book_chapter_start: {numerical: 0, alphaupper: 2}

makes the introduction 0 and chapters 1-4 keep their essay numbers; a part with
``style: alphaupper`` would get "B" (for "Beyond"). Figures and exercises follow:
"Fig. 0.1", "Exercise 3.2", "Fig. B.1".
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx

STYLES = ("numerical", "romanupper", "romanlower", "alphaupper", "alphalower")


def _install(app: Sphinx) -> None:
    from sphinx_external_toc.collectors import TocTreeCollectorWithStyles as C

    if getattr(C.assign_section_numbers, "_book_start", False):
        return
    original = C.assign_section_numbers

    def assign_section_numbers(self, env):
        for style, first in env.config.book_chapter_start.items():
            if style in STYLES:
                setattr(
                    self,
                    f"_TocTreeCollectorWithStyles__{style}_count",
                    int(first) - 1,
                )
        return original(self, env)

    assign_section_numbers._book_start = True  # type: ignore[attr-defined]
    C.assign_section_numbers = assign_section_numbers


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("book_chapter_start", {}, "env", [dict])
    app.connect("builder-inited", _install)
    return {
        "version": "0.1",
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
