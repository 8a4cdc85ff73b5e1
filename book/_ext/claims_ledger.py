"""Sphinx extension: the book shows what its ledger measured; it never lies.

Directives leave placeholders that are filled at write time, from
``livingdict/claims.yml`` and the ledger the lessons wrote while the pages
were read: ``{claims-summary}``, ``{claims-table}`` (``:chapter: N``; with
``:numbers:`` the ledger's rows), ``{verdict} <id> ...``,
``{essay-summary}``, ``{essay-checked}``; roles ``{claim}``,
``{claim-verdict}``, ``{verdict-badge}``. Under ``-W`` the build fails when
a claim whose lesson is built has no passing latest line. The pages are
re-written, not re-read, when what they show changes (``ledger_stamp``).

Their words are in no document, so Sphinx's i18n never sees them: they are
the gettext domain ``claims`` (``claims.pot``: the registry's shown texts,
every ``_("…")`` here, the names the ledger recorded), compiled from
``claims.po`` in a translated build (fuzzy entries left out).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx import locale
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective, SphinxRole
from sphinx.util.i18n import CatalogRepository
from sphinx.util.nodes import make_refnode

from livingdict import claims

logger = logging.getLogger(__name__)
DOMAIN = "claims"
_ = locale.get_translation(DOMAIN)
CHECK_TEXT = {
    "passed": "✓ passed",
    "failed": "✗ FAILED",
    "missing": "✗ no ledger line",
    "unbuilt": "not built",
    "pending": "pending",
}
KINDS = {  # a kind, beside a quantity and counted (unknown: a record from
    # before kinds were recorded)
    "experiment": ("by experiment", "{n} by experiment"),
    "identity": ("by algebra", "{n} by algebra"),
    "unknown": ("kind not recorded", "{n} of unrecorded kind"),
}
#: the registry's fields pages show (``essay`` is quoted, not translated)
SHOWN = ("claim", "title", "section", "verdict", "why")
Record = Mapping[str, Any]
STATIC = str(Path(__file__).with_name("static"))  # book.css
slug = nodes.make_id  # "holds with caveats" → "holds-with-caveats"


def anchor(cid: str) -> str:
    """The id of a claim's row in the ledger."""
    return f"claim-{slug(cid)}"


def latest_records(records: Iterable[Record]) -> dict[str, dict[str, Any]]:
    return {rec["id"]: dict(rec) for rec in records}


def claim_status(entry: Record, rec: Record | None, built: Any) -> str:
    """``pending`` (no lesson), ``unbuilt`` (its lesson is not among
    ``built``; ``None``: all are), ``missing`` (no ledger line), or the
    latest line's ``failed`` / ``passed``."""
    notebook = entry.get("notebook")
    if not notebook:
        return "pending"
    if built is not None and notebook not in set(built):
        return "unbuilt"
    if rec is None:
        return "missing"
    return "passed" if rec.get("passed") is True else "failed"


def ledger_problems(
    registry: Mapping[str, Record], latest: Mapping[str, Record], built: Any
) -> list[tuple[str, str]]:
    """``(docname, message)`` for every built claim without a passing
    latest line."""
    problems = []
    for cid, entry in registry.items():
        nb, rec = entry.get("notebook"), latest.get(cid)
        status = claim_status(entry, rec, built)
        if status == "missing":
            message = (
                f"claim {cid}: its lesson {nb} was built but the ledger "
                f"{claims.ledger_path()} has no line for it (does the lesson "
                f'call claims.check("{cid}", ...)?)'
            )
            problems.append((nb, message))
        elif status == "failed":
            record = json.dumps(rec, ensure_ascii=False)
            message = f"claim {cid}: the latest check in the ledger failed: "
            problems.append((nb, message + record))
    return problems


def summary_counts(
    registry: Mapping[str, Record], latest: Mapping[str, Record], built: Any
) -> Counter:
    """How many claims reached each verdict (their check passed), and how
    many are in each other status."""
    counts: Counter = Counter()
    for cid, entry in registry.items():
        status = claim_status(entry, latest.get(cid), built)
        if status == "passed" and entry.get("verdict") in claims.VERDICTS:
            counts[entry["verdict"]] += 1
        else:
            counts["pending" if status == "passed" else status] += 1
    return counts


