"""``make static``: every Japanese message translated and consistent.

``python -m tools.i18n_check`` reads ``locale/ja/LC_MESSAGES/**.po`` with
Babel and fails on an entry that is untranslated, fuzzy (the build ignores
it: the page shows English) or obsolete; on a translation whose roles, link
targets or ``$math$`` differ from its English (Sphinx then warns, or a glued
number goes missing); on a ``{name}`` placeholder of ``claims.po`` lost; on
a linked term not shown under its Japanese name from ``book/terms.yml``; on
the essay's English names outside a 「quotation」. Whether the catalogs are
current is ``make i18n-current``'s question (``sphinx-intl update``).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parents[1]
ROLE = re.compile(r"\{(?P<role>[\w:+-]+)\}`(?P<body>[^`]*)`")
TARGET = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>\s*$", re.S)
LINK = re.compile(r"\]\((?P<url>[^)\s]+)\)")
MATH = re.compile(r"(?<![\\$])\$(?P<m>[^$]+)\$")
BRACE = re.compile(r"\{(\w+)\}")
#: the essay's English names, quoted as 「…」; elsewhere the book's term
ESSAY_NAMES = {
    "Attention weight map": "Attentionマップ",
    "causal attention mask": "因果マスク",
}


def roles(text: str) -> list[tuple[str, str, str]]:
    """(role, shown text, target) of every role; a term's target in lower
    case, as the glossary matches it."""
    out = []
    for m in ROLE.finditer(text):
        explicit = TARGET.match(m["body"])
        shown, target = explicit.groups() if explicit else (m["body"],) * 2
        target = target.strip().lower() if m["role"] == "term" else target
        out.append((m["role"], shown, target.strip()))
    return out


def markup(text: str) -> Counter:
    """What a translation must keep: role targets, link targets, math."""
    found = Counter((role, target) for role, _, target in roles(text))
    found.update(("link", m["url"]) for m in LINK.finditer(text))
    found.update(("math", m["m"].strip()) for m in MATH.finditer(text))
    return found


def term_names(path: Path = ROOT / "book" / "terms.yml") -> dict[str, str]:
    """``{English name (lower case): Japanese name}`` from the term list."""
    import yaml

    terms = yaml.safe_load(path.read_text("utf-8")) if path.is_file() else []
    return {t["en"].lower(): t["ja"] for t in terms or []}


def terminology(msgid: str, msgstr: str, names: dict[str, str]) -> list[str]:
    """The terms linked in ``msgid`` that ``msgstr`` does not show under
    their Japanese name."""
    shown: dict[str, list[str]] = {}
    for role, text, target in roles(msgstr):
        if role == "term":
            shown.setdefault(target, []).append(text)
    return [
        f"{target} → {names[target]}"
        for role, _, target in roles(msgid)
        if role == "term"
        and target in names
        and not any(names[target] in t for t in shown.get(target, []))
    ]


def check(locale_dir: Path) -> tuple[list[str], dict[str, int]]:
    """(errors, {catalog: messages}) of every Japanese catalog."""
    base, names = locale_dir / "ja" / "LC_MESSAGES", term_names()
    errors: list[str] = []
    stats: dict[str, int] = {}
    for path in sorted(base.rglob("*.po")):
        rel = path.relative_to(locale_dir.parent)
        domain = path.relative_to(base).with_suffix("").as_posix()
        with path.open("rb") as f:
            catalog = read_po(f, locale="ja", abort_invalid=True)
        active = [m for m in catalog if m.id]
        for m in active:
            where = f"{rel}: {str(m.id)[:70]!r}"
            if m.fuzzy or not m.string:
                what = "fuzzy" if m.fuzzy else "untranslated"
                errors.append(f"{what}: {where}")
                continue
            if markup(m.id) != markup(m.string):
                lost = dict(markup(m.id) - markup(m.string))
                extra = dict(markup(m.string) - markup(m.id))
                errors.append(
                    f"inconsistent markup: {where}: missing {lost}, "
                    f"extra {extra}"
                )
            errors += [
                f"terminology: {where}: name the term {t}"
                for t in terminology(m.id, m.string, names)
            ]
            bare = re.sub(r"「[^」]*」", "", m.string).lower()  # not quoted
            errors += [
                f"essay's name: {where}: outside 「」 say {n} → {ja}"
                for n, ja in ESSAY_NAMES.items()
                if n.lower() in bare
            ]
            placeholders = [set(BRACE.findall(s)) for s in (m.id, m.string)]
            if domain == "claims" and placeholders[0] != placeholders[1]:
                errors.append(f"placeholders differ: {where}")
        for m in catalog.obsolete.values():
            errors.append(f"obsolete: {rel}: {str(m.id)[:70]!r}")
        stats[domain] = len(active)
    return errors, stats


def main() -> int:
    argparse.ArgumentParser(prog="python -m tools.i18n_check").parse_args()
    errors, stats = check(ROOT / "locale")
    for line in errors:
        print("error:", line)
    print(
        f"i18n_check [ja]: {len(errors)} errors, {sum(stats.values())} "
        f"messages in {len(stats)} catalogs"
    )
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
