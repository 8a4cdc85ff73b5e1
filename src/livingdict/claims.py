"""Every claim of the book is checked by one call, ``check``, which leaves a
line in the ledger (read by the book's verdict boxes and claims page).

The pieces live apart: the registry (``registry``), the conditions
(``conditions``), the ledger and its report (``ledger``), the checkout
(``repo``); this module is the lessons' one entry point and keeps every public
name there (``claims.check``, ``claims.identity``, ``claims.experiment``,
``claims.registry``, ``claims.VERDICTS``, ...).
"""

import datetime as _dt
import os
import re
from collections.abc import Mapping
from typing import Any

from .conditions import (
    KINDS,
    Condition,
    Expect,
    evaluate,
    experiment,
    identity,
)
from .ledger import append, fmt, jsonable, ledger_path, read_ledger, report
from .registry import (
    FORMS,
    REGISTRY_PATH,
    VERDICTS,
    _read,
    chapters,
    entries,
    registry,
)
from .repo import notebooks, repo_root

__all__ = [
    "FORMS",
    "KINDS",
    "REGISTRY_PATH",
    "VERDICTS",
    "Condition",
    "Expect",
    "_read",
    "chapters",
    "check",
    "entries",
    "evaluate",
    "experiment",
    "fmt",
    "identity",
    "jsonable",
    "ledger_path",
    "notebooks",
    "read_ledger",
    "registry",
    "report",
    "repo_root",
]


def _notebook_name(claim_id: str) -> str | None:
    from IPython import get_ipython

    ip = get_ipython()  # a kernel started by Jupyter knows its notebook
    session = ip.user_ns.get("__session__") if ip is not None else None
    name = os.environ.get("LIVINGDICT_NOTEBOOK") or session
    if name:
        return str(name).removesuffix(".ipynb")
    return registry()[claim_id].get("notebook")


def _label(name: Any, what: str) -> str:
    """A quantity's name must read as words, not as a variable name."""
    s = str(name)
    if not s.strip() or "_" in s or re.search(r"[<>=]=?\s*$", s):
        raise ValueError(
            f"{what} {s!r} is not a plain name: write what it is in words "
            "(no underscores, no trailing operator)"
        )
    return s


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
        ("positive_controls", positive_controls),
    ):
        if value is not None and not isinstance(value, Mapping):
            raise TypeError(
                f"{claim_id}: {arg} must be a mapping {{name: passed}}, "
                f"got {type(value).__name__} {value!r}"
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
        "measured": jsonable(measured),
        "expected": {k: v.text for k, v in expected.items()},
        "kinds": {k: v.kind for k, v in expected.items()},
        "conditions": jsonable(conditions),
        "controls": controls,
        "positive_controls": positive,
        "note": note,
        "notebook": _notebook_name(claim_id),
        "seed": current_seed(),
        "time": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    }
    append(record)
    print(report(record))
    if not ok:
        raise AssertionError(
            f"claim {claim_id} did not reproduce:\n{report(record)}"
        )
    return record