def quantity_rows(rec: Record) -> list[tuple[str, str, str, str]]:
    """``(quantity, measured, expected, kind)``, tested ones first (``—``
    and ``""`` for one only reported); ``== 0`` reads ``= 0``, ``true``
    ``yes``; the kind ``experiment``, ``identity`` or ``unknown`` (a record
    from before kinds were recorded, unless its conditions name them)."""
    measured, expected = rec.get("measured") or {}, rec.get("expected") or {}
    kinds = {c.get("name"): c.get("kind") for c in rec.get("conditions") or []}
    kinds |= rec.get("kinds") or {}
    fmt, rows = claims.fmt, []
    for k, v in ((k, str(v)) for k, v in expected.items() if k in measured):
        kind = kinds[k] if kinds.get(k) in ("experiment", "identity") else ""
        shown = {"true": "yes", "false": "no"}.get(v, v.replace("==", "="))
        rows.append((k, fmt(measured[k]), shown, kind or "unknown"))
    others = [k for k in measured if k not in expected]
    return rows + [(k, fmt(measured[k]), "—", "") for k in others]


def kind_counts(rec: Record) -> Counter:
    return Counter(kind for *_, kind in quantity_rows(rec) if kind)


def kinds_text(counts: Mapping[str, int]) -> str:
    """``"2 by experiment, 1 by algebra"``; ``"by algebra only (3)"``."""
    if set(counts) == {"identity"}:
        return _("by algebra only ({n})").format(n=counts["identity"])
    texts = [
        _(KINDS[k][1]).format(n=counts[k]) for k in KINDS if counts.get(k)
    ]
    return _(", ").join(texts)


def control_lines(
    rec: Record, key: str = "controls"
) -> list[tuple[str, bool]]:
    """``(control, it failed the test as it must)`` of ``controls`` or
    ``positive_controls``."""
    return [
        (name, not passed) for name, passed in (rec.get(key) or {}).items()
    ]


# ------------------------------------------------------------- the source
class claims_placeholder(nodes.General, nodes.Element):
    pass


class claim_ref(nodes.Inline, nodes.TextElement):
    pass


class Placeholder(SphinxDirective):
    """Every directive here: a placeholder named after it."""

    optional_arguments = 20
    option_spec = {"chapter": directives.unchanged, "numbers": directives.flag}

    def run(self) -> list[nodes.Node]:
        meta = self.env.metadata[self.env.docname]
        self.env.note_dependency(str(claims.REGISTRY_PATH))
        meta["claims_ledger_page"] = True
        if self.name == "claims-summary":
            meta["claims_ledger_index"] = True  # the ledger links go here
        if self.name == "verdict" and not self.arguments:
            raise self.error("verdict: name the claim ids")
        for cid in self.arguments:
            if cid not in claims.registry():
                raise self.error(f"{self.name}: unknown claim id {cid!r}")
        chapter = self.options.get("chapter")
        if chapter is not None and str(chapter) not in claims.chapters():
            raise self.error(f"claims-table: unknown chapter {chapter!r}")
        node = claims_placeholder(kind=self.name, ids=list(self.arguments))
        node["chapter"], node["numbers"] = chapter, "numbers" in self.options
        return [node]


