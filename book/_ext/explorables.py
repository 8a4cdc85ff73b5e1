"""The explorables in the built book (``livingdict.explore``, issue 21).

A lesson's explorable is an HTML output that carries its data and, for JupyterLab,
Colab and VS Code, an inlined copy of the shared module ``livingdict/static/explore.js``
and its stylesheet. In the book:

* the module and the stylesheet are served once, from ``_static`` (this extension adds
  ``livingdict/static`` to ``html_static_path`` and links both on every page), and the
  inlined copies are dropped from each output (``<script data-ld-module>``, ``<style
  data-ld-module>``), so a page carries only each explorable's data;
* the labels come in the reader's language: ``t("...")`` strings of explore.js are a
  gettext domain of their own, ``explore`` (the gettext builder writes ``explore.pot``
  with Babel's JavaScript extractor; ``sphinx-intl update`` keeps
  ``locale/<lang>/LC_MESSAGES/explore.po``); a translated build reads that catalog
  (fuzzy entries left out) and puts it on every page as ``window.LD_EXPLORE_I18N``,
  which explore.js reads. Nothing is executed for it: the Japanese build reuses the
  executed notebooks of the English one.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx

from livingdict import explore

DOMAIN = "explore"
MODULE = explore.STATIC / "explore.js"
INLINED = re.compile(r"<(script|style) data-ld-module>.*?</\1>\s*", re.DOTALL)


def js_messages() -> list[tuple[str, int]]:
    """``(text, line)`` of every ``t("...")`` in explore.js (Babel's extractor)."""
    from babel.messages.extract import extract_from_file

    return [
        (message, lineno)
        for lineno, message, _c, _ctx in extract_from_file(
            "javascript", str(MODULE), keywords={"t": None}
        )
    ]


def catalog(app: Sphinx) -> dict[str, str]:
    """The translated labels of ``explore.po`` for the build's language (none for
    English; fuzzy and empty entries left out, as gettext does)."""
    language = app.config.language
    if not language or language == "en":
        return {}
    from babel.messages.pofile import read_po

    for folder in app.config.locale_dirs:
        po = Path(app.srcdir, folder, language, "LC_MESSAGES", f"{DOMAIN}.po")
        if po.is_file():
            with po.open("rb") as f:
                cat = read_po(f)
            return {
                m.id: m.string
                for m in cat
                if m.id and m.string and not m.fuzzy
            }
    return {}


def _builder_inited(app: Sphinx) -> None:
    if app.builder.name == "gettext":
        from sphinx.builders.gettext import MsgOrigin

        target = app.builder.catalogs[DOMAIN]
        for message, line in js_messages():
            target.add(message, MsgOrigin(str(MODULE), line))
        return
    app.config.html_static_path.append(str(explore.STATIC))
    labels = catalog(app)
    if labels:
        body = "window.LD_EXPLORE_I18N = " + json.dumps(
            labels, ensure_ascii=False, sort_keys=True
        ).replace("</", "<\\/")
        app.add_js_file(None, body=body + ";", priority=400)
    app.add_js_file("explore.js", priority=500)
    app.add_css_file("explore.css")


def _drop_inlined(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Remove the inlined module from every explorable output of the page."""
    for raw in doctree.findall(nodes.raw):
        text = raw.astext()
        if "data-ld-module" not in text:
            continue
        new = INLINED.sub("", text)
        raw.children = [nodes.Text(new)]


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", _builder_inited)
    app.connect("doctree-resolved", _drop_inlined)
    return {
        "version": "0.1",
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
