"""Every claim of the book is checked by one call, ``check``, which leaves a
line in the ledger (read by the book's verdict boxes and claims page). The
one source of truth for the registry, the verdicts and the lesson list.
"""

import datetime as _dt
import json
import math
import operator
import os
import re
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Self

import yaml

#: The registry: ``$LIVINGDICT_REGISTRY`` (a copy, for tests) or the one
#: beside this module.
REGISTRY_PATH = Path(
    os.environ.get("LIVINGDICT_REGISTRY")
    or Path(__file__).with_name("claims.yml")
)

#: The verdicts a lesson can reach, from "the essay is right" to "it is wrong".
#: "conclusion holds, reason does not" is for a claim of the form "X, because
#: Y", where X is true and Y is not.
VERDICTS = (
    "holds",
    "holds with caveats",
    "conclusion holds, reason does not",
    "does not hold",
)


# ------------------------------------------------------------- the registry
@lru_cache(maxsize=8)
def _read(path: Path, mtime_ns: int) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _load(path: Path) -> dict[str, Any]:
    """The registry file's content, read again whenever the file changed."""
    path = Path(path)
    return _read(path, path.stat().st_mtime_ns)


def entries(path: Path = REGISTRY_PATH) -> list[dict[str, Any]]:
    """The registry's entries as written, duplicates included."""
    return _load(path)["claims"]


def registry(path: Path = REGISTRY_PATH) -> dict[str, dict[str, Any]]:
    """``{id: {id, chapter, claim, verdict, notebook}}``; an id registered
    twice is a ``ValueError``."""
    out: dict[str, dict[str, Any]] = {}
    for e in entries(path):
        if e["id"] in out:
            raise ValueError(f"{e['id']} is registered twice in {path}")
        out[e["id"]] = e
    return out


def chapters(path: Path = REGISTRY_PATH) -> dict[str, dict[str, str]]:
    """The chapters: ``{"0": {title, section}, …, "B": …}``."""
    return {str(k): v for k, v in _load(path)["chapters"].items()}


def repo_root() -> Path | None:
    """The book's checkout: the folder with ``_config.yml``, ``notebooks``."""
    for start in (Path.cwd(), Path(__file__).resolve()):
        for folder in (start, *start.parents):
            book = (folder / "_config.yml").is_file()
            if book and (folder / "notebooks").is_dir():
                return folder
    return None


def notebooks(root: Path) -> list[Path]:
    """Every lesson ``*.ipynb`` under ``root/notebooks``, hidden ones aside."""
    base = Path(root) / "notebooks"
    if not base.is_dir():
        return []
    return sorted(
        p
        for p in base.rglob("*.ipynb")
        if not any(part.startswith(".") for part in p.relative_to(base).parts)
    )


# ----------------------------------------------------------- the conditions
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?"
_OPS = {"<": operator.lt, "<=": operator.le, "==": operator.eq}
_OPS |= {">": operator.gt, ">=": operator.ge}


@dataclass(frozen=True)
class Condition:
    """A condition a measured number must meet, parsed from ``expected`` text:
    ``"< t"``, ``"<= t"``, ``"> t"``, ``">= t"``, ``"== t"``, ``"a ± h"``
    (``|m − a| <= h``), ``"in [a, b]"`` (``a <= m <= b``), ``"true"`` /
    ``"false"`` (a yes/no finding). A list must meet it element by element.
    """

    text: str
    op: str
    lo: float
    hi: float = math.nan

    @classmethod
    def parse(cls, text: str) -> Self:
        s = str(text).strip()
        if s in ("true", "false"):
            return cls(s, "is", 1.0 if s == "true" else 0.0)
        if m := re.fullmatch(rf"(<=|>=|==|<|>)\s*({_NUMBER})", s):
            return cls(s, m[1], float(m[2]))
        if m := re.fullmatch(rf"({_NUMBER})\s*±\s*({_NUMBER})", s):
            return cls(s, "±", float(m[1]), float(m[2]))
        band = rf"in \[\s*({_NUMBER})\s*,\s*({_NUMBER})\s*\]"
        if m := re.fullmatch(band, s):
            return cls(s, "in", float(m[1]), float(m[2]))
        raise ValueError(
            f"expected condition {text!r} is not one of '< t', '<= t', '> t', "
            "'>= t', '== t', 'a ± h', 'in [a, b]', 'true', 'false'"
        )

    def holds(self, value: float | bool) -> bool:
        """Whether one measured value meets the condition."""
        if self.op == "is":
            return bool(value) == bool(self.lo)
        v = float(value)
        if self.op == "±":
            return abs(v - self.lo) <= self.hi
        if self.op == "in":
            return self.lo <= v <= self.hi
        return bool(_OPS[self.op](v, self.lo))

    def margin(self, value: float | bool) -> float:
        """How far inside (> 0) or outside (< 0) the condition a value lies,
        in units of ``|t|`` (or the band's half-width): 0.5 means the value
        could move half that before the check fails."""
        if self.op == "is":
            return 1.0 if self.holds(value) else -1.0
        v = float(value)
        if self.op == "±":
            return (self.hi - abs(v - self.lo)) / (self.hi or 1.0)
        if self.op == "in":
            half = (self.hi - self.lo) / 2 or 1.0
            return min(v - self.lo, self.hi - v) / half
        scale = abs(self.lo) or 1.0
        if self.op == "==":
            return -abs(v - self.lo) / scale
        gap = self.lo - v if self.op in ("<", "<=") else v - self.lo
        return gap / scale


