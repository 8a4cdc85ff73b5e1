"""``make static``: the book's lessons checked as stored, nothing executed.

``python -m tools.static_checks [--root DIR]`` lists every problem and exits
1 on any; claims with neither lesson nor verdict are listed as pending. Each
``check_*`` below is one rule, its docstring the rule. The lessons are
``claims.notebooks(root)``, the registry ``src/livingdict/claims.yml``.
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
ALLOWED_NUMBERS = ROOT / "tools" / "allowed_numbers.yml"
CHECK_CALL = re.compile(r"""\bcheck\(\s*(?P<q>["'])(?P<id>[^"'\n]+)(?P=q)""")
PRAGMA = re.compile(r"#\s*(?:fmt:\s*(?:off|on|skip)|(?:ruff:\s*)?noqa)\b")
#: headless kernels can hang on a widget (jupyter/nbclient#312)
WIDGET_TAGS = ("skip-execution", "nbval-skip", "remove-output")
Nb = Mapping[str, Any]
Cell = Mapping[str, Any]


@dataclass
class Report:
    errors: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


def _source(cell: Cell) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _tags(cell: Cell) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def _code(nb: Nb) -> Iterator[tuple[int, Cell]]:
    """(index, cell) of every code cell."""
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") == "code":
            yield i, cell


def _call(source: str, start: int) -> str:
    """The call that opens at ``source[start:]``, to its closing bracket."""
    depth = 0
    for j, ch in enumerate(source[start:]):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == ")" and depth == 0:
            return source[start : start + j]
    return source[start:]


def _check_calls(nb: Nb) -> Iterator[tuple[int, str, str]]:
    """(cell index, claim id, the call's text) of every ``check("<id>"``."""
    for i, cell in _code(nb):
        source = _source(cell)
        for m in CHECK_CALL.finditer(source):
            yield i, m["id"], _call(source, m.start())


def checked_ids(nb: Nb) -> list[str]:
    """The ids of every ``check("<id>"`` call in a notebook's code."""
    return [cid for _, cid, _ in _check_calls(nb)]


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
    if "widgets" in nb.get("metadata", {}):
        yield "stored with widget state (metadata.widgets)"


def check_toc(root: Path, lessons: Mapping[str, Nb]) -> list[str]:
    """Every lesson is in ``_toc.yml`` and every entry exists, read by
    sphinx-external-toc's parser as the build reads it."""
    from sphinx_external_toc.parsing import MalformedError, parse_toc_yaml

    if not (root / "_toc.yml").is_file():
        return ["_toc.yml does not exist"]
    try:
        toc = parse_toc_yaml(root / "_toc.yml")
    except (MalformedError, yaml.YAMLError) as err:
        return [f"_toc.yml is not valid: {err}"]
    suffixes = (".md", ".ipynb", ".rst")
    strip = functools.partial(re.sub, r"\.(md|ipynb|rst)$", "")
    listed = {strip(d) for d in toc}
    for glob in toc.globs():
        files = root.glob(glob + "*")
        listed |= {strip(p.relative_to(root).as_posix()) for p in files}
    errors = [
        f"_toc.yml: {'root' if d == toc.root.docname else 'file'} {d!r} does "
        "not exist (.md, .ipynb or .rst)"
        for d in toc
        if not any(Path(root, strip(d) + s).is_file() for s in suffixes)
    ]
    return errors + [
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
    try:
        entries = claims.entries(root / REGISTRY)
        registry = {e["id"]: e for e in entries}
    except (OSError, yaml.YAMLError, KeyError, TypeError) as err:
        return [f"{REGISTRY.as_posix()}: unreadable registry ({err})"], []
    errors = [
        f"claims.yml: id {cid} is registered twice"
        for cid, n in Counter(e["id"] for e in entries).items()
        if n > 1
    ]
    checks: dict[str, list[str]] = {}  # id -> notebooks, one per call
    positive = set()
    for name, nb in lessons.items():
        for _, cid, call in _check_calls(nb):
            checks.setdefault(cid, []).append(name.removesuffix(".ipynb"))
            if re.search(r"\bpositive_controls\s*=", call):
                positive.add(cid)
    pending, named = [], {}  # named: id -> its notebook, without .ipynb
    for cid, e in registry.items():
        nb, verdict = e.get("notebook"), e.get("verdict")
        form = e.get("form", "claim")
        if form not in claims.FORMS:
            forms = ", ".join(claims.FORMS)
            errors.append(f"{cid}: form {form!r} is not one of {forms}")
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
                f"{cid}: verdict {verdict!r} is not one of "
                + ", ".join(claims.VERDICTS)
            )
        if (nb is None) != (verdict is None):
            errors.append(
                f"{cid}: names {'a notebook' if nb else 'no notebook'} but "
                f"{'has' if verdict else 'no'} verdict; set both or neither"
            )
        if nb is None:
            pending += [] if cid in checks else [cid]
            continue
        if nb.endswith(".ipynb"):
            errors.append(
                f"{cid}: notebook {nb!r} must be named without .ipynb"
            )
        nb = named[cid] = nb.removesuffix(".ipynb")
        if not (root / f"{nb}.ipynb").is_file():
            errors.append(f"{cid}: its notebook {nb}.ipynb does not exist")
        elif nb not in checks.get(cid, []):
            errors.append(f"{cid}: {nb}.ipynb has no check({cid!r}, ...) call")
    for cid, where in sorted(checks.items()):
        if cid not in registry:
            errors.append(
                f"{cid}: checked in {', '.join(where)} but not registered in "
                "claims.yml"
            )
            continue
        if len(where) > 1:
            errors.append(
                f"{cid}: checked {len(where)} times ({', '.join(where)}); "
                "once only"
            )
        nb = named.get(cid)
        for other in sorted(set(where) - {nb}):
            errors.append(
                f"{cid}: checked in {other}, but its registry entry names "
                + (nb or "no notebook (pending)")
            )
    return errors, pending


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
    found = []
    for m in _NUM.finditer(text):
        token = m[0].rstrip(",").replace(" ", "")
        bare, percent = token.rstrip("%"), token.endswith("%")
        small = bare.isdecimal() and int(bare) <= 10
        if token not in allowed and (
            percent or not small and bare not in allowed
        ):
            found.append(token)
    return found


@each_lesson
def check_numbers(nb: Nb, allowed: Mapping[str, str]) -> Iterator[str]:
    """Every number a reader sees in a lesson's prose, captions and alt
    text is glued from the run (``{glue:text}``) or on the allow-list."""
    for i, cell in enumerate(nb.get("cells", [])):
        meta = cell.get("metadata", {}).get("mystnb", {})
        texts = [
            ("caption", meta.get("figure", {}).get("caption")),
            ("alt text", meta.get("image", {}).get("alt")),
            (
                "markdown",
                cell.get("cell_type") == "markdown" and _source(cell),
            ),
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
    """Every check names its controls (``controls=``); no formatter or
    linter pragma in a reader's code; a figure's cell folds its code
    (``hide-input``), a check's cell folds whole (``hide-cell``); a widget
    runs only in a reader's Jupyter (``WIDGET_TAGS``)."""
    for _, cid, call in _check_calls(nb):
        if not re.search(r"\bcontrols\s*=", call):
            yield (
                f"check({cid!r}, ...) names no controls (controls={{...}}: "
                "the same test applied to something that must fail it)"
            )
    for i, cell in _code(nb):
        source, tags = _source(cell), _tags(cell)
        for n, line in enumerate(source.splitlines(), 1):
            if m := PRAGMA.search(line):
                yield (
                    f"cell {i} line {n} has the pragma {m[0]!r}: format the "
                    "code so it needs none"
                )
        figure = "figure" in cell.get("metadata", {}).get("mystnb", {})
        if figure and "hide-input" not in tags:
            yield (
                f"cell {i} draws a figure: tag it hide-input (the figure "
                "shows, its code folds)"
            )
        if CHECK_CALL.search(source) and "hide-cell" not in tags:
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

    def setup(node: ast.stmt) -> bool:
        func = getattr(getattr(node, "value", None), "func", None)
        name = getattr(func, "attr", None) or getattr(func, "id", None)
        return isinstance(node, ast.Assign | ast.Expr) and name == "setup"

    imports = ast.Import | ast.ImportFrom
    return all(isinstance(n, imports) or setup(n) for n in body)


@each_lesson
def check_mechanism(nb: Nb) -> Iterator[str]:
    """Besides its Colab cell and its imports, a lesson shows a code cell
    (no ``hide-*`` or ``remove-*`` tag): the mechanism is on the page."""
    shown = [
        _source(c)
        for _, c in list(_code(nb))[1:]
        if not any(t.startswith(("hide-", "remove-")) for t in _tags(c))
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
    if (source := _source(first)) != expected:
        diff = difflib.unified_diff(
            expected.splitlines(), source.splitlines(), n=0
        )
        changed = [
            d for d in diff if d[:1] in "+-" and d[:3] not in ("+++", "---")
        ]
        yield (
            "the first code cell is not the Colab cell (python -m "
            "tools.set_repo_url rewrites it): " + " | ".join(changed)
        )
    if "remove-cell" not in _tags(first):
        yield "tag the Colab cell (first code cell) remove-cell"


def load_lessons(root: Path) -> tuple[dict[str, Nb], list[str]]:
    """``{name: notebook}`` of the readable lessons, and an error for each
    one that is not."""
    lessons, errors = {}, []
    for path in claims.notebooks(root):
        name = path.relative_to(root).as_posix()
        try:
            lessons[name] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            errors.append(f"{name}: not a readable notebook ({err})")
    return lessons, errors


def run_all(root: Path) -> Report:
    """Every rule over the lessons of ``root``."""
    root = Path(root)
    lessons, unreadable = load_lessons(root)
    report = Report(unreadable)
    errors, report.pending = check_claims(root, lessons)
    report.errors += check_clean(lessons) + check_toc(root, lessons) + errors
    report.errors += check_numbers(lessons, load_allowed())
    report.errors += check_cells(lessons) + check_mechanism(lessons)
    try:
        config = yaml.safe_load((root / "_config.yml").read_text("utf-8"))
        url = str(config["repository"]["url"]).rstrip("/")
    except (OSError, yaml.YAMLError, KeyError, TypeError):
        report.errors.append(
            "_config.yml: no repository.url (the Colab cells name it)"
        )
    else:
        report.errors += check_colab(lessons, colab_cell(url))
    return report


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.static_checks")
    ap.add_argument("--root", type=Path, default=ROOT)
    report = run_all(ap.parse_args(argv).root)
    for e in report.errors:
        print(f"✗ {e}")
    if report.pending:
        print(f"pending (no lesson yet): {', '.join(report.pending)}")
    n = len(claims.notebooks(ap.parse_args(argv).root))
    verdict = "FAILED" if report.errors else "passed"
    print(
        f"static checks: {verdict} ({len(report.errors)} problem(s) in {n} "
        f"notebooks; {len(report.pending)} claims pending)"
    )
    return 1 if report.errors else 0


if __name__ == "__main__":
    sys.exit(main())
