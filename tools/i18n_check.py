"""Static check of the translations: every message translated, current and consistent.

Usage::

    python -m tools.i18n_check [--pot _build/gettext] [--locale locale] [--lang ja]
                               [--allow-untranslated] [--stats]

Reads every ``<locale>/<lang>/LC_MESSAGES/**/*.po`` and, when ``--pot`` names a folder of
freshly extracted templates (``sphinx-build -b gettext``), every ``.pot`` there, with
Babel (``babel.messages.pofile.read_po``; no other library). Fails (exit 1) on:

* **untranslated**: an active entry with an empty ``msgstr``;
* **fuzzy**: an entry flagged ``#, fuzzy`` (``sphinx-intl update`` flags an entry whose
  English changed a little; the build ignores it, so the page shows English);
* **obsolete**: an ``#~`` entry (English removed or changed a lot; sphinx-intl keeps the
  old translation as obsolete);
* **out of date**: the .pot and the .po of a document disagree on the set of msgids (an
  English edit without ``sphinx-intl update``), a .pot without a .po, a .po without a
  .pot (a document removed);
* **inconsistent markup**: the roles (``{term}`x```, ``{cite:t}`k```, ``{glue:text}`v```,
  ...), link targets and ``$math$`` of a msgstr differ from those of its msgid (Sphinx
  then warns "inconsistent ... references in translated message", or a number silently
  goes missing); for ``{term}`` the target is compared (``{term}`訳 <activation>``` is fine);
* **placeholders**: a ``{name}`` of a ``claims`` message missing from its translation;
* **terminology**: a glossary term linked in the English (``{term}`filter```)
  must be linked in the translation under its Japanese name from the one term
  list, ``book/terms.yml`` (``{term}`フィルター <filter>```);
* **essay's names**: the essay's own English names (「Attention weight map」,
  「causal attention mask」) only inside 「…」, where the essay is quoted;
  elsewhere the book's terms (Attentionマップ, 因果マスク).

``--allow-untranslated`` reports untranslated entries without failing (while a
translation is in progress); ``--stats`` prints the message count of every catalog.
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
LINK = re.compile(r"\]\((?P<url>[^)\s]+)\)")
MATH = re.compile(r"(?<![\\$])\$(?P<m>[^$]+)\$")
BRACE = re.compile(r"\{(\w+)\}")
#: The essay's English names, quoted as 「…」; the book's Japanese term else.
ESSAY_NAMES = {
    "Attention weight map": "Attentionマップ",
    "causal attention mask": "因果マスク",
}
QUOTED = re.compile(r"「[^」]*」")


def essay_names(msgstr: str) -> list[str]:
    """The essay's names that ``msgstr`` uses outside a 「quotation」."""
    bare = QUOTED.sub("", msgstr).lower()
    return [
        f"{name} → {ja}"
        for name, ja in ESSAY_NAMES.items()
        if name.lower() in bare
    ]


def load(path: Path, locale: str | None = None):
    with path.open("rb") as f:
        return read_po(f, locale=locale, abort_invalid=True)


def markup(text: str) -> Counter:
    """What a translation must keep: role targets, link targets, inline math."""
    found: Counter = Counter()
    for m in ROLE.finditer(text):
        role, body = m["role"], m["body"]
        explicit = re.search(r"<([^<>]+)>\s*$", body)
        target = explicit.group(1) if explicit else body
        if role in ("term",):
            target = target.strip().lower()
        found[(role, target.strip())] += 1
    for m in LINK.finditer(text):
        found[("link", m["url"])] += 1
    for m in MATH.finditer(text):
        found[("math", m["m"].strip())] += 1
    return found


def term_names(path: Path | None = None) -> dict[str, str]:
    """``{English name (lower case): Japanese name}`` from the term list."""
    import yaml

    path = path or ROOT / "book" / "terms.yml"
    if not path.is_file():
        return {}
    terms = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    return {t["en"].lower(): t["ja"] for t in terms}


def terminology(msgid: str, msgstr: str, names: dict[str, str]) -> list[str]:
    """The terms linked in ``msgid`` that ``msgstr`` does not show under
    their Japanese name."""
    wrong = []
    shown: dict[str, list[str]] = {}
    for m in ROLE.finditer(msgstr):
        if m["role"] == "term":
            explicit = re.search(r"^(.*?)\s*<([^<>]+)>\s*$", m["body"])
            text, target = explicit.groups() if explicit else (m["body"],) * 2
            shown.setdefault(target.strip().lower(), []).append(text)
    for m in ROLE.finditer(msgid):
        if m["role"] != "term":
            continue
        explicit = re.search(r"<([^<>]+)>\s*$", m["body"])
        target = (explicit.group(1) if explicit else m["body"]).strip().lower()
        ja = names.get(target)
        if ja and not any(ja in text for text in shown.get(target, [])):
            wrong.append(f"{target} → {ja}")
    return wrong


