"""``make static``: the book checked as stored, nothing executed.

``python -m tools.static_checks [--root DIR]`` lists every problem and exits
1 on any; claims with neither lesson nor verdict are listed as pending. Each
``check_*`` below is one rule, its docstring the rule. The lessons are
``claims.notebooks(root)``, the registry ``src/livingdict/claims.yml``, the
Japanese catalogs ``locale/ja/LC_MESSAGES`` (whether they are current is
``make i18n-current``'s question: ``sphinx-intl update``). What the lessons'
runs refuse (a check without controls: ``claims.check``) and Sphinx
(``-W``: a toc entry that is not a document) is not repeated here; a claim of
no difference without positive controls is refused here too, before any run.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import functools
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from babel.messages.pofile import read_po
from sphinx_external_toc.parsing import MalformedError, parse_toc_yaml

from livingdict import claims
from tools.set_repo_url import colab_cell

ROOT = Path(__file__).resolve().parents[1]
REGISTRY = Path("src") / "livingdict" / "claims.yml"
ALLOWED_NUMBERS = ROOT / "tools" / "allowed_numbers.yml"
PRAGMA = re.compile(r"#\s*(?:fmt:\s*(?:off|on|skip)|(?:ruff:\s*)?noqa)\b")
#: headless kernels can hang on a widget (jupyter/nbclient#312)
WIDGET_TAGS = ("skip-execution", "nbval-skip", "remove-output")
Nb = Any  # a notebook as nbformat reads it
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


def _code(nb: Nb) -> Iterator[tuple[int, Nb]]:
    return ((i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code")


def check_calls(nb: Nb) -> Iterator[tuple[int, str, set[str]]]:
    """(cell, claim id, keywords) of every ``check("<id>", ...)`` call in a
    notebook's code (a cell that is not plain Python, %pip, has none)."""
    for i, cell in _code(nb):
        try:
            nodes = ast.walk(ast.parse(cell.source))
        except SyntaxError:
            continue
        for call in (n for n in nodes if isinstance(n, ast.Call)):
            name = getattr(call.func, "attr", getattr(call.func, "id", ""))
            cid = getattr(call.args[0], "value", None) if call.args else None
            if name == "check" and isinstance(cid, str):
                yield i, cid, {k.arg for k in call.keywords}


def each_lesson(check: Callable[..., Iterator[str]]) -> Callable[..., list]:
    """A rule for one lesson as a rule for all: ``check(lessons, ...)``
    returns every problem after its lesson's name."""

    @functools.wraps(check)
    def run(lessons: Mapping[str, Nb], *args: Any) -> list[str]:
        found = [(n, p) for n, nb in lessons.items() for p in check(nb, *args)]
        return [f"{name}: {problem}" for name, problem in found]

    return run


@each_lesson
def check_clean(nb: Nb) -> Iterator[str]:
    """Lessons are stored without outputs, execution counts, widget state."""
    for i, cell in _code(nb):
        if cell.get("outputs"):
            yield f"cell {i} is stored with outputs"
        if cell.get("execution_count") is not None:
            yield f"cell {i} is stored with an execution count"
    if "widgets" in nb.metadata:
        yield "stored with widget state (metadata.widgets)"


def check_toc(root: Path, lessons: Mapping[str, Nb]) -> list[str]:
    """Every lesson is in ``_toc.yml``, read by sphinx-external-toc's parser
    as the build reads it."""
    if not (root / "_toc.yml").is_file():
        return ["_toc.yml does not exist"]
    try:
        toc = parse_toc_yaml(root / "_toc.yml")
    except (MalformedError, yaml.YAMLError) as err:
        return [f"_toc.yml is not valid: {err}"]
    strip = functools.partial(re.sub, r"\.(md|ipynb|rst)$", "")
    # a glob matches docnames: the files it names have a suffix
    globbed = (p for glob in toc.globs() for p in root.glob(glob + ".*"))
    listed = {strip(d) for d in toc}
    listed |= {strip(p.relative_to(root).as_posix()) for p in globbed}
    return [
        f"{name} is not listed in _toc.yml"
        for name in lessons
        if strip(name) not in listed
    ]