#: The two kinds of condition. An *identity* is true by algebra whenever the
#: code is right (it guards the code); an *experiment* could come out either
#: way if the claim were false (it is the evidence).
KINDS = ("identity", "experiment")


@dataclass(frozen=True)
class Expect:
    """A condition's text with its kind: ``identity("< 1e-6")`` or
    ``experiment(">= 0.9")``."""

    text: str
    kind: str

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind {self.kind!r} is not one of {KINDS}")
        Condition.parse(self.text)


def identity(text: str) -> Expect:
    """A condition true by algebra whenever the code is right."""
    return Expect(str(text), "identity")


def experiment(text: str) -> Expect:
    """A condition that could fail if the claim were false."""
    return Expect(str(text), "experiment")


def _values(x: Any) -> list[Any]:
    x = x.tolist() if hasattr(x, "tolist") else x
    if isinstance(x, (list, tuple)):
        return [v for item in x for v in _values(item)]
    return [x]


def evaluate(
    measured: Mapping[str, Any], expected: Mapping[str, Expect]
) -> list[dict[str, Any]]:
    """Each condition of ``expected`` applied to its ``measured`` quantity:
    ``[{"name", "expected", "kind", "held", "margin"}, …]`` (the worst
    element's margin)."""
    rows = []
    for name, spec in expected.items():
        if not isinstance(spec, Expect):
            raise TypeError(
                f"expected[{name!r}] is {spec!r} ({type(spec).__name__}): "
                "wrap it as claims.identity(...) or claims.experiment(...)"
            )
        if name not in measured:
            raise ValueError(f"expected names {name!r}, which measured lacks")
        cond = Condition.parse(spec.text)
        values = _values(measured[name])
        if not values:
            raise ValueError(f"measured {name!r} is empty")
        held = all(cond.holds(v) for v in values)
        margin = min(cond.margin(v) for v in values)
        rows.append(
            dict(
                name=name,
                expected=cond.text,
                kind=spec.kind,
                held=held,
                margin=margin,
            )
        )
    return rows


# ---------------------------------------------------------------- the check
def ledger_path() -> Path:
    """``$LIVINGDICT_LEDGER``, else ``<repo>/_build/ledger.jsonl``."""
    env = os.environ.get("LIVINGDICT_LEDGER")
    if env:
        return Path(env)
    return (repo_root() or Path.cwd()) / "_build" / "ledger.jsonl"


def _notebook_name(claim_id: str) -> str | None:
    from IPython import get_ipython

    ip = get_ipython()  # a kernel started by Jupyter knows its notebook
    session = ip.user_ns.get("__session__") if ip is not None else None
    name = os.environ.get("LIVINGDICT_NOTEBOOK") or session
    if name:
        return str(name).removesuffix(".ipynb")
    return registry()[claim_id].get("notebook")


def _jsonable(x: Any) -> Any:
    if hasattr(x, "tolist"):
        x = x.tolist()
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    return x


def _label(name: Any, what: str) -> str:
    """A quantity's name must read as words, not as a variable name."""
    s = str(name)
    if not s.strip() or "_" in s or re.search(r"[<>=]=?\s*$", s):
        raise ValueError(
            f"{what} {s!r} is not a plain name: write what it is in words "
            "(no underscores, no trailing operator)"
        )
    return s


def fmt(x: Any) -> str:
    """A number as the book prints it: 3 significant digits."""
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        return f"{x:.3g}"
    if isinstance(x, list):
        return ", ".join(fmt(v) for v in x[:6]) + (", …" if len(x) > 6 else "")
    return str(x)


