"""Sphinx extension: the book shows what its ledger measured, and refuses to lie.

Directives
----------
``{claims-summary}``
    One paragraph: how many claims are registered, how many hold, hold with caveats,
    do not hold, or are pending; how many conditions were algebra, how many
    experiments, how many positive controls ran.
``{claims-table}`` (``:chapter:`` N keeps one chapter; ``:numbers:`` gives the ledger's
    full rows) A short list for a reader's page: each claim's id (linked to its
    lesson), verdict, statement and a link to its row in the ledger. With
    ``:numbers:``, one row per claim: what was measured beside what it needed, each
    condition's kind (by algebra or by experiment), the controls and the check.
``{verdict} <id> [<id> ...]``
    A lesson's verdict box, from the same sources.
``{essay-summary}``
    The answer page's opening table: per verdict, the claims that reached it.
``{claim}`C2.3``` (a role)
    A claim's id in prose, linked to its lesson.
``{essay-checked}``
    The answer page: every claim in the essay's order, with the essay's key
    phrase, the claim in our words, the verdict, why (the registry's ``why``),
    the kinds of its conditions and a link to its lesson.

Sources: the registry ``livingdict/claims.yml`` and the ledger that executing the
notebooks wrote (``livingdict.claims.ledger_path()``); the latest line of an id wins.
Placeholders are filled at ``doctree-resolved`` (write time: the pickled doctrees keep
the placeholders). When what the pages show changes (``ledger_stamp``: the registry,
the latest line of every id, the pages built), they are re-written, not re-read.

The guard: once all pages are read, every claim whose lesson is part of this build must
have a ledger line and its latest line must have passed; otherwise the build logs a
warning (an error under ``-W``). A claim whose lesson is not in this build is shown as
"not built" without a warning. A record from before condition kinds were recorded
shows its conditions as of unrecorded kind.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from claims_i18n import (
    _,
    catalog_bytes,
)  # the "claims" domain (beside this file)
from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from livingdict import claims

logger = logging.getLogger(__name__)
STATIC = Path(__file__).with_name("static")

VERDICTS = claims.VERDICTS
#: how the "check" column reads for each status
CHECK_TEXT = {
    "passed": "✓ passed",
    "failed": "✗ FAILED",
    "missing": "✗ no ledger line",
    "unbuilt": "not built",
    "pending": "",
}
#: how a condition's kind reads (``unknown``: a record from before kinds)
KIND_TEXT = {
    "experiment": "by experiment",
    "identity": "by algebra",
    "unknown": "kind not recorded",
}
if False:  # the words above and the verdicts, for the "claims" catalog
    _("✓ passed"), _("✗ FAILED"), _("✗ no ledger line"), _("not built")
    _("holds"), _("holds with caveats"), _("does not hold"), _("pending")
    _("conclusion holds, reason does not"), _("inconclusive")
    _("by experiment"), _("by algebra"), _("kind not recorded")


def _check_text(status: str) -> str:
    """How a check's status reads, in the reader's language."""
    return _(CHECK_TEXT[status]) if CHECK_TEXT[status] else ""


def slug(text: str) -> str:
    """``"holds with caveats"`` → ``"holds-with-caveats"``, ``"C2.1"`` → ``"c2-1"``."""
    return "-".join(re.findall(r"[a-z0-9]+", text.lower()))


def anchor(cid: str) -> str:
    """The id of a claim's row in the ledger (``C2.1`` → ``claim-c2-1``)."""
    return f"claim-{slug(cid)}"


# --------------------------------------------------------------------------- logic
def latest_records(
    records: Iterable[Mapping[str, Any]],
) -> dict[str, dict[str, Any]]:
    """The latest ledger record of each claim id (records are in file order)."""
    return {rec["id"]: dict(rec) for rec in records}


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
                    f'claims.check("{cid}", ...)?)',
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


def condition_kind(rec: Mapping[str, Any], name: str) -> str:
    """``experiment``, ``identity`` or ``unknown`` (a record without kinds)."""
    kind = (rec.get("kinds") or {}).get(name)
    if kind is None:
        kind = next(
            (
                c.get("kind")
                for c in rec.get("conditions") or []
                if c.get("name") == name
            ),
            None,
        )
    return kind if kind in ("experiment", "identity") else "unknown"