def check_claims(root: Path, lessons: Mapping[str, Nb]) -> tuple[list, list]:
    """The registry and the lessons agree: an entry names its lesson (without
    ``.ipynb``) if and only if it has a verdict, one of ``claims.VERDICTS``;
    that lesson exists and is the one notebook that checks the id, once;
    every id checked is registered; a ``because`` claim names ``x`` and
    ``y``; a ``no difference`` claim's check passes ``positive_controls=``.
    Returns (errors, ids pending)."""
    try:  # an id registered twice is claims.registry's ValueError
        registry = claims.registry(root / REGISTRY)
    except (OSError, ValueError, yaml.YAMLError, KeyError, TypeError) as err:
        return [f"{REGISTRY.as_posix()}: unreadable registry ({err})"], []
    calls = defaultdict(list)  # id -> (lesson, keywords) of each call
    for name, nb in lessons.items():
        for _, cid, keywords in check_calls(nb):
            calls[cid].append((name.removesuffix(".ipynb"), keywords))
    pending = [
        cid
        for cid, entry in registry.items()
        if entry.get("notebook") is None and not calls[cid]
    ]
    return [
        f"{cid}: {problem}"
        for cid in [*registry, *sorted(set(calls) - set(registry))]
        for problem in claim_problems(root, registry.get(cid), calls[cid])
    ], pending


def claim_problems(
    root: Path, entry: Mapping | None, calls: list[tuple[str, set]]
) -> Iterator[str]:
    """``check_claims`` for one id: its registry ``entry`` (``None``: not
    registered) and its ``check`` calls, (lesson, keywords) each."""
    where = [lesson for lesson, _ in calls]
    if entry is None:
        yield f"checked in {', '.join(where)} but not registered in claims.yml"
        return
    nb, verdict = entry.get("notebook"), entry.get("verdict")
    form = entry.get("form", "claim")
    if form not in claims.FORMS:
        yield f"form {form!r} is not one of {', '.join(claims.FORMS)}"
    if form == "because" and not (entry.get("x") and entry.get("y")):
        yield "form 'because' needs x: (the conclusion) and y: (its reason)"
    if verdict is not None and verdict not in claims.VERDICTS:
        yield f"verdict {verdict!r} is not one of {', '.join(claims.VERDICTS)}"
    if (nb is None) != (verdict is None):
        yield (
            f"names {'a notebook' if nb else 'no notebook'} but "
            f"{'has' if verdict else 'no'} verdict; set both or neither"
        )
    if nb is not None:
        if nb.endswith(".ipynb"):
            yield f"notebook {nb!r} must be named without .ipynb"
        nb = nb.removesuffix(".ipynb")
        called = [k for lesson, k in calls if lesson == nb]  # keywords
        controlled = any("positive_controls" in k for k in called)
        if not (root / f"{nb}.ipynb").is_file():
            yield f"its notebook {nb}.ipynb does not exist"
        elif not called:
            yield f"{nb}.ipynb has no check({entry['id']!r}, ...) call"
        elif form == "no difference" and not controlled:
            yield (
                "claims that something makes no difference, but its check "
                "passes no positive_controls= (the same pipeline where the "
                "difference exists, which the test must see)"
            )
    if len(where) > 1:
        yield f"checked {len(where)} times ({', '.join(where)}); once only"
    named = nb or "no notebook (pending)"
    for other in sorted(set(where) - {nb}):
        yield f"checked in {other}, but its registry entry names {named}"


def load_allowed(path: Path = ALLOWED_NUMBERS) -> dict[str, str]:
    """The allow-list: ``{number as typed: why it is a definition}``."""
    data = yaml.safe_load(path.read_text("utf-8")) if path.is_file() else {}
    return {str(k): str(v) for k, v in (data or {}).items()}


