"""``make bench``: what each lesson costs a reader, measured against the floor.

Usage: ``python -m tools.bench [--out FILE] [--floor-runs N] [NOTEBOOK_OR_FOLDER ...]``

Runs each notebook (default: every lesson) top to bottom in a fresh kernel, one at a
time (``tools.nbrun.run_jobs``, serial because it measures time), after the *floor* notebook, which only
starts a kernel and imports livingdict, torch, numpy and matplotlib (the cost no lesson
can avoid; it runs ``--floor-runs`` times, default 2, and the fastest counts: the first
run also warms the disk cache for the lessons). Prints a table (notebook, wall s, peak
MB, wall ÷ floor) marking every exceeded budget, writes ``{"floor": {"wall_s",
"peak_rss_mb"}, "notebooks": [{"path", "wall_s", "peak_rss_mb"}, …], "suite_wall_s"}``
to ``_build/bench.json`` (``_build/bench-subset.json`` when notebooks are named), and
exits 1 when a budget is exceeded or a notebook fails; for each notebook over a budget
it names the three slowest cells (and, when the suite is over budget, the suite's eight).

Budgets (issue 13): each notebook ≤ 10 s wall and ≤ 1,024 MB peak RSS; the suite (the
sum of the notebooks' wall times) ≤ 2.5 × (number of notebooks × floor wall). The kernels write
their claim checks to ``_build/bench-ledger.jsonl``, never to the book's ledger, and
use the default seed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools import nbrun
from tools.nbrun import Run

if TYPE_CHECKING:
    import nbformat

ROOT = Path(__file__).resolve().parents[1]
FLOOR_NAME = "(floor: kernel + imports)"
FLOOR_SOURCE = "import matplotlib\nimport matplotlib.pyplot\nimport numpy\nimport torch\n\nimport livingdict"


@dataclass(frozen=True)
class Budgets:
    """The issue's budgets: per notebook wall and memory, and the suite's factor."""

    wall_s: float = 10.0
    rss_mb: float = 1024.0
    suite_factor: float = 2.5

    def suite_wall_s(self, floor_wall_s: float, n_notebooks: int) -> float:
        """``suite_factor × n_notebooks × floor_wall_s``: the whole suite's allowance."""
        return self.suite_factor * n_notebooks * floor_wall_s


def floor_notebook() -> nbformat.NotebookNode:
    """A notebook with one cell that imports what every lesson imports, and nothing else."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [nbformat.v4.new_code_cell(FLOOR_SOURCE)]
    return nb


def suite_wall(runs: Sequence[Run]) -> float:
    """The suite's wall time: the notebooks run one after another, so the sum."""
    return round(sum(r.wall_s for r in runs), 3)


def violations(
    floor: Run, runs: Sequence[Run], budgets: Budgets = Budgets()
) -> dict[str, list[str]]:
    """Every exceeded budget, keyed by notebook path (``"floor"``, ``"suite"`` for those).

    A failed run, a floor that failed or measured no time, or an empty suite is a
    violation too: a benchmark that measured nothing must not pass.
    """
    out: dict[str, list[str]] = {}

    def add(key: str, why: str) -> None:
        out.setdefault(key, []).append(why)

    if not floor.ok:
        add("floor", f"error: {floor.error}")
    if not floor.wall_s > 0:
        add("floor", "measured no wall time")
    if not runs:
        add("suite", "no notebooks were run")
    for r in runs:
        if not r.ok:
            add(r.path, f"error: {r.error}")
        if not r.wall_s <= budgets.wall_s:
            add(r.path, f"wall {r.wall_s:.2f} s > {budgets.wall_s:g} s")
        if not r.peak_rss_mb <= budgets.rss_mb:
            add(r.path, f"peak {r.peak_rss_mb:.1f} MB > {budgets.rss_mb:g} MB")
        if not r.peak_rss_mb > 0:
            add(r.path, "measured no memory")
    allowance = budgets.suite_wall_s(floor.wall_s, len(runs))
    total = suite_wall(runs)
    if runs and not total <= allowance:
        add(
            "suite",
            f"suite {total:.1f} s > {budgets.suite_factor:g} × {len(runs)} × floor"
            f" = {allowance:.1f} s",
        )
    return out


def to_json(floor: Run, runs: Sequence[Run]) -> dict[str, Any]:
    """The issue's schema for ``_build/bench.json``."""
    return {
        "floor": {"wall_s": floor.wall_s, "peak_rss_mb": floor.peak_rss_mb},
        "notebooks": [
            {"path": r.path, "wall_s": r.wall_s, "peak_rss_mb": r.peak_rss_mb}
            for r in runs
        ],
        "suite_wall_s": suite_wall(runs),
    }


