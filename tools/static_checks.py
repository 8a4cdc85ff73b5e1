"""Static checks of the book (fast: nothing is executed). Part of ``make static``.

Usage: ``python -m tools.static_checks [--root DIR]`` (default: this checkout).

The lessons are ``livingdict.claims.notebooks(root)``; the registry is
``livingdict.claims.registry`` of ``src/livingdict/claims.yml``; the verdicts are
``livingdict.claims.VERDICTS`` (one source of truth for all three).

1. Lessons are stored clean: no outputs, no execution counts, no saved widget state.
2. Every lesson is listed in ``_toc.yml`` and every ``_toc.yml`` entry exists (as
   ``.md``, ``.ipynb`` or ``.rst``).
3. The claims registry and the lessons agree — checked here and nowhere else: an id
   whose entry names a notebook is checked by exactly that notebook (a literal
   ``check("<id>"`` call in a code cell) and by no other; no id is registered twice
   or checked twice; every checked id is registered, and its entry names the
   notebook that checks it, which exists; an entry names a notebook if and only if
   it has a verdict, and the verdict is one of ``VERDICTS``. Ids with neither are
   reported as pending. Its ``form`` is ``claim`` (the default), ``because`` (with
   ``x:`` and ``y:`` naming the two parts) or ``no difference``, whose check call
   passes ``positive_controls=``.
4. Every check names its controls: each ``check("<id>", ...)`` call passes
   ``controls=`` (``claims.check`` itself refuses an empty mapping at run time).
5. No typed numbers: a number in a lesson's markdown, figure caption or alt text
   is glued from the run (``{glue:text}``), or is on the allow-list
   ``tools/allowed_numbers.yml`` (a definition, with its reason). Not counted:
   integers 0-10 outside a percentage (counting words: "two layers", "3 × 3"),
   integers inside math (the shape of a formula), years, claim ids, code,
   directive options and link targets.
6. No formatter or linter pragmas in lesson code (``# fmt: off``, ``# fmt: on``,
   ``# fmt: skip``, ``# noqa``): a reader's code fits the page as ruff formats it.
7. Folded as the book's arc wants: a code cell that draws a figure (its metadata
   has ``mystnb.figure``) is tagged ``hide-input`` (the figure shows, its code
   folds); a cell that calls ``check("<id>", ...)`` is tagged ``hide-cell``.
8. The mechanism is on the page: besides the Colab cell and the imports (cells of
   nothing but imports and ``SEED = livingdict.setup()``), at least one code cell
   is visible (no ``hide-*`` or ``remove-*`` tag).
10. A widget (a cell that calls ``interact``) only runs in a reader's Jupyter:
    it is tagged ``skip-execution``, ``nbval-skip`` and ``remove-output``
    (headless kernels can hang on it: jupyter/nbclient#312); a static figure
    beside it carries its message.
9. The first code cell is the Colab cell (``tools.set_repo_url.colab_cell`` with
   ``_config.yml``'s repository URL), tagged ``remove-cell``.

Exits 1 and lists every violation; pending ids alone do not fail.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import functools
import json
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from livingdict import claims
from tools.set_repo_url import colab_cell

ROOT = Path(__file__).resolve().parents[1]
REGISTRY = Path("src") / "livingdict" / "claims.yml"

CHECK_CALL = re.compile(r"""\bcheck\(\s*(?P<q>["'])(?P<id>[^"'\n]+)(?P=q)""")
FORMS = claims.FORMS
PRAGMA = re.compile(r"#\s*(?:fmt:\s*(?:off|on|skip)|(?:ruff:\s*)?noqa)\b")
TOC_SUFFIXES = (".md", ".ipynb", ".rst")


@dataclass
class Report:
    errors: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


@dataclass(frozen=True)
class Lesson:
    """A lesson notebook as stored: its name relative to the root, its JSON."""

    name: str
    nb: Mapping[str, Any]

    @property
    def cells(self) -> list[Mapping[str, Any]]:
        return self.nb.get("cells", [])

    def code(self) -> Iterator[tuple[int, Mapping[str, Any]]]:
        """(index, cell) of every code cell."""
        for i, cell in enumerate(self.cells):
            if cell.get("cell_type") == "code":
                yield i, cell


def _rel(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def _source(cell: Mapping[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _tags(cell: Mapping[str, Any]) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def load_lessons(root: Path) -> tuple[list[Lesson], list[str]]:
    """The readable lessons, and an error for each one that is not."""
    lessons, errors = [], []
    for path in claims.notebooks(root):
        try:
            nb = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            errors.append(
                f"{_rel(path, root)}: not a readable notebook ({err})"
            )
            continue
        lessons.append(Lesson(_rel(path, root), nb))
    return lessons, errors


def each_lesson(
    check: Callable[..., Iterator[str]],
) -> Callable[..., list[str]]:
    """A check of one lesson, which yields its problems, as a check of all
    lessons: ``check(lessons, ...)`` returns every problem, each after the
    lesson's name."""

    @functools.wraps(check)
    def run(lessons: Sequence[Lesson], *args: Any) -> list[str]:
        return [
            f"{les.name}: {p}" for les in lessons for p in check(les, *args)
        ]

    return run


@each_lesson
def check_clean(lesson: Lesson) -> Iterator[str]:
    """Notebooks carry no outputs, execution counts or widget state."""
    for i, cell in lesson.code():
        if cell.get("outputs"):
            yield f"cell {i} is stored with outputs"
        if cell.get("execution_count") is not None:
            yield f"cell {i} is stored with an execution count"
    if "widgets" in lesson.nb.get("metadata", {}):
        yield "stored with widget state (metadata.widgets)"


def _strip(entry: str) -> str:
    for suffix in TOC_SUFFIXES:
        if entry.endswith(suffix):
            return entry[: -len(suffix)]
    return entry


def check_toc(root: Path, lessons: Sequence[Lesson]) -> list[str]:
    """Every lesson is in ``_toc.yml``; every entry of ``_toc.yml`` exists
    (read by sphinx-external-toc's own parser, as the build reads it)."""
    from sphinx_external_toc.parsing import MalformedError, parse_toc_yaml

    toc_path = root / "_toc.yml"
    if not toc_path.is_file():
        return ["_toc.yml does not exist"]
    try:
        toc = parse_toc_yaml(toc_path)
    except (MalformedError, yaml.YAMLError) as err:
        return [f"_toc.yml is not valid: {err}"]
    errors: list[str] = []
    listed = {_strip(d) for d in toc}
    for glob in toc.globs():
        listed.update(_strip(_rel(p, root)) for p in root.glob(glob + "*"))
    for doc in toc:
        kind = "root" if doc == toc.root.docname else "file"
        if not any((root / (_strip(doc) + s)).is_file() for s in TOC_SUFFIXES):
            errors.append(
                f"_toc.yml: {kind} {doc!r} does not exist (.md, .ipynb or .rst)"
            )
    for lesson in lessons:
        if _strip(lesson.name) not in listed:
            errors.append(f"{lesson.name} is not listed in _toc.yml")
    return errors


def checked_ids(nb: Mapping[str, Any]) -> list[str]:
    """The ids of every ``check("<id>"`` call in the notebook's code cells, in order."""
    ids = []
    for _, cell in Lesson("", nb).code():
        ids += [m["id"] for m in CHECK_CALL.finditer(_source(cell))]
    return ids


def load_registry(root: Path) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The root's registry (``claims.entries``), and its errors: an
    unreadable file, an id registered twice."""
    path = root / REGISTRY
    try:
        entries = claims.entries(path)
        registry = {e["id"]: e for e in entries}
    except (OSError, yaml.YAMLError, KeyError, TypeError) as err:
        return {}, [f"{REGISTRY.as_posix()}: unreadable registry ({err})"]
    ids = Counter(e["id"] for e in entries)
    twice = [
        f"claims.yml: id {i} is registered twice"
        for i, n in ids.items()
        if n > 1
    ]
    return registry, twice


def check_claims(
    root: Path, lessons: Sequence[Lesson]
) -> tuple[list[str], list[str]]:
    """Registry and lessons agree (see the module docstring). Returns (errors, pending)."""
    registry, errors = load_registry(root)
    if not registry and errors:
        return errors, []
    checks: dict[str, list[str]] = {}  # id -> notebooks (one item per call)
    positive: set[str] = set()  # ids whose call passes positive_controls=
    for lesson in lessons:
        for cid in checked_ids(lesson.nb):
            checks.setdefault(cid, []).append(_strip(lesson.name))
        for _, cell in lesson.code():
            source = _source(cell)
            for m in CHECK_CALL.finditer(source):
                if re.search(
                    r"\bpositive_controls\s*=", _call(source, m.start())
                ):
                    positive.add(m["id"])

    pending = []
    for cid, e in registry.items():
        nb, verdict = e.get("notebook"), e.get("verdict")
        form = e.get("form", "claim")
        if form not in FORMS:
            errors.append(
                f"{cid}: form {form!r} is not one of {', '.join(FORMS)}"
            )
        if form == "because" and not (e.get("x") and e.get("y")):
            errors.append(
                f"{cid}: form 'because' needs x: (the conclusion) and y: (the "
                "reason it gives)"
            )
        if form == "no difference" and cid in checks and cid not in positive:
            errors.append(
                f"{cid}: claims that something makes no difference, but its "
                "check passes no positive_controls= (settings where the "
                "difference exists and the same test sees it)"
            )
        if verdict is not None and verdict not in claims.VERDICTS:
            errors.append(
                f"{cid}: verdict {verdict!r} is not one of {', '.join(claims.VERDICTS)}"
            )
        if (nb is None) != (verdict is None):
            errors.append(
                f"{cid}: names {'a notebook' if nb else 'no notebook'} but "
                f"{'has' if verdict else 'no'} verdict; set both or neither"
            )
        if nb is None:
            if cid not in checks:
                pending.append(cid)
            continue
        if str(nb).endswith(".ipynb"):
            errors.append(
                f"{cid}: notebook {nb!r} must be named without .ipynb"
            )
            nb = nb[: -len(".ipynb")]
        if not (root / f"{nb}.ipynb").is_file():
            errors.append(f"{cid}: its notebook {nb}.ipynb does not exist")
        elif nb not in checks.get(cid, []):
            errors.append(f"{cid}: {nb}.ipynb has no check({cid!r}, ...) call")

    for cid, where in sorted(checks.items()):
        if cid not in registry:
            errors.append(
                f"{cid}: checked in {', '.join(where)} but not registered in claims.yml"
            )
            continue
        if len(where) > 1:
            errors.append(
                f"{cid}: checked {len(where)} times ({', '.join(where)}); once only"
            )
        nb = registry[cid].get("notebook")
        for other in sorted(set(where) - {_strip(str(nb)) if nb else None}):
            target = nb if nb else "no notebook (pending)"
            errors.append(
                f"{cid}: checked in {other}, but its registry entry names {target}"
            )
    return errors, pending


ALLOWED_NUMBERS = ROOT / "tools" / "allowed_numbers.yml"
_STRIP = [  # (pattern, what replaces it) applied in order to markdown text
    (r"(?s)<!--.*?-->", " "),  # comments
    (r"(?m)^\s*:[\w-]+:.*$", " "),  # directive options (:label: ex-1)
    (r"\{[\w:-]+\}`[^`]*`", " "),  # roles: glue, cite, ref, term, numref
    (r"`[^`]*`", " "),  # inline code
    (r"\]\([^)]*\)", "]"),  # link targets
    (r"\([^()]*\.ipynb[^()]*\)", " "),
    (r"\b[CB]\d(?:\.\d+)?\b", " "),  # claim ids
    (r"\b(?:19|20)\d\d[a-z]?\b", " "),  # years
]
_MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$", re.S)
_NUM = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?:\s*%)?")


def load_allowed(path: Path = ALLOWED_NUMBERS) -> dict[str, str]:
    """The allow-list: ``{number as typed: why it is a definition}``."""
    if not path.is_file():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return {str(k): str(v) for k, v in data.items()}


_FENCE = re.compile(r"\s*(`{3,}|~{3,}|:{3,})(.*)$")


def drop_code(text: str) -> str:
    """``text`` without fence lines and the contents of code fences; the
    contents of directives (```` ```{admonition} ````, ``:::{note}``) stay,
    nested fences included."""
    out, stack = [], []  # stack: (marker, is code) of the open fences
    for line in text.splitlines():
        m = _FENCE.match(line)
        if stack and stack[-1][1]:  # inside code: only its close counts
            marker = stack[-1][0]
            if m and m[1][0] == marker[0] and len(m[1]) >= len(marker):
                if not m[2].strip():
                    stack.pop()
            out.append(" ")
            continue
        if m and not m[2].strip() and stack:
            marker = stack[-1][0]
            if m[1][0] == marker[0] and len(m[1]) >= len(marker):
                stack.pop()
                out.append(" ")
                continue
        if m and m[2].strip() or m and not stack:
            info = m[2].strip()
            stack.append((m[1], not info.startswith("{")))
            out.append(" ")
            continue
        out.append(line)
    return "\n".join(out)


def typed_numbers(text: str, allowed: Mapping[str, str]) -> list[str]:
    """The numbers in markdown ``text`` that are neither glued nor allowed."""
    text = drop_code(text)
    for pattern, repl in _STRIP:
        text = re.sub(pattern, repl, text)
    # in math, only numbers with a decimal point count (integers shape formulas)
    text = _MATH.sub(
        lambda m: " ".join(re.findall(r"\d+\.\d+", m.group())), text
    )
    found = []
    for m in _NUM.finditer(text):
        token = m.group().rstrip(",").replace(" ", "")
        bare = token.rstrip("%")
        small = re.fullmatch(r"\d+", bare) and int(bare) <= 10
        if (small and not token.endswith("%")) or token in allowed:
            continue
        if bare in allowed and not token.endswith("%"):
            continue
        found.append(token)
    return found


def _figure_texts(cell: Mapping[str, Any]) -> list[tuple[str, str]]:
    meta = cell.get("metadata", {}).get("mystnb", {})
    out = []
    caption = meta.get("figure", {}).get("caption")
    alt = meta.get("image", {}).get("alt")
    if caption:
        out.append(("caption", caption))
    if alt:
        out.append(("alt text", alt))
    return out


@each_lesson
def check_numbers(
    lesson: Lesson, allowed: Mapping[str, str] | None = None
) -> Iterator[str]:
    """Every number a reader sees in a lesson's prose is glued or allowed."""
    allowed = load_allowed() if allowed is None else allowed
    for i, cell in enumerate(lesson.cells):
        texts = _figure_texts(cell)
        if cell.get("cell_type") == "markdown":
            texts.append(("markdown", _source(cell)))
        for where, text in texts:
            for token in typed_numbers(text, allowed):
                yield (
                    f"cell {i} {where} types the number {token!r}: glue it "
                    "from the run, or add it to tools/allowed_numbers.yml "
                    "with the reason it is a definition"
                )


def _call(source: str, start: int) -> str:
    """The call that opens at ``source[start:]``, up to its closing
    parenthesis."""
    depth = 0
    for j, ch in enumerate(source[start:]):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == ")" and depth == 0:
            return source[start : start + j]
    return source[start:]


@each_lesson
def check_controls(lesson: Lesson) -> Iterator[str]:
    """Every ``check(...)`` call of a lesson passes ``controls=``."""
    for _, cell in lesson.code():
        source = _source(cell)
        for m in CHECK_CALL.finditer(source):
            if not re.search(r"\bcontrols\s*=", _call(source, m.start())):
                yield (
                    f"check({m['id']!r}, ...) names no controls "
                    "(controls={...}: the same test applied to something "
                    "that must fail it)"
                )


@each_lesson
def check_pragmas(lesson: Lesson) -> Iterator[str]:
    """No ``# fmt: off/on/skip`` or ``# noqa`` in lesson code."""
    for i, cell in lesson.code():
        for n, line in enumerate(_source(cell).splitlines(), 1):
            if m := PRAGMA.search(line):
                yield (
                    f"cell {i} line {n} has the pragma {m.group()!r}: "
                    "format the code so it needs none"
                )


@each_lesson
def check_folding(lesson: Lesson) -> Iterator[str]:
    """Figure cells fold their code (``hide-input``); check cells fold whole
    (``hide-cell``)."""
    for i, cell in lesson.code():
        tags = _tags(cell)
        if "figure" in cell.get("metadata", {}).get("mystnb", {}):
            if "hide-input" not in tags:
                yield (
                    f"cell {i} draws a figure: tag it hide-input (the "
                    "figure shows, its code folds)"
                )
        if CHECK_CALL.search(_source(cell)) and "hide-cell" not in tags:
            yield f"cell {i} checks a claim: tag it hide-cell"


WIDGET_TAGS = ("skip-execution", "nbval-skip", "remove-output")


@each_lesson
def check_widgets(lesson: Lesson) -> Iterator[str]:
    """Widget cells run only where a reader can move them."""
    for i, cell in lesson.code():
        if re.search(r"\binteract(?:ive)?\(", _source(cell)):
            missing = [t for t in WIDGET_TAGS if t not in _tags(cell)]
            if missing:
                yield (
                    f"cell {i} shows a widget: tag it {', '.join(missing)} "
                    "(headless runs can hang on it; the static figure beside "
                    "it carries the message)"
                )


def _visible(cell: Mapping[str, Any]) -> bool:
    return not any(t.startswith(("hide-", "remove-")) for t in _tags(cell))


def _only_imports(source: str) -> bool:
    """Nothing but imports and ``SEED = livingdict.setup()``: the imports
    cell."""
    try:
        body = ast.parse(source).body
    except SyntaxError:  # IPython magics: something else
        return False

    def setup(node: ast.stmt) -> bool:
        value = getattr(node, "value", None)
        func = getattr(value, "func", None)
        name = getattr(func, "attr", None) or getattr(func, "id", None)
        return isinstance(node, (ast.Assign, ast.Expr)) and name == "setup"

    return all(
        isinstance(n, (ast.Import, ast.ImportFrom)) or setup(n) for n in body
    )


@each_lesson
def check_mechanism(lesson: Lesson) -> Iterator[str]:
    """Every lesson shows code besides its Colab cell and its imports."""
    code = [cell for _, cell in lesson.code()][1:]  # after the Colab cell
    if not any(_visible(c) and not _only_imports(_source(c)) for c in code):
        yield (
            "no visible code cell besides the imports: show the lesson's "
            "mechanism (written out, or page.show)"
        )


def repo_url(root: Path) -> str | None:
    """``repository.url`` of the root's ``_config.yml`` (``None`` if unset)."""
    try:
        config = yaml.safe_load((root / "_config.yml").read_text("utf-8"))
        return str(config["repository"]["url"]).rstrip("/")
    except (OSError, yaml.YAMLError, KeyError, TypeError):
        return None


@each_lesson
def check_colab(lesson: Lesson, expected: str) -> Iterator[str]:
    """The first code cell is the Colab cell ``expected``, tagged
    ``remove-cell``."""
    first = next((cell for _, cell in lesson.code()), None)
    if first is None:
        yield "has no code cell"
        return
    if (source := _source(first)) != expected:
        diff = [
            line
            for line in difflib.unified_diff(
                expected.splitlines(), source.splitlines(), n=0
            )
            if line[:1] in "+-" and line[:3] not in ("+++", "---")
        ]
        yield (
            "the first code cell is not the Colab cell (python -m "
            "tools.set_repo_url rewrites it): " + " | ".join(diff)
        )
    if "remove-cell" not in _tags(first):
        yield "tag the Colab cell (first code cell) remove-cell"


def run_all(root: Path) -> Report:
    root = Path(root)
    lessons, unreadable = load_lessons(root)
    errors, pending = check_claims(root, lessons)
    report = Report(unreadable, pending)
    report.errors += check_clean(lessons)
    report.errors += check_toc(root, lessons)
    report.errors += errors
    report.errors += check_controls(lessons)
    report.errors += check_numbers(lessons)
    report.errors += check_pragmas(lessons)
    report.errors += check_folding(lessons)
    report.errors += check_widgets(lessons)
    report.errors += check_mechanism(lessons)
    if (url := repo_url(root)) is None:
        report.errors.append(
            "_config.yml: no repository.url (the Colab cells name it)"
        )
    else:
        report.errors += check_colab(lessons, colab_cell(url))
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m tools.static_checks",
        description=__doc__.split("\n")[0],
    )
    ap.add_argument("--root", type=Path, default=ROOT)
    args = ap.parse_args(argv)
    report = run_all(args.root)
    n = len(claims.notebooks(args.root))
    for e in report.errors:
        print(f"✗ {e}")
    if report.pending:
        print(f"pending (no lesson yet): {', '.join(report.pending)}")
    if report.errors:
        print(
            f"static checks: FAILED ({len(report.errors)} problem(s) in {n} notebooks)"
        )
        return 1
    print(
        f"static checks: passed ({n} notebooks; {len(report.pending)} claims pending)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