_STRIP = [  # applied in order to a lesson's markdown
    r"(?ms)^\s*(`{3,}|~{3,})(?![`~{]).*?^\s*\1\s*$",  # code fences
    r"(?m)^\s*(?:`{3,}|~{3,}|:{3,}).*$",  # the fences of directives
    r"(?s)<!--.*?-->",  # comments
    r"(?m)^\s*:[\w-]+:.*$",  # directive options (:label: ex-1)
    r"\{[\w:-]+\}`[^`]*`",  # roles: glue, cite, ref, term, numref
    r"`[^`]*`",  # inline code
    r"\]\([^)]*\)",  # link targets
    r"\([^()]*\.ipynb[^()]*\)",  # links to lessons
    r"\b[CB]\d(?:\.\d+)?\b",  # claim ids
    r"\b(?:19|20)\d\d[a-z]?\b",  # years
]
_MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$", re.S)
_NUM = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?:\s*%)?")


def typed_numbers(text: str, allowed: Mapping[str, str]) -> list[str]:
    """The numbers in markdown ``text`` neither glued nor allowed. Not
    counted: integers 0-10 outside a percentage (counting words), integers
    in math (a formula's shape), years, claim ids, code, directive options
    and link targets."""
    for pattern in _STRIP:
        text = re.sub(pattern, " ", text)
    text = _MATH.sub(lambda m: " ".join(re.findall(r"\d+\.\d+", m[0])), text)
    tokens = [m[0].rstrip(",").replace(" ", "") for m in _NUM.finditer(text)]
    counting_words = {t for t in tokens if t.isdecimal() and int(t) <= 10}
    return [t for t in tokens if t not in allowed and t not in counting_words]


@each_lesson
def check_numbers(nb: Nb, allowed: Mapping[str, str]) -> Iterator[str]:
    """Every number a reader sees in a lesson's prose, captions and alt
    text is glued from the run (``{glue:text}``) or on the allow-list."""
    for i, cell in enumerate(nb.cells):
        meta = cell.metadata.get("mystnb", {})
        texts = [
            ("caption", meta.get("figure", {}).get("caption")),
            ("alt text", meta.get("image", {}).get("alt")),
            ("markdown", cell.cell_type == "markdown" and cell.source),
        ]
        for where, text in texts:
            for token in typed_numbers(text, allowed) if text else ():
                yield (
                    f"cell {i} {where} types the number {token!r}: glue it "
                    "from the run, or add it to tools/allowed_numbers.yml "
                    "with the reason it is a definition"
                )


@each_lesson
def check_cells(nb: Nb) -> Iterator[str]:
    """No formatter or linter pragma in a reader's code; a figure's cell
    folds its code (``hide-input``), a check's cell folds whole
    (``hide-cell``); a widget runs only in a reader's Jupyter
    (``WIDGET_TAGS``)."""
    checks = {i for i, *_ in check_calls(nb)}
    for i, cell in _code(nb):
        source, tags = cell.source, cell.metadata.get("tags", [])
        for n, line in enumerate(source.splitlines(), 1):
            if m := PRAGMA.search(line):
                yield (
                    f"cell {i} line {n} has the pragma {m[0]!r}: format the "
                    "code so it needs none"
                )
        figure = "figure" in cell.metadata.get("mystnb", {})
        if figure and "hide-input" not in tags:
            yield (
                f"cell {i} draws a figure: tag it hide-input (the figure "
                "shows, its code folds)"
            )
        if i in checks and "hide-cell" not in tags:
            yield f"cell {i} checks a claim: tag it hide-cell"
        missing = [t for t in WIDGET_TAGS if t not in tags]
        if re.search(r"\binteract(?:ive)?\(", source) and missing:
            yield (
                f"cell {i} shows a widget: tag it {', '.join(missing)} "
                "(headless runs can hang on it; the static figure beside it "
                "carries the message)"
            )


