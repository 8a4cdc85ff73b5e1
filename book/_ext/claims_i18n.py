"""Translations of the text the claims ledger draws at write time (not in any document).

The claims tables and verdict boxes (``claims_ledger``) are filled at ``doctree-resolved``
from ``livingdict/claims.yml`` and from the extension's own words; Sphinx's document
i18n never sees that text. It goes through one extra gettext domain, ``claims``, with the
same files and tools as the documents:

* ``sphinx-build -b gettext`` also writes ``claims.pot``: every claim statement,
  reason (``why``), chapter and section title and verdict word of the registry,
  every ``_("...")`` string of ``claims_ledger.py`` (extracted with Babel), and the
  names of the quantities and controls in the ledger's latest checks (so run the
  lessons first);
* ``sphinx-intl update`` keeps ``locale/<lang>/LC_MESSAGES/claims.po`` with the others
  (an English edit of claims.yml then shows as a fuzzy or untranslated entry there);
* in a translated build the catalog is compiled (fuzzy entries left out, as gettext
  does) and loaded before any page is written; ``_`` translates, and falls back to
  the English text for anything missing or fuzzy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.locale import get_translation
from sphinx.util import logging
from sphinx.util.i18n import CatalogInfo

from livingdict import claims

logger = logging.getLogger(__name__)
DOMAIN = "claims"
HERE = Path(__file__).parent
#: the modules whose ``_("...")`` strings belong to the domain
SOURCES = [HERE / "claims_ledger.py"]

_ = get_translation(DOMAIN)
#: the registry's fields that pages show (``essay`` is quoted, never translated)
SHOWN = ("claim", "title", "section", "verdict", "why")


def registry_messages() -> list[tuple[str, int]]:
    """``(text, line)`` of every translatable string of the registry, in file order."""
    import yaml

    text = claims.REGISTRY_PATH.read_text(encoding="utf-8")
    root = yaml.compose(text)
    out: list[tuple[str, int]] = []

    def walk(node: Any, key: str | None = None) -> None:
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                walk(v, k.value)
        elif isinstance(node, yaml.SequenceNode):
            for v in node.value:
                walk(v, key)
        elif key in SHOWN and node.tag.endswith(":str"):
            # folded block scalars arrive joined into one line, as shown
            out.append((node.value.strip(), node.start_mark.line + 1))

    walk(root)
    return out


def ledger_messages() -> list[str]:
    """The names of the quantities, controls and positive controls that the latest checks
    recorded: the verdict boxes show them beside their numbers."""
    latest: dict[str, dict] = {}
    for rec in claims.read_ledger():
        latest[rec["id"]] = rec
    names: list[str] = []
    for rec in latest.values():
        for group in ("measured", "controls", "positive_controls"):
            value = rec.get(group)
            if isinstance(value, dict):
                names += [k for k in value if k not in names]
    return names


def code_messages() -> list[tuple[str, str, int]]:
    """``(text, file, line)`` of every ``_("...")`` in :data:`SOURCES` (Babel's extractor)."""
    from babel.messages.extract import extract_from_file

    out = []
    for path in SOURCES:
        for lineno, message, _comments, _context in extract_from_file(
            "python", str(path), keywords={"_": None}
        ):
            out.append((message, str(path), lineno))
    return out


def _add_to_gettext(app: Sphinx) -> None:
    """gettext builder: put the domain's messages into ``claims.pot`` (same run)."""
    if app.builder.name != "gettext":
        return
    from sphinx.builders.gettext import MsgOrigin

    catalog = app.builder.catalogs[DOMAIN]
    for message, line in registry_messages():
        catalog.add(message, MsgOrigin(str(claims.REGISTRY_PATH), line))
    for message, source, line in code_messages():
        catalog.add(message, MsgOrigin(source, line))
    ledger = str(claims.ledger_path())
    for i, message in enumerate(ledger_messages()):
        catalog.add(message, MsgOrigin(ledger, i + 1))


def _load_catalog(app: Sphinx) -> None:
    """Translated builds: compile ``claims.po`` if newer than its .mo, then load it."""
    language = app.config.language
    if not language or language == "en" or not app.config.locale_dirs:
        return
    from sphinx import locale

    for folder in app.config.locale_dirs:
        base = Path(app.srcdir, folder, language, "LC_MESSAGES")
        info = CatalogInfo(str(base), DOMAIN, app.config.source_encoding)
        if Path(info.po_path).is_file():
            if info.is_outdated():
                info.write_mo(language, use_fuzzy=False)
            locale.init([str(Path(app.srcdir, folder))], language, DOMAIN)
            return
    logger.warning(
        f"no {DOMAIN}.po for language {language!r}",
        type="i18n",
        subtype="claims",
    )


def catalog_bytes(app: Sphinx) -> bytes:
    """The content of this edition's ``claims.po`` (none in English): a changed
    catalog changes no document, so ``claims_ledger``'s stamp includes it and
    the pages that show claims are re-written."""
    language = app.config.language
    if not language or language == "en":
        return b""
    paths = [
        Path(app.srcdir, d, language, "LC_MESSAGES", f"{DOMAIN}.po")
        for d in app.config.locale_dirs
    ]
    return b"".join(p.read_bytes() for p in paths if p.is_file())


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", _add_to_gettext)
    app.connect("builder-inited", _load_catalog)
    return {"version": "0.2", "parallel_read_safe": True}
