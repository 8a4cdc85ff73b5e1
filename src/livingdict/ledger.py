"""The ledger: one JSON line per executed check (``_build/ledger.jsonl``),
read by the book's verdict boxes and claims ledger; and how a record reads."""

import json
import math
import os
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .repo import repo_root


def ledger_path() -> Path:
    """``$LIVINGDICT_LEDGER``, else ``<repo>/_build/ledger.jsonl``."""
    env = os.environ.get("LIVINGDICT_LEDGER")
    if env:
        return Path(env)
    return (repo_root() or Path.cwd()) / "_build" / "ledger.jsonl"


def jsonable(x: Any) -> Any:
    if hasattr(x, "tolist"):
        x = x.tolist()
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    return x


def fmt(x: Any) -> str:
    """A number as the book prints it: 3 significant digits."""
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        return f"{x:.3g}"
    if isinstance(x, list):
        return ", ".join(fmt(v) for v in x[:6]) + (", …" if len(x) > 6 else "")
    return str(x)


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


def append(record: Mapping[str, Any], path: Path | None = None) -> None:
    """Append one record to the ledger (default ``ledger_path()``)."""
    p = ledger_path() if path is None else Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("a", encoding="utf-8") as f:
        f.write(json.dumps(record, ensure_ascii=False) + "\n")