def _only_imports(source: str) -> bool:
    """Nothing but imports and ``SEED = livingdict.setup()``."""
    try:
        body = ast.parse(source).body
    except SyntaxError:  # IPython magics: something else
        return False
    for node in body:
        func = getattr(getattr(node, "value", None), "func", None)
        name = getattr(func, "attr", None) or getattr(func, "id", None)
        setup = isinstance(node, ast.Assign | ast.Expr) and name == "setup"
        if not setup and not isinstance(node, ast.Import | ast.ImportFrom):
            return False
    return True


@each_lesson
def check_mechanism(nb: Nb) -> Iterator[str]:
    """Besides its Colab cell and its imports, a lesson shows a code cell
    (no ``hide-*`` or ``remove-*`` tag): the mechanism is on the page."""
    hidden = ("hide-", "remove-")
    shown = [
        c.source
        for _, c in list(_code(nb))[1:]
        if not any(t.startswith(hidden) for t in c.metadata.get("tags", []))
    ]
    if all(_only_imports(s) for s in shown):
        yield (
            "no visible code cell besides the imports: show the lesson's "
            "mechanism (written out, or page.show)"
        )


@each_lesson
def check_colab(nb: Nb, expected: str) -> Iterator[str]:
    """The first code cell is the Colab cell for ``_config.yml``'s URL,
    tagged ``remove-cell``."""
    first = next((cell for _, cell in _code(nb)), None)
    if first is None:
        yield "has no code cell"
        return
    if first.source != expected:
        diff = difflib.ndiff(expected.splitlines(), first.source.splitlines())
        changed = [d[0] + d[2:] for d in diff if d[0] in "+-"]
        yield (
            "the first code cell is not the Colab cell (python -m "
            "tools.set_repo_url rewrites it): " + " | ".join(changed)
        )
    if "remove-cell" not in first.metadata.get("tags", []):
        yield "tag the Colab cell (first code cell) remove-cell"


# ---------------------------------------------------- the catalogs
def roles(text: str) -> Iterator[tuple[str, str, str]]:
    """(role, shown text, target) of every role; a term's target in lower
    case, as the glossary matches it."""
    for m in ROLE.finditer(text):
        explicit = TARGET.match(m["body"])
        shown, target = explicit.groups() if explicit else (m["body"],) * 2
        target = target.strip().lower() if m["role"] == "term" else target
        yield m["role"], shown, target.strip()


def markup(text: str) -> Counter:
    """What a translation must keep: role targets, link targets, math."""
    found = Counter((role, target) for role, _, target in roles(text))
    found.update(("link", m["url"]) for m in LINK.finditer(text))
    found.update(("math", m["m"].strip()) for m in MATH.finditer(text))
    return found


def term_names(path: Path = ROOT / "book" / "terms.yml") -> dict[str, str]:
    """``{English name (lower case): Japanese name}`` from the term list."""
    terms = yaml.safe_load(path.read_text("utf-8")) if path.is_file() else []
    return {t["en"].lower(): t["ja"] for t in terms or []}


def terminology(msgid: str, msgstr: str, names: dict[str, str]) -> list[str]:
    """The terms linked in ``msgid`` that ``msgstr`` does not show under
    their Japanese name."""
    shown = [(t, text) for role, text, t in roles(msgstr) if role == "term"]
    return [
        f"{target} → {names[target]}"
        for role, _, target in roles(msgid)
        if role == "term"
        and target in names
        and not any(t == target and names[t] in text for t, text in shown)
    ]