class ClaimRole(SphinxRole):
    """``{claim}`C2.3```: the id, linked to its lesson; ``{claim-verdict}``
    adds its verdict; ``{verdict-badge}`holds``` shows a verdict."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        badge = self.name == "verdict-badge"
        known = (*claims.VERDICTS, "pending") if badge else claims.registry()
        if self.text not in known:
            what = "verdict" if badge else "claim id"
            message = f"{self.name}: unknown {what} {self.text!r}"
            logger.warning(message, location=self.get_location())
            return [nodes.Text(self.rawtext)], []
        if badge:
            return [_badge(self.text)], []
        out: list[nodes.Node] = [claim_ref(self.text, self.text, id=self.text)]
        if self.name == "claim-verdict":
            verdict = claims.registry()[self.text]["verdict"]
            out += [nodes.Text(" "), _badge(verdict)]
        return out, []


# ------------------------------------------------------------ the pages
def _badge(verdict: str | None) -> nodes.Node:
    text = verdict or "pending"
    classes = ["claim-verdict", f"claim-verdict-{slug(text)}"]
    return nodes.inline(text=_(text), classes=classes)


def _para(*children: Any, classes: list[str] | None = None) -> nodes.paragraph:
    texts = [
        c if isinstance(c, nodes.Node) else nodes.Text(c) for c in children
    ]
    return nodes.paragraph("", "", *texts, classes=classes or [])


def _table(
    head: list[str], widths: list[int], rows: list, cls: str
) -> nodes.table:
    """A table: ``rows`` of (cells, each a list of nodes; classes; ids)."""
    group = nodes.tgroup(cols=len(head))
    group += [nodes.colspec(colwidth=w) for w in widths]
    heads = [nodes.entry("", nodes.paragraph(text=h)) for h in head]
    body = nodes.tbody()
    for cells, classes, ids in rows:
        entries = [nodes.entry("", *content) for content in cells]
        body += nodes.row("", *entries, classes=classes, ids=ids)
    group += [nodes.thead("", nodes.row("", *heads)), body]
    return nodes.table("", group, classes=[cls, "colwidths-given"])


class Page:
    """What every renderer needs: the page written, the registry, the
    ledger, the pages built, the ledger page (``index``)."""

    def __init__(self, app: Sphinx, docname: str) -> None:
        self.app, self.docname = app, docname
        self.reg = claims.registry()
        self.latest = latest_records(claims.read_ledger())
        self.built = set(app.env.found_docs)
        meta = app.env.metadata.items()
        self.index = next(
            (d for d, m in meta if m.get("claims_ledger_index")), None
        )

    def link(
        self, target: str | None, text: str, fragment: str = ""
    ) -> nodes.Node:
        """A link to a page of this build (plain text when it is not built)."""
        if not target or target not in self.built:
            return nodes.Text(text)
        builder, here = self.app.builder, self.docname
        return make_refnode(builder, here, target, fragment, nodes.Text(text))

    def lesson(self, cid: str, template: str = "{cid}") -> nodes.Node:
        """A link to a claim's lesson: ``template`` with ``cid``, ``title``."""
        nb, titles = self.reg[cid].get("notebook"), self.app.env.titles
        title = titles[nb].astext() if nb in titles else str(nb)
        return self.link(nb, template.format(cid=cid, title=title))

    def claim_id(self, cid: str, to_row: bool = False) -> nodes.Node:
        """The id, linked to its lesson (``to_row``: to its ledger row)."""
        if to_row:
            link = self.link(self.index, cid, anchor(cid))
        else:
            link = self.lesson(cid)
        return nodes.strong("", "", link)

    def claim_line(self, cid: str, to_row: bool = False) -> list[Any]:
        """The id, its verdict, what it claims (for ``_para``)."""
        e, id_link = self.reg[cid], self.claim_id(cid, to_row)
        said = " " + _(e["claim"].strip())
        return [id_link, " ", _badge(e.get("verdict")), said]

    def phrase(self, cid: str) -> list[nodes.Node]:
        """The essay's words for a claim, quoted (not translated)."""
        if not (words := self.reg[cid].get("essay")):
            return []
        quoted = nodes.inline(text=f"「{words}」", classes=["essay-phrase"])
        return [nodes.Text(" "), quoted]

    def status(self, cid: str) -> str:
        return claim_status(self.reg[cid], self.latest.get(cid), self.built)

    def shown(self, cid: str) -> dict[str, Any] | None:
        """The latest record, if the check ran in this build."""
        ran = self.status(cid) in ("passed", "failed")
        return self.latest.get(cid) if ran else None

    def entries(self, chapter: str | None) -> list[str]:
        """The ids of ``chapter`` (``None``: every id)."""
        reg = self.reg.items()
        return [c for c, e in reg if chapter in (None, str(e["chapter"]))]

    def item(self, cid: str, *paragraphs: nodes.Node) -> nodes.list_item:
        """A claim in a list, classed by its status; after one that did not
        pass, `` (not built)`` and the like."""
        if (status := self.status(cid)) != "passed":
            text = f" ({_(CHECK_TEXT[status])})"
            paragraphs[-1].append(nodes.emphasis(text=text))
        return nodes.list_item("", *paragraphs, classes=[f"claim-{status}"])