def quantity_rows(rec: Mapping[str, Any]) -> list[tuple[str, str, str, str]]:
    """``(quantity, measured, expected, kind)`` for every measured quantity of a
    ledger record, tested ones first (expected ``—``, kind ``""`` when only
    reported)."""
    measured = rec.get("measured") or {}
    expected = rec.get("expected") or {}
    if not isinstance(measured, dict):  # a record from before named quantities
        return [("measured", claims.fmt(measured), str(expected), "unknown")]
    rows = [
        (
            k,
            claims.fmt(measured[k]),
            shown_expected(str(v)),
            condition_kind(rec, k),
        )
        for k, v in expected.items()
        if k in measured
    ]
    rows += [
        (k, claims.fmt(v), "—", "")
        for k, v in measured.items()
        if k not in expected
    ]
    return rows


def kind_counts(rec: Mapping[str, Any]) -> Counter:
    """How many tested conditions of a record are of each kind."""
    return Counter(kind for *_, kind in quantity_rows(rec) if kind)


#: how a count of conditions of each kind reads
KIND_COUNT = {
    "experiment": "{n} by experiment",
    "identity": "{n} by algebra",
    "unknown": "{n} of unrecorded kind",
}
if False:  # for the "claims" catalog
    _("{n} by experiment"), _("{n} by algebra"), _("{n} of unrecorded kind")


def kinds_text(counts: Mapping[str, int]) -> str:
    """``"2 by experiment, 1 by algebra"``; ``"by algebra only (3)"``."""
    if set(counts) == {"identity"}:
        return _("by algebra only ({n})").format(n=counts["identity"])
    return _(", ").join(
        _(KIND_COUNT[k]).format(n=counts[k])
        for k in KIND_COUNT
        if counts.get(k)
    )


def control_lines(
    rec: Mapping[str, Any], key: str = "controls"
) -> list[tuple[str, bool]]:
    """``(control, it failed the test as it must)`` for each control of
    ``key`` (``controls`` or ``positive_controls``)."""
    return [
        (name, not passed) for name, passed in (rec.get(key) or {}).items()
    ]


# ---------------------------------------------------------------------- directives
class claims_placeholder(nodes.General, nodes.Element):
    """Replaced by a summary, a table or a verdict box once all notebooks have run."""


def _directive(kind: str, **spec: Any) -> type[SphinxDirective]:
    """A directive that leaves a placeholder of ``kind`` (with its options and
    arguments) for ``_resolve``."""

    class Directive(SphinxDirective):
        option_spec = spec.get("options", {})
        required_arguments = spec.get("args", 0)
        optional_arguments = 20 if spec.get("args") else 0

        def run(self) -> list[nodes.Node]:
            env = self.env
            env.note_dependency(str(claims.REGISTRY_PATH))
            env.metadata[env.docname]["claims_ledger_page"] = True
            if kind == "summary":
                env.metadata[env.docname]["claims_ledger_index"] = True
            reg = claims.registry()
            for cid in self.arguments:
                if cid not in reg:
                    raise self.error(f"{kind}: unknown claim id {cid!r}")
            chapter = self.options.get("chapter")
            if chapter is not None and str(chapter) not in claims.chapters():
                raise self.error(f"claims-table: unknown chapter {chapter!r}")
            node = claims_placeholder(kind=kind, ids=list(self.arguments))
            node["chapter"] = chapter
            node["numbers"] = "numbers" in self.options
            return [node]

    return Directive


class claim_ref(nodes.Inline, nodes.TextElement):
    """``{claim}`C2.3```: the id, linked to its lesson once all pages are read."""


def claim_role(
    name, rawtext, text, lineno, inliner, options=None, content=None
):
    """``{claim}`C2.3``` in prose: the claim's id, linked to its lesson."""
    if text not in claims.registry():
        msg = inliner.reporter.error(
            f"claim: unknown claim id {text!r}", line=lineno
        )
        return [inliner.problematic(rawtext, rawtext, msg)], [msg]
    return [claim_ref(text, text, id=text)], []


