"""``make sweep``: every claim must hold for every seed, not the one we tried.

Usage: ``python -m tools.sweep [SEED ...] [NOTEBOOK_OR_FOLDER ...] [--ledger FILE]``
(integers are seeds, default ``0 1 2 3 4``; anything else names notebooks, default
every ``*.ipynb`` under ``notebooks/``).

Runs each notebook once per seed in a fresh kernel (``tools.nbrun``) with
``LIVINGDICT_SEED`` set, ``LIVINGDICT_NOTEBOOK`` set to the notebook's path (without
``.ipynb``) and ``LIVINGDICT_LEDGER`` pointing at one ledger (``_build/sweep-ledger.jsonl``,
emptied first). Then prints, per registered claim id, how many seeds it passed, and
exits 1 when any of these happened:

- a claim failed for some seed, or a claim whose registry entry names a notebook has
  no ledger line for some seed (its notebook was run but never reached the check);
- a notebook raised (for any seed);
- a claim was checked by a notebook other than the one its registry entry names;
- a ledger line matches no run (e.g. the notebook ignored ``LIVINGDICT_SEED``);
- on a full run, the registry names a notebook that does not exist.

Claims whose registry entry names no notebook are listed as pending, not failed.
When notebooks are named, claims of the other notebooks are listed as not run.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tools import nbrun
from tools.nbrun import Run

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SEEDS = (0, 1, 2, 3, 4)


@dataclass
class ClaimRow:
    """The sweep's verdict on one claim id."""

    id: str
    notebook: str | None
    status: str  # passed | failed | pending | not run
    passed: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    missing: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class Summary:
    seeds: list[int]
    rows: list[ClaimRow]
    problems: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems and all(
            r.status != "failed" for r in self.rows
        )


def nb_key(path: str) -> str:
    """The name a ledger line uses for a notebook: its path without ``.ipynb``."""
    return path.removesuffix(".ipynb")


def aggregate(
    registry: Mapping[str, Mapping[str, Any]],
    records: Iterable[Mapping[str, Any]],
    runs: Sequence[Run],
    seeds: Sequence[int],
    *,
    existing: Iterable[str] | None = None,
) -> Summary:
    """Turn the runs and the ledger lines they wrote into one verdict per claim.

    ``registry`` maps id → entry (``notebook``: path without ``.ipynb`` or ``None``);
    ``runs`` are the executions (``Run.path`` with ``.ipynb``, ``Run.seed``);
    ``existing``, on a full run, names every notebook that exists (without ``.ipynb``),
    so that a registry entry naming a missing notebook fails.
    A line counts for the run whose (notebook, seed) it names.
    """
    seeds = list(seeds)
    problems: list[str] = []
    ran = {(nb_key(r.path), r.seed) for r in runs}
    run_notebooks = {nb_key(r.path) for r in runs}
    for r in runs:
        if not r.ok:
            problems.append(f"{r.path} (seed {r.seed}) raised: {r.error}")
    missing_seeds = {(nb, s) for nb in run_notebooks for s in seeds} - ran
    for nb, s in sorted(missing_seeds):
        problems.append(f"{nb} was not run for seed {s}")

    lines: dict[str, list[Mapping[str, Any]]] = {}
    for rec in records:
        key = (rec.get("notebook"), rec.get("seed"))
        if key not in ran:
            problems.append(
                f"{rec.get('id')}: ledger line for notebook {key[0]} seed {key[1]} matches no run"
                " (does the notebook call livingdict.setup() and honour LIVINGDICT_SEED?)"
            )
            continue
        if rec.get("id") not in registry:
            problems.append(
                f"{rec.get('id')}: checked in {key[0]} but not registered"
            )
            continue
        lines.setdefault(rec["id"], []).append(rec)

    existing_set = None if existing is None else set(existing)
    rows = []
    for cid, entry in registry.items():
        nb = entry.get("notebook")
        recs = lines.get(cid, [])
        row = ClaimRow(cid, nb, "pending")
        elsewhere = sorted(
            {r["notebook"] for r in recs if r["notebook"] != nb}
        )
        if (
            nb is None
        ):  # the lesson is being written: not a failure, but say so
            if recs:
                row.notes.append(
                    f"checked by {', '.join(elsewhere)}: register its notebook"
                )
            rows.append(row)
            continue
        if elsewhere:
            problems.append(
                f"{cid}: checked by {', '.join(elsewhere)}, registered to {nb}"
            )
        if nb not in run_notebooks:
            row.status = "not run"
            if existing_set is not None and nb not in existing_set:
                row.status = "failed"
                row.notes.append(f"its notebook {nb}.ipynb does not exist")
            rows.append(row)
            continue
        for s in seeds:
            mine = [r for r in recs if r["notebook"] == nb and r["seed"] == s]
            if not mine:
                row.missing.append(s)
            elif all(r["passed"] is True for r in mine):
                row.passed.append(s)
            else:
                row.failed.append(s)
        row.status = (
            "passed" if len(row.passed) == len(seeds) and seeds else "failed"
        )
        rows.append(row)
    return Summary(seeds, rows, problems)


