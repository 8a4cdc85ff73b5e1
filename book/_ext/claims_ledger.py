"""Sphinx extension: the book shows what its ledger measured.

Directives
----------
``{claims-table}`` (option ``:chapter:`` to filter; none = every claim) renders one
row per registered claim: id (linked to its lesson), the claim, the verdict, the
measured numbers, and whether the latest check passed.

``{verdict} <id> [<id> ...]`` renders a lesson's verdict box from the same sources.

Both are filled after every notebook has executed (``doctree-resolved``), from the
registry ``livingdict/claims.yml`` and the ledger the execution wrote
(``livingdict.claims.ledger_path()``: ``$LIVINGDICT_LEDGER`` or ``_build/ledger.jsonl``).
A claim whose lesson exists but has no ledger line, or whose latest line failed, is a
build warning (an error under ``-W``). Pages that use the directives are re-read on
every build, so a cached build still shows the current ledger.
"""

from __future__ import annotations

import json
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from livingdict import claims

logger = logging.getLogger(__name__)
VERDICT_CLASS = {
    "holds": "success",
    "holds with caveats": "warning",
    "does not hold": "danger",
}


class claims_placeholder(nodes.General, nodes.Element):
    """Replaced by a table or a verdict box once all notebooks have run."""


def _latest() -> dict[str, dict[str, Any]]:
    latest: dict[str, dict[str, Any]] = {}
    for rec in claims.read_ledger(claims.ledger_path()):
        latest[rec["id"]] = rec
    return latest


def _short(value: Any, limit: int = 160) -> str:
    if isinstance(value, float):
        text = f"{value:.4g}"
    elif isinstance(value, dict):
        text = ", ".join(f"{k}: {_short(v, 40)}" for k, v in value.items())
    elif isinstance(value, list):
        text = (
            "[" + ", ".join(_short(v, 20) for v in value[:8]) + (", …]" if len(value) > 8 else "]")
        )
    else:
        text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ClaimsTable(SphinxDirective):
    option_spec = {"chapter": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        self.env.note_dependency(str(claims.REGISTRY_PATH))
        self.env.metadata[self.env.docname]["claims_ledger_page"] = True
        node = claims_placeholder()
        node["kind"] = "table"
        node["chapter"] = self.options.get("chapter")
        return [node]


class Verdict(SphinxDirective):
    required_arguments = 1
    optional_arguments = 20

    def run(self) -> list[nodes.Node]:
        reg = claims.registry()
        for cid in self.arguments:
            if cid not in reg:
                raise self.error(f"verdict: unknown claim id {cid!r}")
        self.env.metadata[self.env.docname]["claims_ledger_page"] = True
        node = claims_placeholder()
        node["kind"] = "verdict"
        node["ids"] = list(self.arguments)
        return [node]


def _status(cid: str, entry: dict, latest: dict, docname: str) -> tuple[str, dict | None]:
    rec = latest.get(cid)
    if entry.get("notebook") is None:
        return "pending", rec
    if rec is None:
        logger.warning(
            f"claim {cid}: its lesson exists but the ledger has no line", location=docname
        )
        return "missing", None
    if not rec["passed"]:
        logger.warning(f"claim {cid}: the latest check failed: {json.dumps(rec)}", location=docname)
        return "failed", rec
    return "passed", rec


def _lesson_ref(app: Sphinx, fromdoc: str, entry: dict, text: str) -> nodes.Node:
    target = entry.get("notebook")
    if not target or target not in app.env.all_docs:
        return nodes.Text(text)
    ref = nodes.reference("", text, internal=True)
    ref["refuri"] = app.builder.get_relative_uri(fromdoc, target)
    return ref


def _table(app: Sphinx, fromdoc: str, chapter: str | None, latest: dict) -> nodes.Node:
    reg = claims.registry()
    chapters = claims.chapters()
    rows = [e for e in reg.values() if chapter is None or str(e["chapter"]) == str(chapter)]
    table = nodes.table(classes=["claims-ledger"])
    header = ["id", "claim", "essay section", "verdict", "measured", "check"]
    group = nodes.tgroup(cols=len(header))
    for width in (6, 40, 14, 12, 22, 6):
        group += nodes.colspec(colwidth=width)
    table += group
    thead = nodes.thead()
    group += thead
    hrow = nodes.row()
    for h in header:
        hrow += nodes.entry("", nodes.paragraph(text=h))
    thead += hrow
    tbody = nodes.tbody()
    group += tbody
    for e in rows:
        status, rec = _status(e["id"], e, latest, fromdoc)
        row = nodes.row(classes=[f"claim-{status}"])
        idpar = nodes.paragraph()
        idpar += _lesson_ref(app, fromdoc, e, e["id"])
        measured = _short(rec["measured"]) if rec and status != "pending" else "—"
        mark = {
            "passed": "✓ passed",
            "failed": "✗ failed",
            "missing": "no line",
            "pending": "pending",
        }
        cells = [
            idpar,
            nodes.paragraph(text=e["claim"]),
            nodes.paragraph(text=chapters[str(e["chapter"])]["section"]),
            nodes.paragraph(text=e.get("verdict") or "pending"),
            nodes.paragraph(text=measured),
            nodes.paragraph(text=mark[status]),
        ]
        for c in cells:
            row += nodes.entry("", c)
        tbody += row
    return table


def _verdict_box(app: Sphinx, fromdoc: str, ids: list[str], latest: dict) -> nodes.Node:
    reg = claims.registry()
    verdicts = {reg[c].get("verdict") or "pending" for c in ids}
    cls = VERDICT_CLASS.get(verdicts.pop(), "note") if len(verdicts) == 1 else "warning"
    box = nodes.admonition(classes=["verdict", cls])
    box += nodes.title(text="Verdict — " + ", ".join(ids))
    items = nodes.bullet_list()
    for cid in ids:
        e = reg[cid]
        status, rec = _status(cid, e, latest, fromdoc)
        para = nodes.paragraph()
        para += nodes.strong(text=f"{cid}: {e.get('verdict') or 'pending'}. ")
        para += nodes.Text(e["claim"] + " ")
        if rec is not None:
            para += nodes.emphasis(
                text=f"Check {'passed' if rec['passed'] else 'FAILED'} (seed {rec['seed']}): "
                f"measured {_short(rec['measured'])}; expected {_short(rec['expected'])}."
            )
        else:
            para += nodes.emphasis(text=f"Check: {status}.")
        items += nodes.list_item("", para)
    box += items
    return box


def _resolve(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    placeholders = list(doctree.findall(claims_placeholder))
    if not placeholders:
        return
    latest = _latest()
    for node in placeholders:
        if node["kind"] == "table":
            node.replace_self(_table(app, docname, node["chapter"], latest))
        else:
            node.replace_self(_verdict_box(app, docname, node["ids"], latest))


def _always_reread(app: Sphinx, env, added, changed, removed) -> list[str]:
    return [d for d, meta in env.metadata.items() if meta.get("claims_ledger_page")]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_node(claims_placeholder)
    app.add_directive("claims-table", ClaimsTable)
    app.add_directive("verdict", Verdict)
    app.connect("doctree-resolved", _resolve)
    app.connect("env-get-outdated", _always_reread)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