def claim_verdict_role(
    name, rawtext, text, lineno, inliner, options=None, content=None
):
    """``{claim-verdict}`R1```: the id, linked, and its registered verdict."""
    refs, msgs = claim_role(name, rawtext, text, lineno, inliner)
    if msgs:
        return refs, msgs
    return [
        *refs,
        nodes.Text(" "),
        _badge(claims.registry()[text]["verdict"]),
    ], []


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
class Page:
    """What every renderer needs: the app, the page being written, the ledger."""

    def __init__(self, app: Sphinx, docname: str) -> None:
        self.app, self.docname = app, docname
        self.reg = claims.registry()
        self.latest = latest_records(claims.read_ledger(claims.ledger_path()))
        self.built = set(app.env.found_docs)
        self.index = next(
            (
                d
                for d, m in app.env.metadata.items()
                if m.get("claims_ledger_index")
            ),
            None,
        )

    def link(
        self, target: str | None, text: str, fragment: str = ""
    ) -> nodes.Node:
        """A link to a page of this build (plain text when it is not built)."""
        if not target or target not in self.built:
            return nodes.Text(text)
        uri = self.app.builder.get_relative_uri(self.docname, target)
        if fragment:
            uri = (
                f"{uri}#{fragment}"
                if target != self.docname
                else f"#{fragment}"
            )
        return nodes.reference("", text, internal=True, refuri=uri)

    def claim_id(self, cid: str) -> nodes.Node:
        """The id, in bold, linked to its lesson."""
        return nodes.strong(
            "", "", self.link(self.reg[cid].get("notebook"), cid)
        )

    def ledger_link(self, cid: str, text: str) -> nodes.Node:
        return self.link(self.index, text, anchor(cid))

    def lesson(self, cid: str, template: str) -> nodes.Node:
        nb = self.reg[cid].get("notebook")
        titles = self.app.env.titles
        title = titles[nb].astext() if nb in titles else str(nb)
        return self.link(nb, template.format(title=title))

    def status(self, cid: str) -> str:
        return claim_status(self.reg[cid], self.latest.get(cid), self.built)

    def shown(self, cid: str) -> dict[str, Any] | None:
        """The latest record, if the check ran in this build."""
        rec = self.latest.get(cid)
        return rec if self.status(cid) in ("passed", "failed") else None

    def entries(self, chapter: str | None = None) -> list[str]:
        return [
            cid
            for cid, e in self.reg.items()
            if chapter is None or str(e["chapter"]) == str(chapter)
        ]


def _badge(verdict: str | None) -> nodes.Node:
    text = verdict or "pending"
    return nodes.inline(
        text=_(text), classes=["claim-verdict", f"claim-verdict-{slug(text)}"]
    )


def _table(
    header: list[str],
    widths: list[int],
    rows: Iterable[tuple[list[list[nodes.Node]], list[str], list[str]]],
    classes: list[str],
) -> nodes.table:
    """A table: ``rows`` of (cells, each a list of nodes; row classes; row ids)."""
    table = nodes.table(classes=[*classes, "colwidths-given"])
    group = nodes.tgroup(cols=len(header))
    table += group
    for width in widths:
        group += nodes.colspec(colwidth=width)
    hrow = nodes.row()
    for h in header:
        hrow += nodes.entry("", nodes.paragraph(text=h))
    group += nodes.thead("", hrow)
    body = nodes.tbody()
    group += body
    for cells, row_classes, ids in rows:
        row = nodes.row(classes=row_classes, ids=ids)
        for content in cells:
            row += nodes.entry("", *content)
        body += row
    return table


def _para(*children: nodes.Node | str, classes: list[str] | None = None):
    para = nodes.paragraph(classes=classes or [])
    for child in children:
        para += (
            child if isinstance(child, nodes.Node) else nodes.Text(str(child))
        )
    return para


def _summary(page: Page) -> nodes.Node:
    counts = summary_counts(page.reg, page.latest, page.built)
    para = _para(
        nodes.strong(text=_("{n} claims").format(n=len(page.reg))),
        _(" registered. "),
        classes=["claims-summary"],
    )
    parts = [*VERDICTS, "pending"]
    for i, verdict in enumerate(parts):
        para += nodes.strong(text=str(counts[verdict]))
        para += nodes.Text(" ")
        para += _badge(None if verdict == "pending" else verdict)
        para += nodes.Text(" · " if i < len(parts) - 1 else ". ")
    extra = [
        f"{counts[s]} {_check_text(s)}"
        for s in ("unbuilt", "missing", "failed")
        if counts[s]
    ]
    if extra:
        para += nodes.emphasis(
            text=_("Not checked in this build: ") + ", ".join(extra) + ". "
        )
    else:
        para += nodes.Text(_("Every check that ran in this build passed. "))
    kinds: Counter = Counter()
    positive = 0
    for cid in page.reg:
        if rec := page.shown(cid):
            kinds += kind_counts(rec)
            positive += len(control_lines(rec, "positive_controls"))
    para += nodes.Text(
        _("Their conditions: {kinds}; positive controls: {positive}.").format(
            kinds=kinds_text(kinds) or "—", positive=positive
        )
    )
    return para


