"""Run lessons in fresh kernels and judge them: make bench, make sweep.

``bench [NOTEBOOK_OR_FOLDER ...]``: each lesson once, one at a time, against
the budgets, in floors (the floor: a notebook that only imports, timed in
the same run): each lesson ``WALL_FLOORS`` floors and ``RSS_MB``, the suite
``SUITE_FACTOR`` x n floors; ``_build/bench.json``.
``sweep [SEED ...] [NOTEBOOK_OR_FOLDER ...] [--ledger F] [--jobs N]``: each
lesson once per seed, every claim must pass for every seed and every control
fail; the margins table shows each condition's worst seed.

nbclient runs each kernel in a child process of its own, which waits for it
and reads its peak memory (``RUSAGE_CHILDREN``: a spike between cells
counts); the child imports no torch, whose pages would count.
"""

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from subprocess import DEVNULL
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
#: ru_maxrss is in KiB on Linux, in bytes on macOS
RU_MAXRSS_MB = 1 / 1024 if sys.platform != "darwin" else 1 / 1024**2


@dataclass(frozen=True)
class Run:
    """One execution; ``cells``: (index, seconds, first line) of each code
    cell that ran."""

    path: str
    wall_s: float
    peak_rss_mb: float
    error: str | None = None
    seed: int | None = None
    cells: tuple[tuple[int, float, str], ...] = ()

    @property
    def ok(self) -> bool:
        return self.error is None


Runner = Callable[[Path, dict[str, str]], Run]  # a notebook file, its env
Job = tuple[Path, int | None]  # a notebook, its seed (None: its default)


def find_notebooks(
    root: Path, targets: Iterable[str | Path] = ()
) -> list[Path]:
    """The lessons (``claims.notebooks``), or those under the given folders,
    plus the given notebook files, sorted; ``ValueError`` for a target that
    is neither."""
    from livingdict import claims

    lessons = [p.resolve() for p in claims.notebooks(Path(root).resolve())]
    found: set[Path] = set()
    for t in targets:
        p = Path(t).resolve()
        under = [q for q in lessons if p in q.parents]
        if p.is_file() and p.suffix == ".ipynb" or under:
            found.update(under or [p])
        else:
            raise ValueError(f"not a notebook or a folder of lessons: {t}")
    return sorted(found) if targets else lessons


