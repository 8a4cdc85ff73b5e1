"""Static checks of the book (fast: nothing is executed). Part of ``make static``.

Usage: ``python -m tools.static_checks [--root DIR]`` (default: this checkout).

1. Notebooks under ``notebooks/`` are stored clean: no outputs, no execution counts,
   no saved widget state.
2. Every notebook under ``notebooks/`` is listed in ``_toc.yml`` and every ``_toc.yml``
   entry exists (as ``.md``, ``.ipynb`` or ``.rst``).
3. The claims registry (``src/livingdict/claims.yml``) and the notebooks agree: an id
   whose entry names a notebook is checked by exactly that notebook (a literal
   ``check("<id>"`` call in a code cell) and by no other; no id is checked twice;
   every checked id is registered, and its entry names the notebook that checks it;
   an entry names a notebook if and only if it has a verdict, and the verdict is one
   of ``holds``, ``holds with caveats``, ``does not hold``. Ids with neither are
   reported as pending.

4. Every check names its controls: each ``check("<id>", ...)`` call passes
   ``controls=`` (``claims.check`` itself refuses an empty mapping at run time).
5. No typed numbers: a number in a lesson's markdown, figure caption or alt text
   is glued from the run (``{glue:text}``), or is on the allow-list
   ``tools/allowed_numbers.yml`` (a definition, with its reason). Not counted:
   integers 0-10 outside a percentage (counting words: "two layers", "3 × 3"),
   integers inside math (the shape of a formula), years, claim ids, code,
   directive options and link targets.

Exits 1 and lists every violation; pending ids alone do not fail.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from livingdict.claims import VERDICTS

ROOT = Path(__file__).resolve().parents[1]

CHECK_CALL = re.compile(r"""\bcheck\(\s*(?P<q>["'])(?P<id>[^"'\n]+)(?P=q)""")
TOC_SUFFIXES = (".md", ".ipynb", ".rst")


@dataclass
class Report:
    errors: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


def notebooks(root: Path) -> list[Path]:
    """Every ``*.ipynb`` under ``root/notebooks``, outside hidden (checkpoint) folders."""
    base = root / "notebooks"
    if not base.is_dir():
        return []
    return sorted(
        p
        for p in base.rglob("*.ipynb")
        if not any(part.startswith(".") for part in p.relative_to(base).parts)
    )


def _rel(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def _load(path: Path, root: Path, errors: list[str]) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        errors.append(f"{_rel(path, root)}: not a readable notebook ({err})")
        return None


def check_clean(root: Path) -> list[str]:
    """Notebooks carry no outputs, execution counts or widget state."""
    errors: list[str] = []
    for path in notebooks(root):
        nb = _load(path, root, errors)
        if nb is None:
            continue
        name = _rel(path, root)
        for i, cell in enumerate(nb.get("cells", [])):
            if cell.get("cell_type") != "code":
                continue
            if cell.get("outputs"):
                errors.append(f"{name}: cell {i} is stored with outputs")
            if cell.get("execution_count") is not None:
                errors.append(
                    f"{name}: cell {i} is stored with an execution count"
                )
        if "widgets" in nb.get("metadata", {}):
            errors.append(
                f"{name}: stored with widget state (metadata.widgets)"
            )
    return errors


def _toc_entries(node: Any) -> Iterator[tuple[str, str]]:
    """(kind, value) for every ``root``/``file``/``glob`` entry of a toc, depth first."""
    if isinstance(node, dict):
        for key in ("root", "file", "glob"):
            if isinstance(node.get(key), str):
                yield key, node[key]
        for value in node.values():
            if isinstance(value, (dict, list)):
                yield from _toc_entries(value)
    elif isinstance(node, list):
        for item in node:
            yield from _toc_entries(item)


def _strip(entry: str) -> str:
    for suffix in TOC_SUFFIXES:
        if entry.endswith(suffix):
            return entry[: -len(suffix)]
    return entry


def check_toc(root: Path) -> list[str]:
    """Every notebook is in ``_toc.yml``; every entry of ``_toc.yml`` exists."""
    toc_path = root / "_toc.yml"
    if not toc_path.is_file():
        return ["_toc.yml does not exist"]
    try:
        toc = yaml.safe_load(toc_path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        return [f"_toc.yml is not valid YAML: {err}"]
    errors: list[str] = []
    listed: set[str] = set()
    for kind, entry in _toc_entries(toc):
        if kind == "glob":
            listed.update(
                _strip(_rel(p, root)) for p in root.glob(entry + "*")
            )
            continue
        base = _strip(entry.strip("/"))
        listed.add(base)
        if not any((root / (base + s)).is_file() for s in TOC_SUFFIXES):
            errors.append(
                f"_toc.yml: {kind} {entry!r} does not exist (.md, .ipynb or .rst)"
            )
    for path in notebooks(root):
        name = _strip(_rel(path, root))
        if name not in listed:
            errors.append(f"{name}.ipynb is not listed in _toc.yml")
    return errors


def checked_ids(nb: dict[str, Any]) -> list[str]:
    """The ids of every ``check("<id>"`` call in the notebook's code cells, in order."""
    ids = []
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            source = cell.get("source", "")
            source = "".join(source) if isinstance(source, list) else source
            ids += [m["id"] for m in CHECK_CALL.finditer(source)]
    return ids


def check_claims(root: Path) -> tuple[list[str], list[str]]:
    """Registry and notebooks agree (see the module docstring). Returns (errors, pending)."""
    reg_path = root / "src" / "livingdict" / "claims.yml"
    try:
        entries = yaml.safe_load(reg_path.read_text(encoding="utf-8"))[
            "claims"
        ]
    except (OSError, yaml.YAMLError, KeyError, TypeError) as err:
        return [f"{_rel(reg_path, root)}: unreadable registry ({err})"], []
    errors: list[str] = []
    registry: dict[str, dict[str, Any]] = {}
    for e in entries:
        if e.get("id") in registry:
            errors.append(f"claims.yml: id {e.get('id')} is registered twice")
        registry[e.get("id")] = e

    checks: dict[str, list[str]] = {}  # id -> notebooks (one item per call)
    for path in notebooks(root):
        nb = _load(
            path, root, []
        )  # unreadable notebooks are reported by check_clean
        for cid in checked_ids(nb or {}):
            checks.setdefault(cid, []).append(_strip(_rel(path, root)))

    pending = []
    for cid, e in registry.items():
        nb, verdict = e.get("notebook"), e.get("verdict")
        if verdict is not None and verdict not in VERDICTS:
            errors.append(
                f"{cid}: verdict {verdict!r} is not one of {', '.join(VERDICTS)}"
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
    (
        r"(?ms)^(`{3,}|~{3,})(?!\{).*?^\1\s*$",
        " ",
    ),  # code fences (not directives)
    (r"(?m)^\s*:[\w-]+:.*$", " "),  # directive options (:label: ex-1)
    (r"(?m)^(`{3,}|:{3,})\{[\w:-]+\}.*$", " "),  # directive heads
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


def typed_numbers(text: str, allowed: Mapping[str, str]) -> list[str]:
    """The numbers in markdown ``text`` that are neither glued nor allowed."""
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


def check_numbers(
    root: Path, allowed: Mapping[str, str] | None = None
) -> list[str]:
    """Every number a reader sees in a lesson's prose is glued or allowed."""
    allowed = load_allowed() if allowed is None else allowed
    errors: list[str] = []
    for path in notebooks(root):
        nb = _load(path, root, [])
        for i, cell in enumerate((nb or {}).get("cells", [])):
            texts = _figure_texts(cell)
            if cell.get("cell_type") == "markdown":
                texts.append(("markdown", _source(cell)))
            for where, text in texts:
                for token in typed_numbers(text, allowed):
                    errors.append(
                        f"{_rel(path, root)}: cell {i} {where} types the number "
                        f"{token!r}: glue it from the run, or add it to "
                        "tools/allowed_numbers.yml with the reason it is a "
                        "definition"
                    )
    return errors


def _source(cell: Mapping[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def check_controls(root: Path) -> list[str]:
    """Every ``check(...)`` call of a lesson passes ``controls=``."""
    errors: list[str] = []
    for path in notebooks(root):
        nb = _load(path, root, [])
        for cell in (nb or {}).get("cells", []):
            if cell.get("cell_type") != "code":
                continue
            source = _source(cell)
            for m in CHECK_CALL.finditer(source):
                call = source[m.start() :]
                depth, end = 0, len(call)
                for j, ch in enumerate(call):
                    depth += {"(": 1, ")": -1}.get(ch, 0)
                    if ch == ")" and depth == 0:
                        end = j
                        break
                if not re.search(r"\bcontrols\s*=", call[:end]):
                    errors.append(
                        f"{_rel(path, root)}: check({m['id']!r}, ...) names no "
                        "controls (controls={...}: the same test applied to "
                        "something that must fail it)"
                    )
    return errors


def run_all(root: Path) -> Report:
    root = Path(root)
    report = Report()
    report.errors += check_clean(root)
    report.errors += check_toc(root)
    errors, pending = check_claims(root)
    report.errors += errors
    report.errors += check_controls(root)
    report.errors += check_numbers(root)
    report.pending = pending
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m tools.static_checks",
        description=__doc__.split("\n")[0],
    )
    ap.add_argument("--root", type=Path, default=ROOT)
    args = ap.parse_args(argv)
    report = run_all(args.root)
    n = len(notebooks(args.root))
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