def _controls(rec: Mapping[str, Any], key: str) -> nodes.Node:
    """Each control of ``key`` and whether it failed, as it must."""
    items = nodes.bullet_list(classes=["claim-controls"])
    for name, failed in control_lines(rec, key):
        outcome = (
            _("failed, as it should") if failed else _("PASSED (it must not)")
        )
        items += nodes.list_item(
            "",
            _para(
                _(name) + " — " + _("must fail: "),
                nodes.strong(text=outcome),
            ),
        )
    return items


def _measured_lines(rec: Mapping[str, Any]) -> nodes.Node:
    """The ledger's cell: each quantity beside what it needed and its kind."""
    lines = nodes.line_block()
    for name, value, needed, kind in quantity_rows(rec):
        need = ""
        if needed != "—":
            need = _(" (needed {condition}, {kind})").format(
                condition=needed, kind=_(KIND_TEXT[kind])
            )
        lines += nodes.line(text=f"{_(name)}: {value}{need}")
    lines += nodes.line(
        text=_("conditions: {kinds}").format(
            kinds=kinds_text(kind_counts(rec))
        ),
        classes=["claim-kinds"],
    )
    for key, text in (
        ("controls", _("controls: {failed} of {n} failed, as they must")),
        (
            "positive_controls",
            _("positive controls: {failed} of {n} failed, as they must"),
        ),
    ):
        controls = control_lines(rec, key)
        if controls or key == "controls":
            failed = sum(ok for _name, ok in controls)
            lines += nodes.line(
                text=text.format(failed=failed, n=len(controls)),
                classes=["claim-controls-count"],
            )
    return lines


def _ledger_table(page: Page, chapter: str | None) -> nodes.Node:
    chapters = claims.chapters()
    header = [
        _("claim"),
        _("statement and lesson"),
        _("verdict"),
        _("what was measured"),
    ]
    widths = [8, 40, 16, 36]
    if chapter is None:
        header.insert(2, _("essay section"))
        widths = [7, 32, 14, 15, 32]
    rows = []
    for cid in page.entries(chapter):
        e, rec, status = page.reg[cid], page.shown(cid), page.status(cid)
        lesson = nodes.paragraph(classes=["claim-lesson"])
        if e.get("notebook"):
            lesson += nodes.Text(_("Lesson: "))
            lesson += page.lesson(cid, "{title}")
        else:
            lesson += nodes.emphasis(text=_("Lesson not written yet."))
        check = _check_text(status)
        if rec:
            check += _(", seed {seed}").format(seed=rec.get("seed"))
        cells = [
            [_para(page.claim_id(cid))],
            [nodes.paragraph(text=_(e["claim"].strip())), lesson],
            [
                _para(_badge(e.get("verdict"))),
                nodes.paragraph(text=check, classes=["claim-check"]),
            ],
            [_measured_lines(rec) if rec else nodes.paragraph(text="—")],
        ]
        if chapter is None:
            section = _(chapters[str(e["chapter"])]["section"])
            cells.insert(2, [nodes.paragraph(text=section)])
        rows.append((cells, [f"claim-{status}"], [anchor(cid)]))
    return _table(header, widths, rows, ["claims-ledger"])


def _short_list(page: Page, chapter: str | None) -> nodes.Node:
    """A reader's page: id (to the lesson), verdict, statement, to the ledger."""
    items = nodes.bullet_list(classes=["claims-short"])
    for cid in page.entries(chapter):
        status = page.status(cid)
        para = _para(
            page.claim_id(cid),
            " ",
            _badge(page.reg[cid].get("verdict")),
            " " + _(page.reg[cid]["claim"].strip()) + " ",
            page.ledger_link(cid, _("Its numbers in the ledger →")),
        )
        if status != "passed":
            para += nodes.emphasis(
                text=f" ({_check_text(status) or _('pending')})"
            )
        items += nodes.list_item("", para, classes=[f"claim-{status}"])
    return items