def table(
    floor: Run, runs: Sequence[Run], budgets: Budgets = Budgets()
) -> str:
    """The printed report: one row per notebook, ``✗`` and the reason on every violation."""
    from tabulate import tabulate

    bad = violations(floor, runs, budgets)
    allowance = budgets.suite_wall_s(floor.wall_s, len(runs))
    suite = f"suite ({len(runs)} notebooks, budget {allowance:.1f} s)"
    rows = [(FLOOR_NAME, "floor", floor.wall_s, floor.peak_rss_mb, 1)]
    rows += [(r.path, r.path, r.wall_s, r.peak_rss_mb, 1) for r in runs]
    rows.append((suite, "suite", suite_wall(runs), None, len(runs)))
    body = [  # the suite's wall÷floor is per notebook
        (
            "✗" if key in bad else "✓",
            name,
            wall,
            peak,
            wall / (n * floor.wall_s) if floor.wall_s > 0 and n else None,
            "; ".join(bad.get(key, [])),
        )
        for name, key, wall, peak, n in rows
    ]
    head = ["", "notebook", "wall s", "peak MB", "wall÷floor", ""]
    fmt = ("", "", ".2f", ".0f", ".2f", "")
    text = tabulate(body, head, "plain", floatfmt=fmt, missingval="—")
    return (
        f"{text}\nbudgets: ≤ {budgets.wall_s:g} s and ≤ {budgets.rss_mb:g} MB "
        f"per notebook; suite ≤ {budgets.suite_factor:g} × n × floor (its "
        "wall÷floor is per notebook)"
    )


def _run_floor(env: dict[str, str]) -> Run:
    return nbrun.execute(floor_notebook(), name=FLOOR_NAME, cwd=ROOT, env=env)


def main(
    argv: Sequence[str] | None = None,
    *,
    runner: nbrun.Runner | None = None,
    run_floor: Callable[[dict[str, str]], Run] = _run_floor,
    root: Path = ROOT,
) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m tools.bench", description=__doc__.split("\n")[0]
    )
    ap.add_argument(
        "paths", nargs="*", help="notebooks or folders (default: notebooks/)"
    )
    ap.add_argument("--out", type=Path, help="where to write the JSON report")
    ap.add_argument(
        "--floor-runs",
        type=int,
        default=2,
        help="floor repetitions; fastest counts",
    )
    args = ap.parse_args(argv)
    try:
        paths = nbrun.find_notebooks(root, args.paths)
    except ValueError as err:
        ap.error(str(err))
    out = args.out or root / "_build" / (
        "bench-subset.json" if args.paths else "bench.json"
    )
    ledger = root / "_build" / "bench-ledger.jsonl"
    ledger.parent.mkdir(parents=True, exist_ok=True)
    ledger.write_text("")

    floors = []
    for _ in range(max(1, args.floor_runs)):
        floors.append(run_floor({"LIVINGDICT_LEDGER": str(ledger)}))
        print(
            f"  floor: {floors[-1].wall_s:.2f} s, "
            f"{floors[-1].peak_rss_mb:.0f} MB",
            flush=True,
        )
    floor = min(floors, key=lambda r: (not r.ok, r.wall_s))
    jobs = [nbrun.Job(p) for p in paths]  # the default seed, whatever $SEED
    runs = nbrun.run_jobs(jobs, root, ledger, runner=runner)

    print()
    print(table(floor, runs))
    bad = violations(floor, runs)
    if "suite" in bad:
        cells = [(t, r.path, i, h) for r in runs for i, t, h in r.cells]
        print("  slowest cells of the suite:")
        for t, path, i, h in sorted(cells, key=lambda c: -c[0])[:8]:
            print(f"    {t:6.2f} s  {path} #{i} `{h}`")
    for r in runs:
        if r.path in bad and r.cells:
            slow = sorted(r.cells, key=lambda c: -c[1])[:3]
            print(
                f"  slowest cells of {r.path}: "
                + "; ".join(f"#{i} {t:.1f} s `{h}`" for i, t, h in slow)
            )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(to_json(floor, runs), indent=2) + "\n", encoding="utf-8"
    )
    print(f"wrote {out}")
    if bad:
        print(
            f"bench: FAILED ({sum(len(v) for v in bad.values())} budget(s) exceeded or errors)"
        )
        return 1
    print("bench: every budget met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
