"""Sphinx extension: three gaps of the pinned libraries, closed on every page.

1. Chapter numbers start at 0 (the introduction) and the ``alphaupper`` part
   gives "B": sphinx-external-toc 1.1 numbers the chapters of numbered parts
   from 1 (A, I) with one private counter per style, which
   ``book_chapter_start: {numerical: 0, alphaupper: 2}`` sets.
2. The book has no thebe button, but jupyter-book always loads
   sphinx-thebe, whose scripts (``init_thebe_core``) went on every page,
   the inline one twice under Sphinx 7.4: the browser raised "Identifier
   'THEBE_JS_URL' has already been declared". They are not added.
3. A work cited in several chapters appears in each chapter's filtered
   bibliography and in the book's, and sphinxcontrib-bibtex links every
   citation to whichever list it met last. A citation is pointed at the
   nearest enclosing chapter's list that holds the work (the lesson's
   landing page in the toc), else at the book's full list.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx


def _chapter_start(app: Sphinx) -> None:
    from sphinx_external_toc.collectors import TocTreeCollectorWithStyles as C

    original = C.assign_section_numbers

    def assign_section_numbers(self: Any, env: Any) -> Any:
        for style, first in env.config.book_chapter_start.items():
            name = f"_TocTreeCollectorWithStyles__{style}_count"
            setattr(self, name, int(first) - 1)
        return original(self, env)

    C.assign_section_numbers = assign_section_numbers


def _no_thebe(app: Sphinx) -> None:
    from sphinx_thebe import init_thebe_core

    for listener in list(app.events.listeners["env-before-read-docs"]):
        if listener.handler is init_thebe_core:
            app.disconnect(listener.id)


def _chapter_citations(
    app: Sphinx, doctree: nodes.document, docname: str
) -> None:
    domain = app.env.domains.get("cite")
    if not (citations := getattr(domain, "citations", None)):
        return
    uri = app.builder.get_relative_uri
    by_uri = {
        uri(docname, c.bibliography_key.docname) + "#" + c.citation_id: c
        for c in citations
        if c.bibliography_key.docname != docname
    }
    size = Counter(c.bibliography_key for c in citations)
    includes = reversed(app.env.toctree_includes.items())  # the first wins
    parents = {child: doc for doc, children in includes for child in children}
    ancestors, doc = [], docname
    while doc in parents:
        ancestors.append(doc := parents[doc])
    for ref in doctree.findall(nodes.reference):
        if (cit := by_uri.get(ref.get("refuri", ""))) is None:
            continue
        same = [c for c in citations if c.key == cit.key]
        homes = [
            c
            for a in ancestors
            for c in same
            if c.bibliography_key.docname == a
        ]
        largest = max(same, key=lambda c: size[c.bibliography_key])
        best = homes[0] if homes else largest
        if best is not cit:
            target = uri(docname, best.bibliography_key.docname)
            ref["refuri"] = f"{target}#{best.citation_id}"


def setup(app: Sphinx) -> None:
    app.add_config_value("book_chapter_start", {}, "env", [dict])
    app.connect("builder-inited", _chapter_start)
    app.connect("builder-inited", _no_thebe)
    app.connect("doctree-resolved", _chapter_citations)