def _summary(page: Page, node: nodes.Element) -> nodes.Node:
    counts = summary_counts(page.reg, page.latest, page.built)
    para = _para(
        nodes.strong(text=_("{n} claims").format(n=len(page.reg))),
        _(" registered. "),
        classes=["claims-summary"],
    )
    for i, verdict in enumerate(parts := [*claims.VERDICTS, "pending"]):
        end = " · " if i < len(parts) - 1 else ". "
        para += [nodes.strong(text=str(counts[verdict])), nodes.Text(" ")]
        para += [_badge(verdict), nodes.Text(end)]
    statuses = ("unbuilt", "missing", "failed")
    extra = [f"{counts[s]} {_(CHECK_TEXT[s])}" for s in statuses if counts[s]]
    if extra:
        text = _("Not checked in this build: ") + _(", ").join(extra) + ". "
        para += nodes.emphasis(text=text)
    else:
        para += nodes.Text(_("Every check that ran in this build passed. "))
    shown = [rec for cid in page.reg if (rec := page.shown(cid))]
    kinds = kinds_text(sum(map(kind_counts, shown), Counter())) or "—"
    positive = sum(len(control_lines(r, "positive_controls")) for r in shown)
    text = _("Their conditions: {kinds}; positive controls: {positive}.")
    para += nodes.Text(text.format(kinds=kinds, positive=positive))
    return para


def _controls(rec: Record, key: str) -> nodes.Node:
    items = nodes.bullet_list(classes=["claim-controls"])
    for name, failed in control_lines(rec, key):
        outcome = (
            _("failed, as it should") if failed else _("PASSED (it must not)")
        )
        must = _(name) + " — " + _("must fail: ")
        items += nodes.list_item("", _para(must, nodes.strong(text=outcome)))
    return items


def _measured_lines(rec: Record) -> nodes.Node:
    """The ledger's cell: each quantity beside what it needed, its kind."""
    lines = nodes.line_block()
    for name, value, needed, kind in quantity_rows(rec):
        need = _(" (needed {condition}, {kind})") if needed != "—" else ""
        if need:
            need = need.format(condition=needed, kind=_(KINDS[kind][0]))
        lines += nodes.line(text=f"{_(name)}: {value}{need}")
    kinds = _("conditions: {kinds}").format(kinds=kinds_text(kind_counts(rec)))
    lines += nodes.line(text=kinds, classes=["claim-kinds"])
    counts = {
        "controls": _("controls: {failed} of {n} failed, as they must"),
        "positive_controls": _(
            "positive controls: {failed} of {n} failed, as they must"
        ),
    }
    for key, text in counts.items():
        controls = control_lines(rec, key)
        if controls or key == "controls":
            failed = sum(ok for _name, ok in controls)
            text = text.format(failed=failed, n=len(controls))
            lines += nodes.line(text=text, classes=["claim-controls-count"])
    return lines


def _ledger_table(page: Page, chapter: str | None) -> nodes.Node:
    head = [_("claim"), _("statement and lesson"), _("verdict")]
    head += [_("what was measured")]
    rows = []
    for cid in page.entries(chapter):
        e, rec, status = page.reg[cid], page.shown(cid), page.status(cid)
        lesson = nodes.paragraph(classes=["claim-lesson"])
        if e.get("notebook"):
            lesson += [nodes.Text(_("Lesson: ")), page.lesson(cid, "{title}")]
        else:
            lesson += nodes.emphasis(text=_("Lesson not written yet."))
        check = _(CHECK_TEXT[status]) if status != "pending" else ""
        check += _(", seed {seed}").format(seed=rec.get("seed")) if rec else ""
        cells = [
            [_para(page.claim_id(cid))],
            [nodes.paragraph(text=_(e["claim"].strip())), lesson],
            [
                _para(_badge(e.get("verdict"))),
                nodes.paragraph(text=check, classes=["claim-check"]),
            ],
            [_measured_lines(rec) if rec else nodes.paragraph(text="—")],
        ]
        rows.append((cells, [f"claim-{status}"], [anchor(cid)]))
    return _table(head, [8, 40, 16, 36], rows, "claims-ledger")


def _short_list(page: Page, chapter: str | None) -> nodes.Node:
    """A reader's page: id (to its lesson), verdict, statement, its row."""
    items = nodes.bullet_list(classes=["claims-short"])
    for cid in page.entries(chapter):
        to_row = _("Its numbers in the ledger →")
        row = page.link(page.index, to_row, anchor(cid))
        items += page.item(cid, _para(*page.claim_line(cid), " ", row))
    return items