def _verdict_box(page: Page, ids: list[str]) -> nodes.Node:
    verdicts = {page.reg[c].get("verdict") or "pending" for c in ids}
    one = next(iter(verdicts)) if len(verdicts) == 1 else None
    box = nodes.admonition(
        classes=["verdict", f"verdict-{slug(one or 'mixed')}"]
    )
    box += nodes.title(
        text=_("Verdict: {verdict}").format(verdict=_(one))
        if one
        else _("Verdicts")
    )
    for cid in ids:
        box += _para(
            nodes.strong("", "", page.ledger_link(cid, cid)),
            " ",
            _badge(page.reg[cid].get("verdict")),
            " " + _(page.reg[cid]["claim"].strip()),
            classes=["verdict-claim"],
        )
        rec = page.shown(cid)
        if rec is None:
            status = _check_text(page.status(cid)) or _("pending")
            box += _para(
                nodes.emphasis(
                    text=_("Check: {status}.").format(status=status)
                )
            )
            continue
        counts = kind_counts(rec)
        box += _para(
            nodes.strong(text=_("Conditions: ")),
            _("{kinds}.").format(kinds=kinds_text(counts)),
            classes=["verdict-kinds"],
        )
        if set(counts) == {"identity"}:
            box += _para(
                _(
                    "Every condition of this check is true by algebra whenever "
                    "the code is right: it guards the code, it is not evidence "
                    "that could have come out the other way."
                ),
                classes=["verdict-identities-only"],
            )
        rows = [
            (
                [
                    [nodes.paragraph(text=t)]
                    for t in (_(n), v, need, kind_word)
                ],
                [],
                [],
            )
            for n, v, need, kind in quantity_rows(rec)
            for kind_word in [_(KIND_TEXT[kind]) if kind else ""]
        ]
        box += _table(
            [_("quantity"), _("measured"), _("needed"), _("kind")],
            [46, 18, 18, 18],
            rows,
            ["claim-quantities"],
        )
        box += _para(
            nodes.strong(text=_("What would have failed")),
            _(" (the same test applied to something that must fail it):"),
            classes=["verdict-controls-head"],
        )
        box += _controls(rec, "controls")
        if control_lines(rec, "positive_controls"):
            box += _para(
                nodes.strong(text=_("Positive controls")),
                _(
                    " (the same pipeline where a difference is known to "
                    "exist: the no-difference test must fail there):"
                ),
                classes=["verdict-controls-head"],
            )
            box += _controls(rec, "positive_controls")
        box += _para(
            _("{check} in this build (seed {seed}).").format(
                check=_check_text(page.status(cid)), seed=rec.get("seed")
            ),
            classes=["verdict-check"],
        )
    if page.index:
        box += _para(
            _("Every claim and its numbers: "),
            page.link(page.index, _("the claims ledger")),
            _("; how the book checks them: "),
            page.link("book/how_checked", _("How this book is checked")),
            ".",
            classes=["verdict-ledger-link"],
        )
    return box


def _essay_summary(page: Page) -> nodes.Node:
    """Per verdict, the claims that reached it (ids linked, the essay's phrase)."""
    rows = []
    for verdict in VERDICTS:
        ids = [
            c for c in page.entries() if page.reg[c].get("verdict") == verdict
        ]
        cell = nodes.paragraph()
        for i, cid in enumerate(ids):
            cell += page.claim_id(cid)
            if phrase := page.reg[cid].get("essay"):
                cell += nodes.inline(
                    text=f" 「{phrase}」", classes=["essay-phrase"]
                )
            if i < len(ids) - 1:
                cell += nodes.Text(" · ")
        rows.append(
            (
                [
                    [_para(_badge(verdict))],
                    [nodes.paragraph(text=str(len(ids)))],
                    [cell],
                ],
                [f"essay-summary-{slug(verdict)}"],
                [],
            )
        )
    return _table(
        [_("verdict"), _("claims"), _("which (the essay's words)")],
        [22, 12, 66],
        rows,
        ["essay-summary"],
    )


