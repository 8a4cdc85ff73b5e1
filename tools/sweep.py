"""``make sweep``: every claim must hold for every seed, not the one we tried.

Usage: ``python -m tools.sweep [SEED ...] [NOTEBOOK_OR_FOLDER ...] [--ledger FILE]
[--jobs N]`` (integers are seeds, default 0 to 19 as in ``make sweep``; anything
else names notebooks or folders of lessons, default every lesson; ``--jobs``:
kernels run at once, default 2, one per core — each kernel is single-threaded
and seeded, so the results equal a serial run's).

Runs each notebook once per seed in a fresh kernel (``tools.nbrun.run_jobs``,
which sets ``LIVINGDICT_SEED`` and ``LIVINGDICT_NOTEBOOK``) and collects their
claim checks in one ledger (``_build/sweep-ledger.jsonl``, rewritten). Then
prints, per registered claim, how many seeds it passed; the margins table (per
claim and condition, the worst seed's margin — how far inside its condition the
measured value lay, relative to the threshold's scale — thinnest first, thin
below ``THIN``); and per claim its controls and whether each failed on every
seed. Exits 1 when any of these happened:

- a claim failed for some seed, or had no ledger line for some seed (its
  notebook ran but never reached the check);
- a notebook raised (for any seed), or was not run for some seed;
- a ledger line matches no run (e.g. the notebook ignored ``LIVINGDICT_SEED``).

Whether the registry and the notebooks agree (each id checked by exactly its
notebook, the notebook exists, the verdict is valid) is not a sweep's question:
``tools.static_checks`` answers it. Claims whose registry entry names no
notebook are listed as pending; when notebooks are named, the claims of the
others are listed as not run.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from livingdict import claims
from tools import nbrun
from tools.nbrun import Run

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SEEDS = tuple(range(20))
DEFAULT_JOBS = 2
#: A margin below this (a tenth of the threshold's scale) is marked thin.
THIN = 0.1


@dataclass
class ClaimRow:
    """The sweep's verdict on one claim id, and the ledger lines behind it."""

    id: str
    notebook: str | None
    status: str  # passed | failed | pending | not run
    passed: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    missing: list[int] = field(default_factory=list)
    records: list[Mapping[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Margin:
    """The worst seed of one condition of one claim."""

    claim: str
    condition: str
    margin: float
    seed: int | None
    measured: Any
    expected: str
    held: bool = True
    kind: str = "?"  # identity | experiment (? in a record without kinds)

    @property
    def exact(self) -> bool:
        """An equality that held: it has no distance to measure."""
        return self.held and self.expected.startswith("==")

    @property
    def mark(self) -> str:
        if not self.held:
            return "✗ failed"
        if self.exact:
            return "exact"
        return "thin" if self.margin < THIN else ""


@dataclass(frozen=True)
class Controls:
    """A claim's controls over the seeds: ``{control: seeds it passed}``."""

    claim: str
    passed_for: dict[str, list[int]]

    @property
    def ok(self) -> bool:
        return bool(self.passed_for) and not any(self.passed_for.values())


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
    """The name a ledger line uses for a notebook: its path without
    ``.ipynb``."""
    return path.removesuffix(".ipynb")


def aggregate(
    registry: Mapping[str, Mapping[str, Any]],
    records: Iterable[Mapping[str, Any]],
    runs: Sequence[Run],
    seeds: Sequence[int],
) -> Summary:
    """Turn the runs and the ledger lines they wrote into one verdict per
    claim.

    ``registry`` maps id → entry (``notebook``: path without ``.ipynb`` or
    ``None``); ``runs`` are the executions (``Run.path`` with ``.ipynb``,
    ``Run.seed``). A claim's line for a seed is the one its registered
    notebook wrote in that seed's run.
    """
    seeds = list(seeds)
    problems: list[str] = []
    ran = {(nb_key(r.path), r.seed) for r in runs}
    run_notebooks = {nb for nb, _ in ran}
    for r in runs:
        if not r.ok:
            problems.append(f"{r.path} (seed {r.seed}) raised: {r.error}")
    missing_runs = {(nb, s) for nb in run_notebooks for s in seeds} - ran
    for nb, s in sorted(missing_runs):
        problems.append(f"{nb} was not run for seed {s}")

    lines: dict[tuple[Any, Any, Any], list[Mapping[str, Any]]] = {}
    for rec in records:
        key = (rec.get("notebook"), rec.get("seed"))
        if key not in ran:
            problems.append(
                f"{rec.get('id')}: ledger line for notebook {key[0]} seed "
                f"{key[1]} matches no run (does the notebook call "
                "livingdict.setup() and honour LIVINGDICT_SEED?)"
            )
            continue
        lines.setdefault((rec.get("id"), *key), []).append(rec)

    rows = []
    for cid, entry in registry.items():
        nb = entry.get("notebook")
        row = ClaimRow(cid, nb, "pending")
        rows.append(row)
        if nb is None:  # the lesson is being written: not a failure
            continue
        if nb not in run_notebooks:
            row.status = "not run"
            continue
        for s in seeds:
            mine = lines.get((cid, nb, s), [])
            row.records += mine
            if not mine:
                row.missing.append(s)
            elif all(r.get("passed") is True for r in mine):
                row.passed.append(s)
            else:
                row.failed.append(s)
        ok = seeds and len(row.passed) == len(seeds)
        row.status = "passed" if ok else "failed"
    return Summary(seeds, rows, problems)


def _number(x: Any) -> float:
    """A margin as stored (a number, or ``"inf"`` for a non-finite one)."""
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def _worst_value(value: Any, expected: str) -> Any:
    """The element of a measured list that lies nearest its condition's
    edge (the one the margin is about); a single value as it is."""
    if not isinstance(value, list):
        return value
    flat: list[Any] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(reversed(item))
        else:
            flat.append(item)
    try:
        cond = claims.Condition.parse(expected)
        return min(flat, key=cond.margin)
    except (ValueError, TypeError):
        return value


def _order(m: Margin) -> tuple[bool, float, str, str]:
    """Failed conditions first, then the thinnest margins; equalities that
    held (no margin to speak of) last."""
    key = math.inf if m.exact else m.margin
    key = -math.inf if math.isnan(key) else key
    return (m.held, key, m.claim, m.condition)


def margins(rows: Iterable[ClaimRow]) -> list[Margin]:
    """Per claim and condition, its worst seed: failed ones first, then the
    thinnest margins; equalities that held last."""
    worst: dict[tuple[str, str], Margin] = {}
    for row in rows:
        for rec in row.records:
            for c in rec.get("conditions") or []:
                value = (rec.get("measured") or {}).get(c["name"])
                m = Margin(
                    row.id,
                    c["name"],
                    _number(c.get("margin")),
                    rec.get("seed"),
                    _worst_value(value, c["expected"]),
                    c["expected"],
                    c.get("held") is True,
                    c.get("kind") or "?",
                )
                key = (row.id, c["name"])
                if key not in worst or _order(m) < _order(worst[key]):
                    worst[key] = m
    return sorted(worst.values(), key=_order)


def controls(rows: Iterable[ClaimRow]) -> list[Controls]:
    """Per claim that ran, each control (and positive control, named
    ``positive: …``) and the seeds for which it passed the claim's test (it
    must pass for none)."""
    out = []
    for row in rows:
        if not row.records:
            continue
        passed_for: dict[str, list[int]] = {}
        for rec in row.records:
            for key, prefix in (
                ("controls", ""),
                ("positive_controls", "positive: "),
            ):
                for name, passed in (rec.get(key) or {}).items():
                    seeds = passed_for.setdefault(prefix + name, [])
                    if passed is not False:
                        seeds.append(rec.get("seed"))
        out.append(Controls(row.id, passed_for))
    return out


def _seeds(seeds: Iterable[Any]) -> str:
    return ", ".join(map(str, seeds))


def report(summary: Summary) -> str:
    """The printed verdict: the pass counts, the margins table, the
    controls, every problem, and one closing line."""
    n = len(summary.seeds)
    width = max([5, *(len(r.id) for r in summary.rows)])
    out = []
    for r in summary.rows:
        if r.status == "not run":
            continue
        if r.status == "pending":
            out.append(f"  {r.id:<{width}}  pending (no notebook yet)")
            continue
        mark = "✓" if r.status == "passed" else "✗"
        line = (
            f"{mark} {r.id:<{width}}  {len(r.passed)}/{n} seeds passed"
            f"  {r.notebook}"
        )
        if r.failed:
            line += f"  failed for seeds {_seeds(r.failed)}"
        if r.missing:
            line += f"  no ledger line for seeds {_seeds(r.missing)}"
        out.append(line)
    if not_run := [r.id for r in summary.rows if r.status == "not run"]:
        out.append(
            f"  not run (their notebooks were not named): {_seeds(not_run)}"
        )

    table = margins(summary.rows)
    if table:
        out += [
            "",
            "margins: per claim and condition, the worst seed, thinnest first"
            " (margin: how far inside its condition the value lay,",
            "relative to the threshold's scale; thin: below "
            f"{THIN:g}; exact: an equality, which has no margin)",
            f"  {'margin':>7}  {'seed':>4}  {'claim':<{width}}  "
            f"{'measured':>10}  {'expected':<16}  {'kind':<10}  condition",
        ]
        for m in table:
            mark = f"  [{m.mark}]" if m.mark else ""
            out.append(
                f"  {m.margin:7.3f}  {m.seed!s:>4}  {m.claim:<{width}}  "
                f"{claims.fmt(m.measured):>10}  {m.expected:<16}  "
                f"{m.kind:<10}  {m.condition}{mark}"
            )
    checked = controls(summary.rows)
    if checked:
        out += ["", "controls: each must fail its claim's test on every seed"]
        for c in checked:
            count = len(c.passed_for)
            line = f"{'✓' if c.ok else '✗'} {c.claim:<{width}}  {count} "
            line += "control" if count == 1 else "controls"
            bad = {k: v for k, v in c.passed_for.items() if v}
            if not count:
                line += ": none recorded"
            elif not bad:
                line += ", every one failed on every seed"
            for name, seeds in bad.items():
                line += f"; {name!r} passed for seeds {_seeds(seeds)}"
            out.append(line)

    out += [f"✗ {p}" for p in summary.problems]
    counts = {
        s: sum(r.status == s for r in summary.rows)
        for s in ("passed", "failed", "pending", "not run")
    }
    thin = sum(m.mark == "thin" for m in table)
    verdict = "passed" if summary.ok else "FAILED"
    out.append(
        f"sweep {verdict}: seeds {' '.join(map(str, summary.seeds))}; "
        + ", ".join(f"{v} {k}" for k, v in counts.items())
        + f"; {thin} thin margin(s)"
        + (f"; {len(summary.problems)} problem(s)" if summary.problems else "")
    )
    return "\n".join(out)


@dataclass(frozen=True)
class Args:
    seeds: list[int]
    targets: list[str]
    ledger: Path | None
    jobs: int


def parse(argv: Sequence[str]) -> Args:
    ap = argparse.ArgumentParser(
        prog="python -m tools.sweep", description=__doc__.split("\n")[0]
    )
    ap.add_argument(
        "items", nargs="*", help="seeds (integers) and notebooks or folders"
    )
    ap.add_argument(
        "--ledger", type=Path, help="default: _build/sweep-ledger.jsonl"
    )
    ap.add_argument(
        "--jobs",
        type=int,
        default=DEFAULT_JOBS,
        help=f"kernels run at once (default {DEFAULT_JOBS})",
    )
    args = ap.parse_args(argv)
    seeds = [int(a) for a in args.items if a.lstrip("-").isdigit()]
    paths = [a for a in args.items if not a.lstrip("-").isdigit()]
    if any(s < 0 for s in seeds):
        ap.error(f"seeds must be >= 0, got {seeds}")
    if args.jobs < 1:
        ap.error(f"--jobs must be >= 1, got {args.jobs}")
    return Args(seeds or list(DEFAULT_SEEDS), paths, args.ledger, args.jobs)


def main(
    argv: Sequence[str] | None = None,
    *,
    runner: nbrun.Runner | None = None,
    root: Path = ROOT,
) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    try:
        paths = nbrun.find_notebooks(root, args.targets)
    except ValueError as err:
        print(f"sweep: {err}", file=sys.stderr)
        return 2
    ledger = args.ledger or root / "_build" / "sweep-ledger.jsonl"
    print(
        f"sweep: {len(paths)} notebook(s) × seeds "
        f"{' '.join(map(str, args.seeds))}, {args.jobs} at a time → {ledger}",
        flush=True,
    )
    jobs = [nbrun.Job(p, s) for p in paths for s in args.seeds]
    runs = nbrun.run_jobs(
        jobs, root, ledger, parallel=args.jobs, runner=runner
    )
    summary = aggregate(
        claims.registry(root / "src" / "livingdict" / "claims.yml"),
        claims.read_ledger(ledger),
        runs,
        args.seeds,
    )
    print(report(summary))
    return 0 if summary.ok else 1


if __name__ == "__main__":
    sys.exit(main())