def _verdict_box(page: Page, node: nodes.Element) -> nodes.Node:
    verdicts = {page.reg[c].get("verdict") or "pending" for c in node["ids"]}
    one = verdicts.pop() if len(verdicts) == 1 else None
    title = _("Verdict: {verdict}").format(verdict=_(one)) if one else ""
    box = nodes.admonition("", nodes.title(text=title or _("Verdicts")))
    box["classes"] = ["verdict", f"verdict-{slug(one or 'mixed')}"]
    for cid in node["ids"]:
        line = page.claim_line(cid, to_row=True)
        box += _para(*line, classes=["verdict-claim"])
        if (rec := page.shown(cid)) is None:
            status = _(CHECK_TEXT[page.status(cid)])
            text = _("Check: {status}.").format(status=status)
            box += _para(nodes.emphasis(text=text))
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
                    "Every condition of this check is true by algebra "
                    "whenever the code is right: it guards the code, it is "
                    "not evidence that could have come out the other way."
                ),
                classes=["verdict-identities-only"],
            )
        rows = []
        for name, value, needed, kind in quantity_rows(rec):
            kind = _(KINDS[kind][0]) if kind else ""
            cells = [[_para(t)] for t in (_(name), value, needed, kind)]
            rows.append((cells, [], []))
        head = [_("quantity"), _("measured"), _("needed"), _("kind")]
        box += _table(head, [46, 18, 18, 18], rows, "claim-quantities")
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
        check = _("{check} in this build (seed {seed}).").format(
            check=_(CHECK_TEXT[page.status(cid)]), seed=rec.get("seed")
        )
        box += _para(check, classes=["verdict-check"])
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


def _essay_summary(page: Page, node: nodes.Element) -> nodes.Node:
    """Per verdict, the claims that reached it (the essay's phrases)."""
    rows = []
    for verdict in claims.VERDICTS:
        ids = [c for c, e in page.reg.items() if e.get("verdict") == verdict]
        cell = nodes.paragraph()
        for cid in ids:
            cell += [nodes.Text(" · ")] if cell.children else []
            cell += [page.claim_id(cid), *page.phrase(cid)]
        cells = [[_para(_badge(verdict))], [_para(str(len(ids)))], [cell]]
        rows.append((cells, [f"essay-summary-{slug(verdict)}"], []))
    head = [_("verdict"), _("claims"), _("which (the essay's words)")]
    return _table(head, [22, 12, 66], rows, "essay-summary")


def _essay_checked(page: Page, node: nodes.Element) -> nodes.Node:
    """Per chapter, what the essay said of each claim, and the answer."""
    out = nodes.container(classes=["essay-checked"])
    for chapter, meta in claims.chapters().items():
        if not (ids := page.entries(chapter)):
            continue
        section = f" — {_(meta['section'])}" if chapter != "B" else ""
        title = nodes.strong(text=_(meta["title"]))
        head = _para(title, section, classes=["essay-chapter-title"])
        items = nodes.bullet_list(classes=["essay-claims"])
        for cid in ids:
            e, rec = page.reg[cid], page.shown(cid)
            said = [page.claim_id(cid), *page.phrase(cid)]
            said += [" " + _(e["claim"].strip())]
            answer = [_badge(e.get("verdict"))]
            answer += [" " + _(e["why"].strip())] if e.get("why") else []
            if rec:
                checked = kinds_text(kind_counts(rec))
                if positive := len(control_lines(rec, "positive_controls")):
                    checked += _("; {n} positive controls").format(n=positive)
                text = " " + _("(Checked: {kinds}.)").format(kinds=checked)
                answer += [nodes.inline(text=text, classes=["essay-kinds"])]
            if e.get("notebook"):
                answer += [" ", page.lesson(cid, _("Lesson: {title} →"))]
            said = _para(*said, classes=["essay-said"])
            answer = _para(*answer, classes=["essay-answer"])
            items += page.item(cid, said, answer)
        out += nodes.container("", head, items, classes=["essay-chapter"])
    return out


RENDER = {  # every directive here, by the name of its placeholder
    "claims-summary": _summary,
    "claims-table": lambda page, node: (
        _ledger_table if node["numbers"] else _short_list
    )(page, node["chapter"]),
    "verdict": _verdict_box,
    "essay-summary": _essay_summary,
    "essay-checked": _essay_checked,
}


