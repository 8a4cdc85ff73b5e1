"""Every claim of the book is checked by one call, and every check leaves a trace.

``check(claim_id, passed, measured=..., expected=...)`` prints a one-line verdict,
appends a JSON line to the ledger and raises ``AssertionError`` with the numbers when
the claim does not reproduce. The ledger feeds the book's claims page.

Ledger file: ``$LIVINGDICT_LEDGER`` if set, else ``<repo>/_build/ledger.jsonl``, where
``<repo>`` is the checkout that holds ``_config.yml`` (found from the working
directory or from this package), else ``./_build/ledger.jsonl``.
The registry of claim ids is ``claims.yml`` beside this module.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

REGISTRY_PATH = Path(__file__).with_name("claims.yml")


@lru_cache(maxsize=1)
def registry() -> dict[str, dict[str, Any]]:
    """The claims registry: ``{id: {chapter, section, claim, verdict, notebook}}``."""
    entries = yaml.safe_load(REGISTRY_PATH.read_text(encoding="utf-8"))["claims"]
    return {e["id"]: e for e in entries}


def chapters() -> dict[str, dict[str, str]]:
    """The chapters of the registry: ``{"1": {title, section}, …, "B": …}``."""
    raw = yaml.safe_load(REGISTRY_PATH.read_text(encoding="utf-8"))["chapters"]
    return {str(k): v for k, v in raw.items()}


def repo_root() -> Path | None:
    """The book's checkout (the folder with ``_config.yml`` and ``notebooks/``), if any."""
    for start in (Path.cwd(), Path(__file__).resolve()):
        for folder in (start, *start.parents):
            if (folder / "_config.yml").is_file() and (folder / "notebooks").is_dir():
                return folder
    return None


def ledger_path() -> Path:
    """Where ``check`` appends: ``$LIVINGDICT_LEDGER`` or ``<repo>/_build/ledger.jsonl``."""
    env = os.environ.get("LIVINGDICT_LEDGER")
    if env:
        return Path(env)
    root = repo_root() or Path.cwd()
    return root / "_build" / "ledger.jsonl"


def _notebook_name(claim_id: str) -> str | None:
    env = os.environ.get("LIVINGDICT_NOTEBOOK")
    if env:
        return env.removesuffix(".ipynb")
    try:  # a kernel started by a Jupyter server knows its notebook
        from IPython import get_ipython

        ip = get_ipython()
        session = ip.user_ns.get("__session__") if ip is not None else None
        if session:
            return str(session).removesuffix(".ipynb")
    except ImportError:  # pragma: no cover - IPython is a dependency
        pass
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


def _fmt(x: Any) -> str:
    if isinstance(x, float):
        return f"{x:.4g}"
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k}: {_fmt(v)}" for k, v in x.items()) + "}"
    if isinstance(x, list):
        return "[" + ", ".join(_fmt(v) for v in x) + "]"
    return str(x)


def check(
    claim_id: str,
    passed: bool,
    *,
    measured: Any,
    expected: Any,
    note: str = "",
) -> dict[str, Any]:
    """Record the check of one claim; raise ``AssertionError`` when it fails.

    ``passed`` is the outcome of the notebook's own comparison (e.g.
    ``abs(r) < 4 / sqrt(n)``), ``measured`` and ``expected`` are the numbers it
    compared (JSON-serialisable: numbers, strings, lists, dicts, arrays).
    Prints ``✓ C1.2  measured … | expected …``, appends
    ``{"id", "passed", "measured", "expected", "note", "notebook", "seed", "time"}``
    to the ledger and returns that record. Raises ``ValueError`` for an id that is
    not in the registry.
    """
    reg = registry()
    if claim_id not in reg:
        raise ValueError(f"unknown claim id {claim_id!r}; known: {', '.join(sorted(reg))}")
    from . import current_seed

    ok = bool(passed)
    record = {
        "id": claim_id,
        "passed": ok,
        "measured": _jsonable(measured),
        "expected": _jsonable(expected),
        "note": note,
        "notebook": _notebook_name(claim_id),
        "seed": current_seed(),
        "time": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    }
    path = ledger_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(record, ensure_ascii=False) + "\n")
    mark = "✓" if ok else "✗"
    measured_s, expected_s = _fmt(record["measured"]), _fmt(record["expected"])
    line = f"{mark} {claim_id}  measured {measured_s} | expected {expected_s}"
    print(line + (f"  ({note})" if note else ""))
    if not ok:
        raise AssertionError(
            f"claim {claim_id} did not reproduce: measured {record['measured']!r}, "
            f"expected {record['expected']!r}" + (f" ({note})" if note else "")
        )
    return record


def read_ledger(path: Path | None = None) -> list[dict[str, Any]]:
    """All records of a ledger file (``ledger_path()`` by default), oldest first."""
    p = ledger_path() if path is None else Path(path)
    if not p.exists():
        return []
    return [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line]