def _essay_checked(page: Page) -> nodes.Node:
    out = nodes.container(classes=["essay-checked"])
    for chapter, meta in claims.chapters().items():
        ids = page.entries(chapter)
        if not ids:
            continue
        head = _para(
            nodes.strong(text=_(meta["title"])),
            classes=["essay-chapter-title"],
        )
        if chapter != "B":
            head += nodes.Text(f" — {_(meta['section'])}")
        items = nodes.bullet_list(classes=["essay-claims"])
        for cid in ids:
            e, status, rec = page.reg[cid], page.status(cid), page.shown(cid)
            said = _para(page.claim_id(cid), " ", classes=["essay-said"])
            if e.get("essay"):
                said += nodes.inline(
                    text=f"「{e['essay']}」", classes=["essay-phrase"]
                )
                said += nodes.Text(" ")
            said += nodes.Text(_(e["claim"].strip()))
            answer = _para(_badge(e.get("verdict")), classes=["essay-answer"])
            if e.get("why"):
                answer += nodes.Text(" " + _(e["why"].strip()))
            if rec:
                checked = kinds_text(kind_counts(rec))
                positive = len(control_lines(rec, "positive_controls"))
                if positive:
                    checked += _("; {n} positive controls").format(n=positive)
                answer += nodes.inline(
                    text=" " + _("(Checked: {kinds}.)").format(kinds=checked),
                    classes=["essay-kinds"],
                )
            if e.get("notebook"):
                answer += nodes.Text(" ")
                answer += page.lesson(cid, _("Lesson: {title} →"))
            if status != "passed":
                answer += nodes.emphasis(
                    text=f" ({_check_text(status) or _('pending')})"
                )
            items += nodes.list_item(
                "", said, answer, classes=[f"claim-{status}"]
            )
        out += nodes.container("", head, items, classes=["essay-chapter"])
    return out


def _resolve(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    placeholders = list(doctree.findall(claims_placeholder))
    refs = list(doctree.findall(claim_ref))
    if not placeholders and not refs:
        return
    page = Page(app, docname)
    for ref in refs:
        ref.replace_self(
            page.link(page.reg[ref["id"]].get("notebook"), ref["id"])
        )
    for node in placeholders:
        kind = node["kind"]
        if kind == "summary":
            new = _summary(page)
        elif kind == "table" and node["numbers"]:
            new = _ledger_table(page, node["chapter"])
        elif kind == "table":
            new = _short_list(page, node["chapter"])
        elif kind == "essay-summary":
            new = _essay_summary(page)
        elif kind == "essay":
            new = _essay_checked(page)
        else:
            new = _verdict_box(page, node["ids"])
        node.replace_self(new)


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
    catalog: bytes = b"",
) -> str:
    """A digest of all the ledger pages show: the registry, the latest line of every id
    (its ``time`` aside: re-running a lesson to the same result changes nothing), the
    set of pages in this build and the edition's claims catalog."""
    shown = {
        cid: {k: v for k, v in rec.items() if k != "time"}
        for cid, rec in latest.items()
    }
    blob = json.dumps(
        [registry_text, shown, sorted(built)], sort_keys=True, default=str
    )
    return hashlib.sha256(blob.encode("utf-8") + catalog).hexdigest()


def _rewrite_on_ledger_change(app: Sphinx, env) -> list[str]:
    """After every page is read: if the stamp changed since the last build, the pages
    that show the ledger are re-written (Sphinx writes the docnames this returns)."""
    latest = latest_records(claims.read_ledger(claims.ledger_path()))
    registry_text = claims.REGISTRY_PATH.read_text(encoding="utf-8")
    stamp = ledger_stamp(
        registry_text, latest, env.found_docs, catalog_bytes(app)
    )
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
    app.add_node(claim_ref)
    app.add_role("claim", claim_role)
    app.add_directive("claims-summary", _directive("summary"))
    table_options = {
        "chapter": directives.unchanged,
        "numbers": directives.flag,
    }
    app.add_directive(
        "claims-table", _directive("table", options=table_options)
    )
    app.add_directive("verdict", _directive("verdict", args=1))
    app.add_directive("essay-summary", _directive("essay-summary"))
    app.add_directive("essay-checked", _directive("essay"))
    app.add_role("verdict-badge", verdict_badge_role)
    app.add_role("claim-verdict", claim_verdict_role)
    app.connect("builder-inited", _add_static)
    app.add_css_file("book.css")
    app.connect("doctree-resolved", _resolve)
    app.connect("env-check-consistency", _check_ledger)
    app.connect("env-updated", _rewrite_on_ledger_change)
    return {"version": "3.0", "parallel_read_safe": True}