def rel_name(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` (posix)."""
    path, root = Path(path).resolve(), Path(root).resolve()
    return Path(os.path.relpath(path, root)).as_posix()


def _child(src: str, cwd: str, out: str) -> None:
    """In the child process: execute the notebook ``src`` in ``cwd``, write
    it back with its outputs, and the run's numbers to ``out``."""
    from datetime import datetime

    import nbclient
    import nbformat
    from nbclient.exceptions import CellExecutionError

    nb, error = nbformat.read(src, as_version=4), None
    t0 = time.perf_counter()
    try:  # nbclient records each cell's timing in its metadata
        nbclient.execute(nb, cwd=cwd, timeout=600)
    except CellExecutionError as err:  # formatted once the cells are known
        error = err
    except Exception as err:  # the kernel did not start, died or timed out
        lines = str(err).strip().splitlines() or [""]
        error = f"{type(err).__name__}: {lines[-1]}"
    wall, cells, parse = time.perf_counter() - t0, [], datetime.fromisoformat
    for i, c in enumerate(nb.cells):
        t = c.metadata.get("execution")
        if c.cell_type != "code" or t is None:
            continue
        busy, done = t.get("iopub.status.busy"), t.get("shell.execute_reply")
        s = (parse(done) - parse(busy)).total_seconds() if busy and done else 0
        head = next((ln for ln in c.source.splitlines() if ln.strip()), "")
        cells.append((i, round(s, 3), head[:60]))
    if isinstance(error, CellExecutionError):  # the last cell that ran
        error = f"cell {cells[-1][0]}: {error.ename}: {error.evalue}"
    nbformat.write(nb, src)
    # this process waited for the kernel alone: its mark is the kernel's
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    peak, wall = round(peak * RU_MAXRSS_MB, 1), round(wall, 3)
    run = {"wall_s": wall, "peak_rss_mb": peak, "error": error, "cells": cells}
    Path(out).write_text(json.dumps(run))


def execute(
    nb: Any,
    *,
    name: str,
    cwd: Path,
    env: Mapping[str, str] | None = None,
) -> Run:
    """Execute the notebook node ``nb`` (its outputs filled in) in a fresh
    kernel started in ``cwd``, with the caller's environment and ``env``
    (without ``MPLBACKEND``: a kernel started with it draws nothing on the
    page). A failure is ``Run.error`` (with the kernel's last lines on
    stderr), never raised."""
    import nbformat

    env = dict(os.environ, **(env or {}))
    env.pop("MPLBACKEND", None)
    with tempfile.TemporaryDirectory(prefix="nbrun-") as tmp:
        src, out, log = (Path(tmp, n) for n in ("nb.ipynb", "run.json", "err"))
        nbformat.write(nb, src)
        cmd = [sys.executable, "-m", "tools.nbrun", "child", src, cwd, out]
        with log.open("w") as f:
            child = subprocess.run(
                cmd, cwd=ROOT, env=env, stdout=DEVNULL, stderr=f
            )
        tail = log.read_text().splitlines()
        tail = [line for line in tail if "encryption" not in line]
        if out.is_file():
            run = Run(name, **json.loads(out.read_text()))
            nb.cells[:] = nbformat.read(src, as_version=4).cells
        else:  # the child died before it could write
            run = Run(name, 0, 0, f"the runner exited with {child.returncode}")
    if run.error and tail:
        tail = "\n    kernel stderr: " + "\n    ".join(tail[-5:])
        run = replace(run, error=run.error + tail)
    return run


def run_jobs(
    jobs: Sequence[Job],
    root: Path,
    ledger: Path,
    *,
    parallel: int = 1,
    runner: Runner | None = None,
) -> list[Run]:
    """Run the jobs, ``parallel`` at a time, each kernel with its seed
    (``LIVINGDICT_SEED``, empty for the default), its name
    (``LIVINGDICT_NOTEBOOK``) and a ledger of its own; then rewrite
    ``ledger`` with theirs in the jobs' order, as a serial run would."""
    import nbformat

    def run_file(path: Path, env: dict[str, str]) -> Run:
        nb = nbformat.read(path, as_version=4)
        return execute(nb, name=rel_name(path, root), cwd=path.parent, env=env)

    runner = runner or run_file
    with tempfile.TemporaryDirectory(prefix="nbrun-") as tmp:
        ledgers = [Path(tmp, f"{i}.jsonl") for i in range(len(jobs))]

        def one(i: int) -> Run:
            path, seed = jobs[i]
            env = {
                "LIVINGDICT_SEED": "" if seed is None else str(seed),
                "LIVINGDICT_NOTEBOOK": rel_name(path, root)[: -len(".ipynb")],
                "LIVINGDICT_LEDGER": str(ledgers[i]),
            }
            r = replace(runner(path, env), seed=seed)
            status = "ok" if r.ok else f"FAILED: {r.error}"
            print(
                f"  {r.path}{'' if seed is None else f' seed {seed}'}: "
                f"{r.wall_s:.2f} s, {r.peak_rss_mb:.0f} MB, {status}",
                flush=True,
            )
            return r

        with ThreadPoolExecutor(max(1, parallel)) as pool:
            runs = list(pool.map(one, range(len(jobs))))
        Path(ledger).parent.mkdir(parents=True, exist_ok=True)
        parts = [p.read_text("utf-8") for p in ledgers if p.exists()]
        Path(ledger).write_text("".join(parts), encoding="utf-8")
    return runs


# ------------------------------------------------------------------ bench
FLOOR_NAME = "(floor: kernel + imports)"
FLOOR_SOURCE = (  # what every lesson imports, and nothing else
    "import matplotlib\nimport matplotlib.pyplot\nimport numpy\nimport torch"
    "\n\nimport livingdict"
)
# a lesson: 5 floors (DEVELOPERS.md). The suite: make test runs it on two
# kernels within its 150 floors, beside install, build and browser; 3 floors
# a lesson on average leaves it about 45 of them.
WALL_FLOORS, RSS_MB, SUITE_FACTOR = 5.0, 1024.0, 3.0


def suite_wall(runs: Sequence[Run]) -> float:
    return round(sum(r.wall_s for r in runs), 3)


def violations(floor: Run, runs: Sequence[Run]) -> dict[str, list[str]]:
    """Every exceeded budget by notebook path (``floor``, ``suite`` for
    those); a failure or a run that measured nothing is one too."""
    out: dict[str, list[str]] = {}

    def add(key: str, bad: bool, why: str) -> None:
        if bad:
            out.setdefault(key, []).append(why)

    add("floor", not floor.ok, f"error: {floor.error}")
    add("floor", not floor.wall_s > 0, "measured no wall time")
    add("suite", not runs, "no notebooks were run")
    budget = WALL_FLOORS * floor.wall_s
    allowed = f"{WALL_FLOORS:g} × floor = {budget:.2f} s"
    for r in runs:
        wall, peak = f"wall {r.wall_s:.2f} s", f"peak {r.peak_rss_mb:.1f} MB"
        add(r.path, not r.ok, f"error: {r.error}")
        add(r.path, not r.wall_s <= budget, f"{wall} > {allowed}")
        add(r.path, not r.peak_rss_mb <= RSS_MB, f"{peak} > {RSS_MB:g} MB")
        add(r.path, not r.peak_rss_mb > 0, "measured no memory")
    total, n = suite_wall(runs), len(runs)
    allowance = SUITE_FACTOR * n * floor.wall_s
    why = f"suite {total:.1f} s > {SUITE_FACTOR:g} × {n} × floor = "
    add("suite", n > 0 and not total <= allowance, f"{why}{allowance:.1f} s")
    return out


def table(floor: Run, runs: Sequence[Run]) -> str:
    """One row per notebook, ``✗`` and the reasons on every violation; the
    suite's wall÷floor is per notebook."""
    from tabulate import tabulate

    bad, n = violations(floor, runs), len(runs)
    allowance = SUITE_FACTOR * n * floor.wall_s
    suite = f"suite ({n} notebooks, budget {allowance:.1f} s)"
    rows = [(FLOOR_NAME, "floor", floor.wall_s, floor.peak_rss_mb, 1)]
    rows += [(r.path, r.path, r.wall_s, r.peak_rss_mb, 1) for r in runs]
    rows.append((suite, "suite", suite_wall(runs), None, n))
    body = []
    for name, key, wall, peak, k in rows:
        ratio = wall / (k * floor.wall_s) if floor.wall_s > 0 and k else None
        why = "; ".join(bad.get(key, []))
        body.append(("✗" if why else "✓", name, wall, peak, ratio, why))
    head = ["", "notebook", "wall s", "peak MB", "wall÷floor", ""]
    fmt = ("", "", ".2f", ".0f", ".2f", "")
    text = tabulate(body, head, "plain", floatfmt=fmt, missingval="—")
    return (
        f"{text}\nbudgets: ≤ {WALL_FLOORS:g} × floor and ≤ {RSS_MB:g} MB per"
        f" notebook; suite ≤ {SUITE_FACTOR:g} × n × floor (its wall÷floor is"
        " per notebook)"
    )


def _run_floor(env: dict[str, str]) -> Run:
    from nbformat.v4 import new_code_cell, new_notebook

    nb = new_notebook(cells=[new_code_cell(FLOOR_SOURCE)])
    return execute(nb, name=FLOOR_NAME, cwd=ROOT, env=env)


def bench(
    argv: Sequence[str] = (),
    *,
    runner: Runner | None = None,
    run_floor: Callable[[dict[str, str]], Run] = _run_floor,
    root: Path = ROOT,
) -> int:
    """``make bench``: the kernels write their checks to
    ``_build/bench-ledger.jsonl``, never to the book's ledger."""
    paths = find_notebooks(root, argv)
    ledger = root / "_build" / "bench-ledger.jsonl"
    floors = []
    for _ in range(2):  # the first run also warms the disk cache
        floors.append(f := run_floor({"LIVINGDICT_LEDGER": str(ledger)}))
        print(f"  floor: {f.wall_s:.2f} s, {f.peak_rss_mb:.0f} MB", flush=True)
    floor = min(floors, key=lambda r: (not r.ok, r.wall_s))
    runs = run_jobs([(p, None) for p in paths], root, ledger, runner=runner)
    print(f"\n{table(floor, runs)}")
    bad = violations(floor, runs)
    if "suite" in bad:
        cells = [(t, r.path, i, h) for r in runs for i, t, h in r.cells]
        print("  slowest cells of the suite:")
        for t, path, i, h in sorted(cells, key=lambda c: -c[0])[:8]:
            print(f"    {t:6.2f} s  {path} #{i} `{h}`")
    for r in runs:
        if r.path in bad and r.cells:
            slow = sorted(r.cells, key=lambda c: -c[1])[:3]
            cells = "; ".join(f"#{i} {t:.1f} s `{h}`" for i, t, h in slow)
            print(f"  slowest cells of {r.path}: {cells}")
    out = root / "_build" / ("bench-subset.json" if argv else "bench.json")
    numbers = lambda r: {"wall_s": r.wall_s, "peak_rss_mb": r.peak_rss_mb}
    data = {
        "floor": numbers(floor),
        "notebooks": [{"path": r.path, **numbers(r)} for r in runs],
        "suite_wall_s": suite_wall(runs),
    }
    out.write_text(json.dumps(data, indent=2) + "\n")
    print(f"wrote {out}")
    if bad:
        n = sum(len(v) for v in bad.values())
        print(f"bench: FAILED ({n} budget(s) exceeded or errors)")
        return 1
    print("bench: every budget met")
    return 0


# ------------------------------------------------------------------ sweep
#: a margin below this (a tenth of the threshold's scale) is thin
THIN = 0.1
MARGIN_HEAD = ("margin", "seed", "claim", "measured", "expected", "kind")
MARGIN_HEAD += ("condition", "")
ALIGN = ("right", "right", "left", "right")  # the margins table's numbers
#: a ledger line's controls, and how the sweep names them
CONTROLS = {"controls": "", "positive_controls": "positive: "}


@dataclass
class ClaimRow:
    """The sweep's verdict on one claim, and the ledger lines behind it."""

    id: str
    notebook: str | None
    status: str  # passed | failed | pending | not run
    passed: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    missing: list[int] = field(default_factory=list)
    records: list[Mapping[str, Any]] = field(default_factory=list)
    #: the seeds for which each control (``positive: …`` a positive one)
    #: passed the claim's test: it must pass for none
    controls: dict[str, list[int]] = field(default_factory=dict)


@dataclass(frozen=True)
class Margin:
    """The worst seed of one condition of one claim: the condition as the
    ledger stores it (``conditions.evaluate``; ``worst``: the value nearest
    its edge)."""

    claim: str
    seed: int | None
    name: str
    expected: str
    kind: str  # identity | experiment
    held: bool
    margin: float
    worst: Any

    def __post_init__(self) -> None:  # JSON stores an infinite margin as text
        object.__setattr__(self, "margin", float(self.margin))

    @property
    def mark(self) -> str:
        if not self.held:
            return "✗ failed"
        if self.expected.startswith("=="):
            return "exact"  # an equality that held has no distance
        return "thin" if self.margin < THIN else ""

    def order(self) -> tuple[bool, float, str, str]:
        """Failed first, then the thinnest; equalities that held last."""
        key = math.inf if self.mark == "exact" else self.margin
        return (self.held, key, self.claim, self.name)


@dataclass
class Summary:
    seeds: list[int]
    rows: list[ClaimRow]
    problems: list[str]
    ok: bool  # no problem, no claim failed


def aggregate(
    registry: Mapping[str, Mapping[str, Any]],
    records: Iterable[Mapping[str, Any]],
    runs: Sequence[Run],
    seeds: Sequence[int],
) -> Summary:
    """One verdict per registered claim: its line for a seed is the one its
    registered notebook wrote in that seed's run."""
    seeds, problems = list(seeds), []
    ran = {(r.path.removesuffix(".ipynb"), r.seed) for r in runs}
    for r in runs:
        if not r.ok:
            problems.append(f"{r.path} (seed {r.seed}) raised: {r.error}")
    notebooks = {nb for nb, _ in ran}
    for nb, s in sorted({(nb, s) for nb in notebooks for s in seeds} - ran):
        problems.append(f"{nb} was not run for seed {s}")
    lines: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
    for rec in records:
        key = (rec.get("notebook"), rec.get("seed"))
        if key in ran:
            lines.setdefault((rec.get("id"), *key), []).append(rec)
        else:
            problems.append(
                f"{rec.get('id')}: ledger line for notebook {key[0]} seed "
                f"{key[1]} matches no run (does the notebook call "
                "livingdict.setup() and honour LIVINGDICT_SEED?)"
            )
    rows = []
    for cid, entry in registry.items():
        nb = entry.get("notebook")  # None: being written, not a failure
        rows.append(row := ClaimRow(cid, nb, "not run" if nb else "pending"))
        if nb not in notebooks:
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
            for rec, key in ((r, k) for r in mine for k in CONTROLS):
                for name, passed in (rec.get(key) or {}).items():
                    name = CONTROLS[key] + name
                    passed_for = row.controls.setdefault(name, [])
                    passed_for += [] if passed is False else [s]
        row.status = "passed" if seeds and row.passed == seeds else "failed"
    ok = not problems and all(r.status != "failed" for r in rows)
    return Summary(seeds, rows, problems, ok)


def margins(rows: Iterable[ClaimRow]) -> list[Margin]:
    """Per claim and condition, its worst seed, in ``Margin.order``."""
    worst: dict[tuple[str, str], Margin] = {}
    for row in rows:
        for rec in row.records:
            for c in rec.get("conditions") or []:
                m = Margin(row.id, rec.get("seed"), **c)
                key = (row.id, c["name"])
                if key not in worst or m.order() < worst[key].order():
                    worst[key] = m
    return sorted(worst.values(), key=Margin.order)


def _seeds(seeds: Iterable[Any]) -> str:
    return ", ".join(map(str, seeds))


def report(summary: Summary) -> str:
    """The pass counts, the margins table, the controls, the problems, and
    one closing line."""
    from tabulate import tabulate

    from livingdict.claims import fmt

    w = max([5, *(len(r.id) for r in summary.rows)])
    out = []
    for r in summary.rows:
        if r.status == "pending":
            out.append(f"  {r.id:<{w}}  pending (no notebook yet)")
        elif r.status != "not run":
            mark = "✓" if r.status == "passed" else "✗"
            n = f"{len(r.passed)}/{len(summary.seeds)}"
            line = f"{mark} {r.id:<{w}}  {n} seeds passed  {r.notebook}"
            if r.failed:
                line += f"  failed for seeds {_seeds(r.failed)}"
            if r.missing:
                line += f"  no ledger line for seeds {_seeds(r.missing)}"
            out.append(line)
    if not_run := [r.id for r in summary.rows if r.status == "not run"]:
        out.append(
            f"  not run (their notebooks were not named): {_seeds(not_run)}"
        )
    if table := margins(summary.rows):
        body = [
            (f"{m.margin:.3f}", m.seed, m.claim, fmt(m.worst), m.expected)
            + (m.kind, m.name, m.mark and f"[{m.mark}]")
            for m in table
        ]
        out += [
            "",
            "margins: per claim and condition, the worst seed, thinnest first"
            " (margin: how far inside its condition the value lay,",
            f"relative to the threshold's scale; thin: below {THIN:g}; exact:"
            " an equality, which has no margin)",
            tabulate(body, MARGIN_HEAD, disable_numparse=True, colalign=ALIGN),
        ]
    ran = [r for r in summary.rows if r.records]
    if ran:
        out += ["", "controls: each must fail its claim's test on every seed"]
    for r in ran:
        n, bad = len(r.controls), {k: v for k, v in r.controls.items() if v}
        line = f"{'✗' if bad or not n else '✓'} {r.id:<{w}}  {n} control"
        line += "" if n == 1 else "s"
        if not n:
            line += ": none recorded"
        elif not bad:
            line += ", every one failed on every seed"
        for name, seeds in bad.items():
            line += f"; {name!r} passed for seeds {_seeds(seeds)}"
        out.append(line)
    out += [f"✗ {p}" for p in summary.problems]
    statuses = ("passed", "failed", "pending", "not run")
    counts = ", ".join(
        f"{sum(r.status == s for r in summary.rows)} {s}" for s in statuses
    )
    thin = sum(m.mark == "thin" for m in table)
    problems = len(summary.problems)
    out.append(
        f"sweep {'passed' if summary.ok else 'FAILED'}: seeds "
        f"{' '.join(map(str, summary.seeds))}; {counts}; {thin} thin "
        f"margin(s)" + (f"; {problems} problem(s)" if problems else "")
    )
    return "\n".join(out)


def parse_sweep(argv: Sequence[str]) -> argparse.Namespace:
    """Integers are seeds (default 0-19), anything else notebooks or
    folders (default every lesson)."""
    ap = argparse.ArgumentParser(prog="python -m tools.nbrun sweep")
    ap.add_argument("items", nargs="*", help="seeds, notebooks or folders")
    ap.add_argument(
        "--ledger", type=Path, help="default: _build/sweep-ledger.jsonl"
    )
    ap.add_argument("--jobs", type=int, default=2, help="kernels at once")
    args = ap.parse_args(argv)
    args.seeds = [int(a) for a in args.items if a.lstrip("-").isdigit()]
    args.targets = [a for a in args.items if not a.lstrip("-").isdigit()]
    if any(s < 0 for s in args.seeds) or args.jobs < 1:
        ap.error(f"seeds and --jobs must be >= 0 and >= 1, got {args.items}")
    args.seeds = args.seeds or list(range(20))
    return args


def sweep(
    argv: Sequence[str] = (),
    *,
    runner: Runner | None = None,
    root: Path = ROOT,
) -> int:
    """``make sweep``."""
    from livingdict import claims

    args = parse_sweep(argv)
    paths = find_notebooks(root, args.targets)
    ledger = args.ledger or root / "_build" / "sweep-ledger.jsonl"
    seeds = " ".join(map(str, args.seeds))
    print(
        f"sweep: {len(paths)} notebook(s) × seeds {seeds}, {args.jobs} at a"
        f" time → {ledger}",
        flush=True,
    )
    jobs = [(p, s) for p in paths for s in args.seeds]
    runs = run_jobs(jobs, root, ledger, parallel=args.jobs, runner=runner)
    registry = claims.registry(root / "src" / "livingdict" / "claims.yml")
    summary = aggregate(registry, claims.read_ledger(ledger), runs, args.seeds)
    print(report(summary))
    return 0 if summary.ok else 1


if __name__ == "__main__":
    command, *rest = sys.argv[1:] or ["help"]
    if command == "child":  # the process that ``execute`` starts
        _child(*rest)
    elif command in ("bench", "sweep"):
        try:
            sys.exit({"bench": bench, "sweep": sweep}[command](rest))
        except ValueError as err:  # a target that is no lesson
            sys.exit(f"{command}: {err}")
    else:
        sys.exit(__doc__)