def check_catalogs(locale_dir: Path) -> list[str]:
    """Every Japanese catalog (``locale/ja/LC_MESSAGES/**.po``, read by
    Babel): no entry untranslated, fuzzy (the build ignores it: the page
    shows English) or obsolete; a translation keeps its English's roles,
    link targets and ``$math$`` (Sphinx warns, or a glued number goes
    missing) and a ``{name}`` of ``claims.po``; a linked term shows its
    Japanese name from ``book/terms.yml``; the essay's English names only in
    a 「quotation」."""
    base, names = locale_dir / "ja" / "LC_MESSAGES", term_names()
    errors: list[str] = []
    for path in sorted(base.rglob("*.po")):
        rel = path.relative_to(locale_dir.parent)
        claims_po = path == base / "claims.po"
        with path.open("rb") as f:
            catalog = read_po(f, locale="ja", abort_invalid=True)
        for m in (m for m in catalog if m.id):
            where = f"{rel}: {str(m.id)[:70]!r}"
            if m.fuzzy or not m.string:
                what = "fuzzy" if m.fuzzy else "untranslated"
                errors.append(f"{what}: {where}")
                continue
            en, ja = markup(m.id), markup(m.string)
            if en != ja:
                errors.append(
                    f"inconsistent markup: {where}: missing {dict(en - ja)}, "
                    f"extra {dict(ja - en)}"
                )
            errors += [
                f"terminology: {where}: name the term {t}"
                for t in terminology(m.id, m.string, names)
            ]
            bare = re.sub(r"「[^」]*」", "", m.string).lower()  # not quoted
            errors += [
                f"essay's name: {where}: outside 「」 say {n} → {term}"
                for n, term in ESSAY_NAMES.items()
                if n.lower() in bare
            ]
            placeholders = [set(BRACE.findall(s)) for s in (m.id, m.string)]
            if claims_po and placeholders[0] != placeholders[1]:
                errors.append(f"placeholders differ: {where}")
        for m in catalog.obsolete.values():
            errors.append(f"obsolete: {rel}: {str(m.id)[:70]!r}")
    return errors


def load_lessons(root: Path) -> tuple[dict[str, Nb], list[str]]:
    """``{name: notebook}`` of the readable lessons, and an error for each
    one that is not."""
    import nbformat

    lessons, errors = {}, []
    for path in claims.notebooks(root):
        name = path.relative_to(root).as_posix()
        try:
            lessons[name] = nbformat.read(path, as_version=4)
        except (OSError, ValueError) as err:
            errors.append(f"{name}: not a readable notebook ({err})")
    return lessons, errors


def run_all(root: Path) -> tuple[list[str], list[str]]:
    """Every rule over the lessons of ``root``: (errors, ids pending)."""
    root = Path(root)
    lessons, errors = load_lessons(root)
    claim_errors, pending = check_claims(root, lessons)
    errors += check_clean(lessons) + check_toc(root, lessons) + claim_errors
    errors += check_numbers(lessons, load_allowed())
    errors += check_cells(lessons) + check_mechanism(lessons)
    try:
        config = yaml.safe_load((root / "_config.yml").read_text("utf-8"))
        url = str(config["repository"]["url"]).rstrip("/")
    except (OSError, yaml.YAMLError, KeyError, TypeError):
        errors += ["_config.yml: no repository.url (the Colab cells name it)"]
    else:
        errors += check_colab(lessons, colab_cell(url))
    return errors + check_catalogs(root / "locale"), pending


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.static_checks")
    ap.add_argument("--root", type=Path, default=ROOT)
    root = ap.parse_args(argv).root
    errors, pending = run_all(root)
    for e in errors:
        print(f"✗ {e}")
    if pending:
        print(f"pending (no lesson yet): {', '.join(pending)}")
    catalogs = len(list(root.glob("locale/ja/LC_MESSAGES/**/*.po")))
    print(
        f"static checks: {'FAILED' if errors else 'passed'} ({len(errors)} "
        f"problem(s) in {len(claims.notebooks(root))} notebooks and "
        f"{catalogs} catalogs; {len(pending)} claims pending)"
    )
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