def _resolve(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    placeholders = list(doctree.findall(claims_placeholder))
    refs = list(doctree.findall(claim_ref))
    if not placeholders and not refs:
        return
    page = Page(app, docname)
    for ref in refs:
        ref.replace_self(page.lesson(ref["id"]))
    for node in placeholders:
        node.replace_self(RENDER[node["kind"]](page, node))


# ----------------------------------------------------------------- hooks
def _check_ledger(app: Sphinx, env: Any) -> None:
    """Once every page is read (every lesson that had to run has run)."""
    latest = latest_records(claims.read_ledger())
    problems = ledger_problems(claims.registry(), latest, env.found_docs)
    for docname, message in problems:
        logger.warning(
            message, location=docname, type="claims", subtype="ledger"
        )


def ledger_stamp(
    registry_text: str,
    latest: Mapping[str, Record],
    built: Iterable[str],
    catalog: bytes = b"",
) -> str:
    """A digest of what the ledger's pages show: the registry, the latest
    line of every id (its ``time`` aside), the pages built, the catalog."""
    shown = {
        cid: {k: v for k, v in rec.items() if k != "time"}
        for cid, rec in latest.items()
    }
    blob = json.dumps(
        [registry_text, shown, sorted(built)], sort_keys=True, default=str
    )
    return hashlib.sha256(blob.encode("utf-8") + catalog).hexdigest()


def _rewrite_on_ledger_change(app: Sphinx, env: Any) -> list[str]:
    """The pages that show the ledger, to write again if the stamp changed."""
    latest = latest_records(claims.read_ledger())
    registry = claims.REGISTRY_PATH.read_text(encoding="utf-8")
    stamp = ledger_stamp(registry, latest, env.found_docs, catalog_bytes(app))
    if getattr(env, "claims_ledger_stamp", None) == stamp:
        return []
    env.claims_ledger_stamp = stamp
    pages = [d for d, m in env.metadata.items() if m.get("claims_ledger_page")]
    return sorted(d for d in pages if d in env.found_docs)


def registry_messages() -> list[str]:
    """Every text of the registry that pages show."""
    entries = [*claims.chapters().values(), *claims.entries()]
    texts = [e.get(key) for e in entries for key in SHOWN]
    return [text.strip() for text in texts if isinstance(text, str)]


def _add_to_gettext(app: Sphinx) -> None:
    """The gettext build: the domain's messages go to ``claims.pot``."""
    if app.builder.name != "gettext":
        return
    from babel.messages.extract import extract_from_file
    from sphinx.builders.gettext import MsgOrigin

    here = str(Path(__file__))
    words = [*CHECK_TEXT.values(), *(w for k in KINDS.values() for w in k)]
    messages = [*registry_messages(), *words, *claims.VERDICTS]
    messages += [
        m for _n, m, *_r in extract_from_file("python", here, {"_": None})
    ]
    groups = ("measured", "controls", "positive_controls")
    for rec in latest_records(claims.read_ledger()).values():
        names = [rec[g] for g in groups if isinstance(rec.get(g), dict)]
        messages += [name for group in names for name in group]
    catalog = app.builder.catalogs[DOMAIN]
    for i, message in enumerate(filter(None, messages)):
        catalog.add(message, MsgOrigin(here, i))


def _load_catalog(app: Sphinx, env: Any, docnames: list[str]) -> None:
    """A translated build: load ``claims.mo``, which Sphinx compiled (fuzzy
    entries left out) with the pages' catalogs before reading them."""
    if (language := app.config.language) in (None, "", "en"):
        return
    dirs = [str(Path(app.srcdir, d)) for d in app.config.locale_dirs]
    if not locale.init(dirs, language, DOMAIN)[1]:
        message = f"no {DOMAIN}.po for language {language!r}"
        logger.warning(message, type="i18n", subtype="claims")


def catalog_bytes(app: Sphinx) -> bytes:
    """A changed catalog changes no document: the stamp includes it."""
    lang, dirs = app.config.language, app.config.locale_dirs
    repo = CatalogRepository(app.srcdir, dirs, lang, "utf-8")
    found = (c.po_path for c in repo.catalogs if c.domain == DOMAIN)
    return b"".join(Path(path).read_bytes() for path in found)


def setup(app: Sphinx) -> None:
    app.add_node(claims_placeholder)
    app.add_node(claim_ref)
    for name in ("claim", "claim-verdict", "verdict-badge"):
        app.add_role(name, ClaimRole())
    for name in RENDER:
        app.add_directive(name, Placeholder)
    app.connect("builder-inited", _add_to_gettext)
    app.connect("env-before-read-docs", _load_catalog)
    app.connect(
        "config-inited", lambda _, c: c.html_static_path.append(STATIC)
    )
    app.add_css_file("book.css")
    app.connect("doctree-resolved", _resolve)
    app.connect("env-check-consistency", _check_ledger)
    app.connect("env-updated", _rewrite_on_ledger_change)
