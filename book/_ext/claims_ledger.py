"""Sphinx extension: the book shows what its ledger measured, and refuses to lie.

Directives
----------
``{claims-summary}``
    One paragraph: how many claims are registered, how many hold, hold with caveats,
    do not hold, or are pending.
``{claims-table}`` (option ``:chapter:`` N to keep one chapter; none = every claim)
    One row per registered claim: id (linked to its lesson), the claim in our words
    and its lesson, the verdict, the numbers the latest check measured, and the check.
``{verdict} <id> [<id> ...]``
    A lesson's verdict box, from the same sources.
``{essay-checked}``
    The answer page: every claim in the essay's order, with the essay's key
    phrase, the claim in our words, the verdict, why (the registry's ``why``)
    and a link to its lesson.

Sources: the registry ``livingdict/claims.yml`` and the ledger that executing the
notebooks wrote (``livingdict.claims.ledger_path()``: ``$LIVINGDICT_LEDGER`` or
``_build/ledger.jsonl``); the latest line of an id wins. Tables and boxes are filled
after every notebook has run (``doctree-resolved``, at write time: the pickled doctrees
keep the placeholders). Pages that use the directives are re-read only when their
source or the registry changes; after reading, when what they show changed since the
last build (``ledger_stamp``: the registry, the latest line of every id, the pages
built), they are re-written, not re-read, so a cached build shows the current ledger
without parsing or executing anything again.

The guard: once all pages are read (so every notebook that needed to run has run),
every claim whose lesson is part of this build must have a ledger line and its latest
line must have passed; otherwise the build logs a warning (an error under ``-W``).
A claim whose lesson is registered but not in this build (a private, reduced toc) is
shown as "not built" without a warning. The logic lives in plain functions
(``latest_records``, ``claim_status``, ``ledger_problems``, ``summary_counts``) that
``tests/test_claims_ledger.py`` runs on fixture ledgers.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from claims_i18n import _  # the "claims" gettext domain (beside this file)
from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from livingdict import claims

logger = logging.getLogger(__name__)
STATIC = Path(__file__).with_name("static")

VERDICTS = claims.VERDICTS
#: admonition class of a verdict box (pydata-sphinx-theme colours: tip is green)
BOX_CLASS = {
    "holds": "tip",
    "holds with caveats": "warning",
    "conclusion holds, reason does not": "warning",
    "does not hold": "danger",
}
#: how the "check" column reads for each status
CHECK_TEXT = {
    "passed": "✓ passed",
    "failed": "✗ FAILED",
    "missing": "✗ no ledger line",
    "unbuilt": "not built",
    "pending": "",
}
if False:  # the words above and the verdicts, for the "claims" catalog
    _("✓ passed"), _("✗ FAILED"), _("✗ no ledger line"), _("not built")
    _("holds"), _("holds with caveats"), _("does not hold"), _("pending")
    _("conclusion holds, reason does not")


def _check_text(status: str) -> str:
    """How a check's status reads, in the reader's language."""
    return _(CHECK_TEXT[status]) if CHECK_TEXT[status] else ""


# --------------------------------------------------------------------------- logic
def latest_records(
    records: Iterable[Mapping[str, Any]],
) -> dict[str, dict[str, Any]]:
    """The latest ledger record of each claim id (records are in file order)."""
    latest: dict[str, dict[str, Any]] = {}
    for rec in records:
        latest[rec["id"]] = dict(rec)
    return latest


def claim_status(
    entry: Mapping[str, Any],
    rec: Mapping[str, Any] | None,
    built: Iterable[str] | None,
) -> str:
    """One of ``pending | unbuilt | missing | failed | passed``.

    ``pending``: the registry names no lesson yet. ``unbuilt``: it names one that is not
    among ``built`` (the docnames of this build; ``None`` = assume every lesson built).
    ``missing``: the lesson was built but the ledger has no line for the id.
    ``failed`` / ``passed``: the latest line's outcome.
    """
    notebook = entry.get("notebook")
    if not notebook:
        return "pending"
    if built is not None and notebook not in set(built):
        return "unbuilt"
    if rec is None:
        return "missing"
    return "passed" if rec.get("passed") is True else "failed"


def ledger_problems(
    registry: Mapping[str, Mapping[str, Any]],
    latest: Mapping[str, Mapping[str, Any]],
    built: Iterable[str] | None,
) -> list[tuple[str, str]]:
    """``(docname, message)`` for every built claim without a passing latest line."""
    built = None if built is None else set(built)
    problems = []
    for cid, entry in registry.items():
        rec = latest.get(cid)
        status = claim_status(entry, rec, built)
        if status == "missing":
            problems.append(
                (
                    entry["notebook"],
                    f"claim {cid}: its lesson {entry['notebook']} was built but the ledger "
                    f"{claims.ledger_path()} has no line for it (does the lesson call "
                    f'claims.check("{cid}", ...)? If it ran from the jupyter cache before the '
                    "ledger was reset, delete _build/.jupyter_cache and rebuild)",
                )
            )
        elif status == "failed":
            problems.append(
                (
                    entry["notebook"],
                    f"claim {cid}: the latest check in the ledger failed: "
                    f"{json.dumps(rec, ensure_ascii=False)}",
                )
            )
    return problems


def summary_counts(
    registry: Mapping[str, Mapping[str, Any]],
    latest: Mapping[str, Mapping[str, Any]],
    built: Iterable[str] | None,
) -> Counter:
    """Counts of verdicts (of claims whose check passed) and of the other statuses."""
    built = None if built is None else set(built)
    counts: Counter = Counter()
    for cid, entry in registry.items():
        status = claim_status(entry, latest.get(cid), built)
        if status == "passed" and entry.get("verdict") in VERDICTS:
            counts[entry["verdict"]] += 1
        else:
            counts[status if status != "passed" else "pending"] += 1
    return counts


def shown_expected(text: str) -> str:
    """An ``expected`` condition as a reader reads it (``== 0`` → ``= 0``,
    ``true`` → ``yes``)."""
    return {"true": "yes", "false": "no"}.get(text, text.replace("==", "="))


def quantity_rows(rec: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """``(quantity, measured, expected)`` for every measured quantity of a
    ledger record, tested ones first (expected ``—`` when only reported)."""
    measured = rec.get("measured") or {}
    expected = rec.get("expected") or {}
    if not isinstance(measured, dict):  # a record from before named quantities
        return [("measured", claims.fmt(measured), str(expected))]
    rows = [
        (k, claims.fmt(measured[k]), shown_expected(str(v)))
        for k, v in expected.items()
        if k in measured
    ]
    rows += [
        (k, claims.fmt(v), "—")
        for k, v in measured.items()
        if k not in expected
    ]
    return rows


def control_lines(rec: Mapping[str, Any]) -> list[tuple[str, bool]]:
    """``(control, it failed the test as it must)`` for each control."""
    return [
        (name, not passed)
        for name, passed in (rec.get("controls") or {}).items()
    ]


# ---------------------------------------------------------------------- directives
class claims_placeholder(nodes.General, nodes.Element):
    """Replaced by a summary, a table or a verdict box once all notebooks have run."""


def _placeholder(
    directive: SphinxDirective, kind: str, **attrs: Any
) -> list[nodes.Node]:
    directive.env.note_dependency(str(claims.REGISTRY_PATH))
    directive.env.metadata[directive.env.docname]["claims_ledger_page"] = True
    node = claims_placeholder()
    node["kind"] = kind
    for key, value in attrs.items():
        node[key] = value
    return [node]


class ClaimsSummary(SphinxDirective):
    def run(self) -> list[nodes.Node]:
        self.env.metadata[self.env.docname]["claims_ledger_index"] = True
        return _placeholder(self, "summary")


class ClaimsTable(SphinxDirective):
    option_spec = {"chapter": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        chapter = self.options.get("chapter")
        if chapter is not None and str(chapter) not in claims.chapters():
            raise self.error(f"claims-table: unknown chapter {chapter!r}")
        return _placeholder(self, "table", chapter=chapter)


class EssayChecked(SphinxDirective):
    """Every claim in the essay's order: its key phrase, our paraphrase, the
    verdict, why, and the lesson."""

    def run(self) -> list[nodes.Node]:
        return _placeholder(self, "essay")


class Verdict(SphinxDirective):
    required_arguments = 1
    optional_arguments = 20

    def run(self) -> list[nodes.Node]:
        reg = claims.registry()
        for cid in self.arguments:
            if cid not in reg:
                raise self.error(f"verdict: unknown claim id {cid!r}")
        return _placeholder(self, "verdict", ids=list(self.arguments))


def verdict_badge_role(
    name, rawtext, text, lineno, inliner, options=None, content=None
):
    """``{verdict-badge}`holds``` renders a verdict as the ledger shows it."""
    if text not in (*VERDICTS, "pending"):
        msg = inliner.reporter.error(
            f"verdict-badge: unknown verdict {text!r}", line=lineno
        )
        return [inliner.problematic(rawtext, rawtext, msg)], [msg]
    return [_badge(None if text == "pending" else text)], []


# ------------------------------------------------------------------------ rendering
def _built(app: Sphinx) -> set[str]:
    return set(app.env.found_docs)


def _doc_link(
    app: Sphinx, fromdoc: str, target: str | None, text: str
) -> nodes.Node:
    if not target or target not in app.env.found_docs:
        return nodes.Text(text)
    ref = nodes.reference("", text, internal=True)
    ref["refuri"] = app.builder.get_relative_uri(fromdoc, target)
    return ref


def _badge(verdict: str | None) -> nodes.Node:
    text = verdict or "pending"
    slug = "-".join(re.findall(r"[a-z]+", text))
    return nodes.inline(
        text=_(text), classes=["claim-verdict", f"claim-verdict-{slug}"]
    )


def _summary(app: Sphinx, latest: dict) -> nodes.Node:
    reg = claims.registry()
    counts = summary_counts(reg, latest, _built(app))
    para = nodes.paragraph(classes=["claims-summary"])
    para += nodes.strong(text=_("{n} claims").format(n=len(reg)))
    para += nodes.Text(_(" registered. "))
    parts = [(counts[v], v, _badge(v)) for v in VERDICTS]
    parts.append((counts["pending"], "pending", _badge(None)))
    for i, (n, _verdict, badge) in enumerate(parts):
        para += nodes.strong(text=str(n))
        para += nodes.Text(" ")
        para += badge
        para += nodes.Text(" · " if i < len(parts) - 1 else ". ")
    extra = [
        f"{counts[s]} {_check_text(s)}"
        for s in ("unbuilt", "missing", "failed")
        if counts[s]
    ]
    if extra:
        para += nodes.emphasis(
            text=_("Not checked in this build: ") + ", ".join(extra) + "."
        )
    else:
        para += nodes.Text(_("Every check that ran in this build passed."))
    return para


def _quantities_table(rec: Mapping[str, Any]) -> nodes.Node:
    """The measured quantities beside the conditions they had to meet."""
    table = nodes.table(classes=["claim-quantities", "colwidths-given"])
    group = nodes.tgroup(cols=3)
    table += group
    for width in (56, 22, 22):
        group += nodes.colspec(colwidth=width)
    thead, tbody = nodes.thead(), nodes.tbody()
    hrow = nodes.row()
    for h in (_("quantity"), _("measured"), _("needed")):
        hrow += nodes.entry("", nodes.paragraph(text=h))
    thead += hrow
    group += thead
    group += tbody
    for name, value, needed in quantity_rows(rec):
        row = nodes.row()
        for text in (_(name), value, needed):
            row += nodes.entry("", nodes.paragraph(text=text))
        tbody += row
    return table


def _controls_list(rec: Mapping[str, Any]) -> nodes.Node:
    """What would have failed: each control and whether it failed."""
    items = nodes.bullet_list(classes=["claim-controls"])
    for name, failed in control_lines(rec):
        para = nodes.paragraph()
        para += nodes.Text(_(name) + " — ")
        para += nodes.strong(
            text=_("failed the test ✓") if failed else _("PASSED the test ✗")
        )
        items += nodes.list_item("", para)
    return items


def _table(
    app: Sphinx, fromdoc: str, chapter: str | None, latest: dict
) -> nodes.Node:
    reg = claims.registry()
    chapters = claims.chapters()
    built = _built(app)
    rows = [
        e
        for e in reg.values()
        if chapter is None or str(e["chapter"]) == str(chapter)
    ]
    header = [_("claim"), _("statement and lesson"), _("verdict")]
    header.append(_("what was measured"))
    widths = [8, 40, 16, 36]
    if chapter is None:
        header.insert(2, _("essay section"))
        widths = [7, 32, 14, 15, 32]
    table = nodes.table(classes=["claims-ledger", "colwidths-given"])
    group = nodes.tgroup(cols=len(header))
    table += group
    for width in widths:
        group += nodes.colspec(colwidth=width)
    thead, tbody = nodes.thead(), nodes.tbody()
    hrow = nodes.row()
    for h in header:
        hrow += nodes.entry("", nodes.paragraph(text=h))
    thead += hrow
    group += thead
    group += tbody
    for e in rows:
        rec = latest.get(e["id"])
        status = claim_status(e, rec, built)
        idpar = nodes.paragraph()
        idpar += nodes.strong(
            "", "", _doc_link(app, fromdoc, e.get("notebook"), e["id"])
        )
        statement = nodes.paragraph(text=_(e["claim"].strip()))
        lesson = nodes.paragraph(classes=["claim-lesson"])
        if e.get("notebook"):
            nb = e["notebook"]
            title = app.env.titles[nb].astext() if nb in app.env.titles else nb
            lesson += nodes.Text(_("Lesson: "))
            lesson += _doc_link(app, fromdoc, nb, title)
        else:
            lesson += nodes.emphasis(text=_("Lesson not written yet."))
        shown = rec is not None and status in ("passed", "failed")
        measured = nodes.line_block()
        if shown:
            for name, value, needed in quantity_rows(rec):
                need = "" if needed == "—" else _(" (needed {condition})")
                need = need.format(condition=needed)
                measured += nodes.line(text=f"{_(name)}: {value}{need}")
            controls = control_lines(rec)
            failed = sum(ok for _name, ok in controls)
            measured += nodes.line(
                text=_(
                    "controls: {failed} of {n} failed, as they must"
                ).format(failed=failed, n=len(controls)),
                classes=["claim-controls-count"],
            )
        else:
            measured += nodes.line(text="—")
        check = _check_text(status)
        if shown:
            check += _(", seed {seed}").format(seed=rec.get("seed"))
        cells: list[list[nodes.Node]] = [
            [idpar],
            [statement, lesson],
            [
                nodes.paragraph("", "", _badge(e.get("verdict"))),
                nodes.paragraph(text=check, classes=["claim-check"]),
            ],
            [measured],
        ]
        if chapter is None:
            cells.insert(
                2,
                [
                    nodes.paragraph(
                        text=_(chapters[str(e["chapter"])]["section"])
                    )
                ],
            )
        row = nodes.row(classes=[f"claim-{status}"])
        for content in cells:
            row += nodes.entry("", *content)
        tbody += row
    return table


def _verdict_box(
    app: Sphinx, fromdoc: str, ids: list[str], latest: dict
) -> nodes.Node:
    reg = claims.registry()
    built = _built(app)
    verdicts = {reg[c].get("verdict") or "pending" for c in ids}
    cls = (
        BOX_CLASS.get(next(iter(verdicts)), "note")
        if len(verdicts) == 1
        else "warning"
    )
    box = nodes.admonition(classes=["verdict", cls])
    if len(verdicts) == 1:
        verdict = _(next(iter(verdicts)))
        box += nodes.title(
            text=_("Verdict: {verdict}").format(verdict=verdict)
        )
    else:
        box += nodes.title(text=_("Verdicts"))
    for cid in ids:
        e = reg[cid]
        rec = latest.get(cid)
        status = claim_status(e, rec, built)
        para = nodes.paragraph(classes=["verdict-claim"])
        para += nodes.strong(text=f"{cid} ")
        para += _badge(e.get("verdict"))
        para += nodes.Text(" " + _(e["claim"].strip()))
        box += para
        if rec is not None and status in ("passed", "failed"):
            box += _quantities_table(rec)
            head = nodes.paragraph(classes=["verdict-controls-head"])
            head += nodes.strong(text=_("What would have failed"))
            head += nodes.Text(
                _(" (the same test applied to something that must fail it):")
            )
            box += head
            box += _controls_list(rec)
            foot = nodes.paragraph(classes=["verdict-check"])
            foot += nodes.Text(
                _("{check} in this build (seed {seed}).").format(
                    check=_check_text(status), seed=rec.get("seed")
                )
            )
            box += foot
        else:
            box += nodes.paragraph(
                "",
                "",
                nodes.emphasis(
                    text=_("Check: {status}.").format(
                        status=_check_text(status) or _("pending")
                    )
                ),
            )
    index = next(
        (
            d
            for d, m in app.env.metadata.items()
            if m.get("claims_ledger_index")
        ),
        None,
    )
    if index:
        foot = nodes.paragraph(classes=["verdict-ledger-link"])
        foot += nodes.Text(_("Every claim and its numbers: "))
        foot += _doc_link(app, fromdoc, index, _("the claims ledger"))
        foot += nodes.Text(".")
        box += foot
    return box


def _essay_checked(app: Sphinx, fromdoc: str, latest: dict) -> nodes.Node:
    reg = claims.registry()
    built = _built(app)
    out = nodes.container(classes=["essay-checked"])
    for chapter, meta in claims.chapters().items():
        entries = [e for e in reg.values() if str(e["chapter"]) == chapter]
        if not entries:
            continue
        section = nodes.container(classes=["essay-chapter"])
        head = nodes.paragraph(classes=["essay-chapter-title"])
        head += nodes.strong(text=_(meta["title"]))
        if chapter != "B":
            head += nodes.Text(f" — {_(meta['section'])}")
        section += head
        items = nodes.bullet_list(classes=["essay-claims"])
        for e in entries:
            status = claim_status(e, latest.get(e["id"]), built)
            item = nodes.list_item(classes=[f"claim-{status}"])
            said = nodes.paragraph(classes=["essay-said"])
            if e.get("essay"):
                said += nodes.inline(
                    text=f"「{e['essay']}」", classes=["essay-phrase"]
                )
                said += nodes.Text(" ")
            said += nodes.Text(_(e["claim"].strip()))
            item += said
            answer = nodes.paragraph(classes=["essay-answer"])
            answer += _badge(e.get("verdict"))
            if e.get("why"):
                answer += nodes.Text(" " + _(e["why"].strip()))
            if e.get("notebook"):
                nb = e["notebook"]
                title = (
                    app.env.titles[nb].astext() if nb in app.env.titles else nb
                )
                answer += nodes.Text(" ")
                link = _("Lesson: {title} →").format(title=title)
                answer += _doc_link(app, fromdoc, nb, link)
            if status != "passed":
                answer += nodes.emphasis(
                    text=f" ({_check_text(status) or _('pending')})"
                )
            item += answer
            items += item
        section += items
        out += section
    return out


def _resolve(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    placeholders = list(doctree.findall(claims_placeholder))
    if not placeholders:
        return
    latest = latest_records(claims.read_ledger(claims.ledger_path()))
    for node in placeholders:
        if node["kind"] == "summary":
            node.replace_self(_summary(app, latest))
        elif node["kind"] == "table":
            node.replace_self(_table(app, docname, node["chapter"], latest))
        elif node["kind"] == "essay":
            node.replace_self(_essay_checked(app, docname, latest))
        else:
            node.replace_self(_verdict_box(app, docname, node["ids"], latest))


# ---------------------------------------------------------------------------- hooks
def _check_ledger(app: Sphinx, env) -> None:
    """After every page is read (every notebook that needed to run has run)."""
    latest = latest_records(claims.read_ledger(claims.ledger_path()))
    for docname, message in ledger_problems(
        claims.registry(), latest, env.found_docs
    ):
        logger.warning(
            message, location=docname, type="claims", subtype="ledger"
        )


def ledger_stamp(
    registry_text: str,
    latest: Mapping[str, Mapping[str, Any]],
    built: Iterable[str],
) -> str:
    """A digest of all the ledger pages show: the registry, the latest line of every id
    (its ``time`` aside: re-running a lesson to the same result changes nothing) and the
    set of pages in this build."""
    shown = {
        cid: {k: v for k, v in rec.items() if k != "time"}
        for cid, rec in latest.items()
    }
    blob = json.dumps(
        [registry_text, shown, sorted(built)], sort_keys=True, default=str
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _rewrite_on_ledger_change(app: Sphinx, env) -> list[str]:
    """After every page is read: if the stamp changed since the last build, the pages
    that show the ledger are re-written (Sphinx writes the docnames this returns)."""
    latest = latest_records(claims.read_ledger(claims.ledger_path()))
    registry_text = claims.REGISTRY_PATH.read_text(encoding="utf-8")
    stamp = ledger_stamp(registry_text, latest, env.found_docs)
    if getattr(env, "claims_ledger_stamp", None) == stamp:
        return []
    env.claims_ledger_stamp = stamp
    pages = (
        d for d, meta in env.metadata.items() if meta.get("claims_ledger_page")
    )
    return sorted(d for d in pages if d in env.found_docs)


def _add_static(app: Sphinx) -> None:
    app.config.html_static_path.append(str(STATIC))


def setup(app: Sphinx) -> dict[str, Any]:
    app.setup_extension("page_fixes")  # beside this file: fixes every page
    app.setup_extension("claims_i18n")  # beside this file: the claims domain
    app.setup_extension("terms")  # beside this file: the glossary's term list
    app.add_node(claims_placeholder)
    app.add_directive("claims-summary", ClaimsSummary)
    app.add_directive("claims-table", ClaimsTable)
    app.add_directive("verdict", Verdict)
    app.add_directive("essay-checked", EssayChecked)
    app.add_role("verdict-badge", verdict_badge_role)
    app.connect("builder-inited", _add_static)
    app.add_css_file("book.css")
    app.connect("doctree-resolved", _resolve)
    app.connect("env-check-consistency", _check_ledger)
    app.connect("env-updated", _rewrite_on_ledger_change)
    return {
        "version": "2.0",
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