def report(summary: Summary) -> str:
    """The printed verdict: one line per claim, then every problem."""
    n = len(summary.seeds)
    width = max([4, *(len(r.id) for r in summary.rows)])
    out = []
    for r in summary.rows:
        if r.status in ("pending", "not run"):
            line = f"  {r.id:<{width}}  {r.status}"
            line += f"  {r.notebook}" if r.notebook else " (no notebook yet)"
        else:
            mark = "✓" if r.status == "passed" else "✗"
            line = f"{mark} {r.id:<{width}}  {len(r.passed)}/{n} seeds passed  {r.notebook}"
            if r.failed:
                line += f"  failed for seeds {', '.join(map(str, r.failed))}"
            if r.missing:
                line += f"  no ledger line for seeds {', '.join(map(str, r.missing))}"
        out.append(line + "".join(f"  [{note}]" for note in r.notes))
    for p in summary.problems:
        out.append(f"✗ {p}")
    counts = {
        s: sum(r.status == s for r in summary.rows)
        for s in ("passed", "failed", "pending", "not run")
    }
    verdict = "passed" if summary.ok else "FAILED"
    out.append(
        f"sweep {verdict}: seeds {' '.join(map(str, summary.seeds))}; "
        + ", ".join(f"{v} {k}" for k, v in counts.items())
        + (f"; {len(summary.problems)} problem(s)" if summary.problems else "")
    )
    return "\n".join(out)


def load_registry(root: Path) -> dict[str, dict[str, Any]]:
    """``{id: entry}`` from ``root/src/livingdict/claims.yml``."""
    data = yaml.safe_load(
        (root / "src" / "livingdict" / "claims.yml").read_text(
            encoding="utf-8"
        )
    )
    return {e["id"]: e for e in data["claims"]}


def parse(argv: Sequence[str]) -> tuple[list[int], list[str], Path | None]:
    ap = argparse.ArgumentParser(
        prog="python -m tools.sweep", description=__doc__.split("\n")[0]
    )
    ap.add_argument(
        "items", nargs="*", help="seeds (integers) and notebooks or folders"
    )
    ap.add_argument(
        "--ledger", type=Path, help="default: _build/sweep-ledger.jsonl"
    )
    args = ap.parse_args(argv)
    seeds = [int(a) for a in args.items if a.lstrip("-").isdigit()]
    paths = [a for a in args.items if not a.lstrip("-").isdigit()]
    if any(s < 0 for s in seeds):
        ap.error(f"seeds must be >= 0, got {seeds}")
    return seeds or list(DEFAULT_SEEDS), paths, args.ledger


Runner = Callable[[Path, dict[str, str], int], Run]


def main(
    argv: Sequence[str] | None = None,
    *,
    run_file: Runner | None = None,
    root: Path = ROOT,
) -> int:
    seeds, targets, ledger = parse(sys.argv[1:] if argv is None else argv)
    if run_file is None:

        def run_file(path: Path, env: dict[str, str], seed: int) -> Run:
            return nbrun.run_file(path, root, env, seed=seed)

    try:
        paths = nbrun.find_notebooks(root, targets)
    except ValueError as err:
        print(f"sweep: {err}", file=sys.stderr)
        return 2
    ledger = ledger or root / "_build" / "sweep-ledger.jsonl"
    ledger.parent.mkdir(parents=True, exist_ok=True)
    ledger.write_text("")
    print(
        f"sweep: {len(paths)} notebook(s) × seeds {' '.join(map(str, seeds))} → {ledger}"
    )
    runs = []
    for path in paths:
        name = nbrun.rel_name(path, root)
        for seed in seeds:
            env = {
                "LIVINGDICT_SEED": str(seed),
                "LIVINGDICT_LEDGER": str(ledger),
                "LIVINGDICT_NOTEBOOK": nb_key(name),
            }
            r = run_file(path, env, seed)
            runs.append(r)
            status = "ok" if r.ok else f"FAILED: {r.error}"
            print(
                f"  {name} seed {seed}: {r.wall_s:.1f} s {status}", flush=True
            )

    from livingdict.claims import read_ledger

    existing = None
    if not targets:
        existing = {nb_key(nbrun.rel_name(p, root)) for p in paths}
    summary = aggregate(
        load_registry(root),
        read_ledger(ledger),
        runs,
        seeds,
        existing=existing,
    )
    print(report(summary))
    return 0 if summary.ok else 1


if __name__ == "__main__":
    sys.exit(main())