def check(
    claim_id: str,
    passed: bool,
    *,
    measured: Mapping[str, Any],
    expected: Mapping[str, Expect],
    controls: Mapping[str, bool],
    positive_controls: Mapping[str, bool] | None = None,
    note: str = "",
) -> dict[str, Any]:
    """Record the check of one claim; raise ``AssertionError`` when it fails.

    ``measured``: ``{plain name: number, list of numbers or yes/no}``, e.g.
    ``"retrieval error at N = d"``; ``expected``: ``{plain name:
    identity(condition) or experiment(condition)}`` (see ``Condition``;
    other measured quantities are only reported); ``controls``: ``{a
    control — the same test, through the same pipeline, applied to
    something that must fail it (the mechanism removed): did it pass?}``,
    at least one; ``positive_controls``: for a claim that something makes
    *no* difference, ``{a setting where the difference is known to exist,
    through the same pipeline: did the no-difference test pass there?}``
    (it must not: the test can see a difference). ``passed``, the lesson's
    verdict, must agree with the conditions.

        reproduces = passed and not any(controls ∪ positive_controls)

    Appends the record to ``ledger_path()`` and returns it.
    """
    reg = registry()
    if claim_id not in reg:
        known = ", ".join(sorted(reg))
        raise ValueError(f"unknown claim id {claim_id!r}; known: {known}")
    for arg, value in (("measured", measured), ("expected", expected)):
        if not isinstance(value, Mapping):
            raise TypeError(
                f"{claim_id}: {arg} must be a mapping of plain names, got "
                f"{type(value).__name__} {value!r}"
            )
    for arg, value in (
        ("controls", controls),
        ("positive", positive_controls),
    ):
        if value is not None and not isinstance(value, Mapping):
            raise TypeError(
                f"{claim_id}: {arg} controls must be a mapping "
                f"{{name: passed}}, got {type(value).__name__} {value!r}"
            )
    measured = {_label(k, "measured"): v for k, v in measured.items()}
    expected = {_label(k, "expected"): v for k, v in expected.items()}
    controls = {_label(k, "control"): bool(v) for k, v in controls.items()}
    positive = {
        _label(k, "positive control"): bool(v)
        for k, v in (positive_controls or {}).items()
    }
    if reg[claim_id].get("form") == "no difference" and not positive:
        raise ValueError(
            f"{claim_id} claims that something makes no difference: it needs "
            "positive_controls, settings where the difference exists and the "
            "same test sees it"
        )
    if not expected:
        raise ValueError(f"{claim_id}: expected names no condition to test")
    if not controls:
        raise ValueError(
            f"{claim_id}: a check needs at least one control, the same test "
            "applied to something that must fail it"
        )
    conditions = evaluate(measured, expected)
    held = {c["name"]: c["held"] for c in conditions}
    if bool(passed) != all(held.values()):
        raise ValueError(
            f"{claim_id}: passed={bool(passed)} contradicts {held}"
        )
    from . import current_seed

    ok = bool(passed) and not any([*controls.values(), *positive.values()])
    record = {
        "id": claim_id,
        "passed": ok,
        "measured": _jsonable(measured),
        "expected": {k: v.text for k, v in expected.items()},
        "kinds": {k: v.kind for k, v in expected.items()},
        "conditions": _jsonable(conditions),
        "controls": controls,
        "positive_controls": positive,
        "note": note,
        "notebook": _notebook_name(claim_id),
        "seed": current_seed(),
        "time": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    }
    path = ledger_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(record, ensure_ascii=False) + "\n")
    print(report(record))
    if not ok:
        raise AssertionError(
            f"claim {claim_id} did not reproduce:\n{report(record)}"
        )
    return record


def report(record: Mapping[str, Any], width: int = 79) -> str:
    """The record as readable lines (at most ``width`` characters): each
    condition, then each control."""
    mark = "✓" if record["passed"] else "✗"
    word = "reproduced" if record["passed"] else "did NOT reproduce"
    lines = [f"{mark} {record['id']} {word} (seed {record.get('seed')})"]
    for c in record.get("conditions", []):
        sign = "✓" if c["held"] else "✗"
        value = fmt(record["measured"][c["name"]])
        kind = c.get("kind", "?")
        lines.append(
            f"  {sign} [{kind}] {c['name']}: {value} "
            f"(expected {c['expected']})"
        )
    for name, value in record["measured"].items():
        if name not in record.get("expected", {}):
            lines.append(f"    {name}: {fmt(value)}")
    outcome = ("failed, as it should", "PASSED (it must not)")
    for word, key in (
        ("control", "controls"),
        ("positive control", "positive_controls"),
    ):
        for name, passed in (record.get(key) or {}).items():
            sign = "✗" if passed else "✓"
            lines.append(
                f"  {sign} {word}, must fail — {name}: {outcome[bool(passed)]}"
            )
    return "\n".join(
        textwrap.fill(line, width, subsequent_indent="      ")
        for line in lines
    )


def read_ledger(path: Path | None = None) -> list[dict[str, Any]]:
    """All records of a ledger (default ``ledger_path()``), oldest first."""
    p = ledger_path() if path is None else Path(path)
    if not p.exists():
        return []
    lines = p.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line]