def check(
    locale_dir: Path, lang: str, pot_dir: Path | None, allow_untranslated: bool
):
    base = locale_dir / lang / "LC_MESSAGES"
    errors: list[str] = []
    notes: list[str] = []
    stats: dict[str, tuple[int, int]] = {}
    pos = {
        p.relative_to(base).with_suffix("").as_posix(): p
        for p in sorted(base.rglob("*.po"))
    }
    names = term_names() if lang == "ja" else {}
    for domain, path in pos.items():
        cat = load(path, lang)
        rel = (
            path.relative_to(locale_dir.parent)
            if locale_dir.is_absolute()
            else path
        )
        active = [m for m in cat if m.id]
        done = 0
        for m in active:
            where = f"{rel}: {str(m.id)[:70]!r}"
            if m.fuzzy:
                errors.append(f"fuzzy: {where}")
            elif not m.string:
                (notes if allow_untranslated else errors).append(
                    f"untranslated: {where}"
                )
            else:
                done += 1
                if markup(m.id) != markup(m.string):
                    lost = markup(m.id) - markup(m.string)
                    extra = markup(m.string) - markup(m.id)
                    errors.append(
                        f"inconsistent markup: {where}: missing {dict(lost)}, extra {dict(extra)}"
                    )
                for term in terminology(m.id, m.string, names):
                    errors.append(
                        f"terminology: {where}: name the term {term}"
                    )
                for name in essay_names(m.string) if lang == "ja" else ():
                    errors.append(
                        f"essay's name: {where}: outside 「」 say {name}"
                    )
                if domain == "claims" and set(BRACE.findall(m.id)) != set(
                    BRACE.findall(m.string)
                ):
                    errors.append(f"placeholders differ: {where}")
        for m in cat.obsolete.values():
            errors.append(f"obsolete: {rel}: {str(m.id)[:70]!r}")
        stats[domain] = (len(active), done)
    if pot_dir is not None:
        pots = {
            p.relative_to(pot_dir).with_suffix("").as_posix(): p
            for p in pot_dir.rglob("*.pot")
        }
        pots.pop("sphinx", None)  # theme templates: not ours to translate
        for domain in sorted(set(pots) - set(pos)):
            errors.append(
                f"out of date: {domain}.pot has no .po (run sphinx-intl update)"
            )
        for domain in sorted(set(pos) - set(pots)):
            errors.append(
                f"out of date: {domain}.po has no .pot (document removed?)"
            )
        for domain in sorted(set(pots) & set(pos)):
            want = {m.id for m in load(pots[domain]) if m.id}
            have = {m.id for m in load(pos[domain], lang) if m.id}
            for msg in sorted(want - have):
                errors.append(
                    f"out of date: {domain}: new English {msg[:70]!r} (sphinx-intl update)"
                )
            for msg in sorted(have - want):
                errors.append(
                    f"out of date: {domain}: stale {msg[:70]!r} (sphinx-intl update)"
                )
    return errors, notes, stats


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locale", type=Path, default=ROOT / "locale")
    parser.add_argument("--lang", default="ja")
    parser.add_argument(
        "--pot", type=Path, default=None, help="folder of fresh .pot files"
    )
    parser.add_argument("--allow-untranslated", action="store_true")
    parser.add_argument("--stats", action="store_true")
    args = parser.parse_args(argv)
    errors, notes, stats = check(
        args.locale, args.lang, args.pot, args.allow_untranslated
    )
    if args.stats:
        for domain, (n, done) in stats.items():
            print(f"{n:5d} {done:5d}  {domain}")
        total = sum(n for n, _ in stats.values())
        print(
            f"{total:5d} {sum(d for _, d in stats.values()):5d}  total (messages, translated)"
        )
    for line in notes:
        print("note:", line)
    for line in errors:
        print("error:", line)
    print(
        f"i18n_check [{args.lang}]: {len(errors)} errors, {len(notes)} notes, "
        f"{sum(n for n, _ in stats.values())} messages in {len(stats)} catalogs"
    )
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
