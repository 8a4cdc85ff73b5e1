"""Sphinx extension: the glossary of both editions, drawn from one term list.

``book/terms.yml`` lists every term once: its English and Japanese names, a
flag for the essay's own words, and its definition (MyST). The directive

    ```{book-glossary}
    ```

writes a ``{glossary}`` from it: in the English edition each entry is headed
by the English name, then the Japanese one; in the Japanese edition the other
way round. Both names are glossary terms, so ``{term}`filter``` and
``{term}`フィルター``` both link. The definitions are parsed in the page, so
Sphinx's gettext extracts them with the page's other text and the Japanese
edition translates them in ``book/glossary.po``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from docutils import nodes
from docutils.statemachine import StringList
from lang_switch import edition
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

TERMS = Path(__file__).resolve().parents[1] / "terms.yml"


def load_terms(path: Path = TERMS) -> list[dict[str, Any]]:
    """The term list, checked: every entry has ``en``, ``ja`` and a
    ``definition``; no name appears twice."""
    terms = yaml.safe_load(path.read_text(encoding="utf-8"))
    seen: set[str] = set()
    for t in terms:
        missing = [k for k in ("en", "ja", "definition") if not t.get(k)]
        if missing:
            raise ValueError(f"{path.name}: {t.get('en')!r} lacks {missing}")
        for name in (t["en"].lower(), t["ja"]):
            if name in seen:
                raise ValueError(f"{path.name}: {name!r} is listed twice")
            seen.add(name)
    return terms


def glossary_source(terms: list[dict[str, Any]], language: str) -> list[str]:
    """The lines of a MyST ``{glossary}`` for one edition."""
    lines = ["```{glossary}"]
    for t in terms:
        names = [t["en"], t["ja"]]
        lines += names[::-1] if language == "ja" else names
        body = " ".join(t["definition"].split())
        if t.get("essay"):
            body += " *(The essay's own word.)*"
        lines += ["  " + body, ""]
    return lines + ["```"]


class BookGlossary(SphinxDirective):
    def run(self) -> list[nodes.Node]:
        self.env.note_dependency(str(TERMS))
        source = glossary_source(load_terms(), edition(self.config))
        container = nodes.container(classes=["book-glossary"])
        self.state.nested_parse(
            StringList(source, str(TERMS)), self.content_offset, container
        )
        return container.children


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("book-glossary", BookGlossary)
    return {
        "version": "0.1",
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
