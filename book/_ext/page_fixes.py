"""Sphinx extension: fixes the browser test (tests/browser) and the screenshots called for.

1. Sphinx 7.4 writes each inline script that an extension adds with
   ``app.add_js_file(None, body=...)`` twice (once from the registry, once from the
   builder), so sphinx-thebe's ``const THEBE_JS_URL = ...`` is declared twice and the
   browser raises "Identifier 'THEBE_JS_URL' has already been declared" on every page.
   We drop exact duplicates from each page's script list.
2. pydata-sphinx-theme logs "Got invalid theme mode" on a reader's first visit unless
   the page context's ``default_mode`` is set (``html_context``, which jupyter-book's
   ``_config.yml`` cannot reach), so we default it to ``auto`` (follow the reader's
   system setting).
3. A work cited in several chapters appears in each chapter's filtered bibliography and
   in the book's; sphinxcontrib-bibtex then links every citation outside a bibliography's
   own page to whichever list it met last (a chapter-1 lesson could land in chapter 4's
   references). We point each citation at the nearest enclosing chapter's list that
   holds the work (the lesson's landing page in the toc), else at the book's full list.

Loaded by ``claims_ledger`` (the one local extension ``_config.yml`` names).
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.config import Config


def _default_mode(app: Sphinx, config: Config) -> None:
    config.html_context.setdefault("default_mode", "auto")


def _script_key(script: Any) -> tuple:
    attributes = getattr(script, "attributes", {}) or {}
    return (
        getattr(script, "filename", str(script)) or "",
        tuple(sorted(attributes.items())),
    )


def _dedupe_scripts(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree
) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    seen: set[tuple] = set()
    unique = []
    for script in scripts:
        key = _script_key(script)
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def _parents(app: Sphinx) -> dict[str, str]:
    parents: dict[str, str] = {}
    for parent, children in app.env.toctree_includes.items():
        for child in children:
            parents.setdefault(child, parent)
    return parents


def _chapter_citations(
    app: Sphinx, doctree: nodes.document, docname: str
) -> None:
    domain = app.env.domains.get("cite")
    citations = getattr(domain, "citations", None)
    if not citations:
        return
    uri = app.builder.get_relative_uri
    by_uri = {
        uri(docname, c.bibliography_key.docname) + "#" + c.citation_id: c
        for c in citations
        if c.bibliography_key.docname != docname
    }
    by_key: dict[str, list] = {}
    for c in citations:
        by_key.setdefault(c.key, []).append(c)
    size = {
        b: sum(c.bibliography_key == b for c in citations)
        for b in domain.bibliographies
    }
    parents = _parents(app)
    ancestors, doc = [], docname
    while doc in parents:
        doc = parents[doc]
        ancestors.append(doc)
    for ref in doctree.findall(nodes.reference):
        cit = by_uri.get(ref.get("refuri", ""))
        if cit is None:
            continue
        homes = [
            c
            for a in ancestors
            for c in by_key[cit.key]
            if c.bibliography_key.docname == a
        ]
        best = (
            homes[0]
            if homes
            else max(by_key[cit.key], key=lambda c: size[c.bibliography_key])
        )
        if best is not cit:
            target = best.bibliography_key.docname
            ref["refuri"] = uri(docname, target) + "#" + best.citation_id


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("config-inited", _default_mode)
    app.connect("html-page-context", _dedupe_scripts)
    app.connect("doctree-resolved", _chapter_citations)
    return {
        "version": "1.0",
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
