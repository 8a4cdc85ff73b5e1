"""Run a notebook the way a reader's Jupyter does, and measure what it costs.

``execute(nb, cwd=..., env=...)`` starts a fresh kernel (the notebook's kernelspec) in
the notebook's folder, runs every code cell top to bottom with nbclient and returns a
:class:`Run`: the wall time from the kernel's launch to the end of the last cell, and
the peak resident memory (RSS) of the kernel process with its children. A thread polls
``psutil`` every ``POLL_S`` seconds for ``rss(kernel) + Σ rss(children)``; on Linux the
kernel's own high-water mark (``VmHWM`` in ``/proc/<pid>/status``) is read before the
kernel shuts down, so a spike between two polls (or during the kernel's start, before
its pid is known) still counts. The peak is the larger of the two.

The kernel's environment is the caller's minus ``MPLBACKEND`` (the Makefile exports
``Agg`` for scripts; a reader's kernel uses the inline backend, which renders every
figure to PNG, and that work belongs in the measurement) plus ``env``.

``run_jobs(jobs, root, ledger, parallel=N)`` is the skeleton ``tools.bench`` (serial:
it measures time) and ``tools.sweep`` (two kernels at once) share: it runs a list of
(notebook, seed, env) jobs, each kernel with its seed, its name and a ledger of its
own, and joins the ledgers in the jobs' order. ``find_notebooks`` selects the lessons
(``livingdict.claims.notebooks``) by file or folder.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import psutil

from livingdict import claims

if TYPE_CHECKING:  # imported when a kernel runs: nbformat costs ~2 s of CPU
    import nbformat
    from nbclient import NotebookClient

MB = 1024 * 1024
POLL_S = 0.02
CELL_TIMEOUT_S = 600
#: Variables a reader's kernel does not have; dropped from the kernel's environment.
DROPPED_ENV = ("MPLBACKEND",)


@dataclass(frozen=True)
class Run:
    """One execution: ``path`` is the notebook relative to the root, with ``.ipynb``."""

    path: str
    wall_s: float
    peak_rss_mb: float
    error: str | None = None
    seed: int | None = None
    #: (cell index, seconds, first source line) of every code cell that ran, in order
    cells: tuple[tuple[int, float, str], ...] = ()

    @property
    def ok(self) -> bool:
        return self.error is None


def find_notebooks(
    root: Path, targets: Iterable[str | Path] = ()
) -> list[Path]:
    """The notebooks to run, sorted: the book's lessons (``claims.notebooks``),
    or those of them under the given folders, plus the given notebook files.
    Raises ``ValueError`` for a target that is neither a notebook nor a folder
    holding a lesson."""
    root = Path(root).resolve()
    lessons = [p.resolve() for p in claims.notebooks(root)]
    if not targets:
        return lessons
    found: set[Path] = set()
    for t in targets:
        p = Path(t)
        p = (p if p.is_absolute() else Path.cwd() / p).resolve()
        if p.is_file() and p.suffix == ".ipynb":
            found.add(p)
        elif p.is_dir() and (under := [q for q in lessons if p in q.parents]):
            found.update(under)
        else:
            raise ValueError(f"not a notebook or a folder of lessons: {t}")
    return sorted(found)


def rel_name(path: Path, root: Path) -> str:
    """``notebooks/0N_x/01_y.ipynb`` relative to ``root`` (posix), or the absolute path."""
    path, root = Path(path).resolve(), Path(root).resolve()
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def kernel_env(
    extra: Mapping[str, str] | None = None, drop: Iterable[str] = ()
) -> dict[str, str]:
    """The caller's environment without ``DROPPED_ENV`` and ``drop``, updated with ``extra``."""
    env = {
        k: v for k, v in os.environ.items() if k not in (*DROPPED_ENV, *drop)
    }
    env.update(extra or {})
    return env


def _hwm_mb(pid: int) -> float:
    """The process's peak RSS so far (Linux ``VmHWM``), 0 where unavailable."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024 / MB
    except (OSError, ValueError, IndexError):
        pass
    return 0.0


def tree_rss_mb(pid: int) -> float:
    """Current RSS of process ``pid`` plus all its descendants, in MB (0 if gone)."""
    try:
        proc = psutil.Process(pid)
        procs = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return 0.0
    total = 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total / MB


class PeakRss(threading.Thread):
    """Polls ``tree_rss_mb(pid)`` until ``stop()``, which returns the peak in MB."""

    def __init__(self, pid: int, interval: float | None = None) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval = pid, POLL_S if interval is None else interval
        self.peak = 0.0
        self.samples = 0
        self._halt = threading.Event()

    def run(self) -> None:
        while True:
            self.peak = max(self.peak, tree_rss_mb(self.pid))
            self.samples += 1
            if self._halt.wait(self.interval):
                return

    def stop(self) -> float:
        self._halt.set()
        self.join()
        return self.peak


def _describe(err: BaseException) -> str:
    from nbclient.exceptions import CellExecutionError

    if isinstance(err, CellExecutionError):
        return f"{err.ename}: {err.evalue}"
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[-1] if text else ''}"


async def _execute(
    client: NotebookClient, env: dict[str, str], stderr, cells: list
) -> tuple[float, float, str]:
    """Run all cells, appending each code cell's timing to ``cells``; return (wall
    seconds, peak MB, error text or '')."""
    t0 = time.perf_counter()
    wall, peak, error = 0.0, 0.0, ""
    monitor: PeakRss | None = None
    try:
        async with client.async_setup_kernel(env=env, stderr=stderr):
            pid = client.km.provisioner.process.pid
            monitor = PeakRss(pid)
            monitor.start()
            try:
                for index, cell in enumerate(client.nb.cells):
                    c0 = time.perf_counter()
                    await client.async_execute_cell(
                        cell,
                        index,
                        execution_count=client.code_cells_executed + 1,
                    )
                    if cell.cell_type == "code":
                        head = next(
                            (
                                ln
                                for ln in cell.source.splitlines()
                                if ln.strip()
                            ),
                            "",
                        )
                        cells.append(
                            (
                                index,
                                round(time.perf_counter() - c0, 3),
                                head[:60],
                            )
                        )
            except (
                Exception
            ) as err:  # the notebook failed: report it, keep the numbers
                error = f"cell {index}: {_describe(err)}"
            wall = time.perf_counter() - t0
            peak = max(monitor.stop(), _hwm_mb(pid))
    except Exception as err:  # the kernel did not start or died
        wall = wall or time.perf_counter() - t0
        if monitor is not None and monitor.is_alive():
            peak = monitor.stop()
        error = error or _describe(err)
    return wall, peak, error


def execute(
    nb: nbformat.NotebookNode,
    *,
    name: str,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    timeout: int = CELL_TIMEOUT_S,
    seed: int | None = None,
) -> Run:
    """Execute ``nb`` in a fresh kernel started in ``cwd`` with ``kernel_env(env)``.

    Never raises for a failing notebook: the failure is ``Run.error`` (the cell index and
    the exception), with the time and memory it used until then. Kernel messages on the
    process's own stderr are appended to the error when the run fails.
    """
    from nbclient import NotebookClient

    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name=nb.metadata.get("kernelspec", {}).get("name", "python3"),
        resources={"metadata": {"path": str(cwd)}},
    )
    with tempfile.TemporaryFile("w+") as log:
        cells: list[tuple[int, float, str]] = []
        wall, peak, error = asyncio.run(
            _execute(client, kernel_env(env), log, cells)
        )
        if error:
            log.seek(0)
            tail = [
                ln
                for ln in log.read().splitlines()
                if "without encryption" not in ln
            ]
            if tail:
                error += "\n    kernel stderr: " + "\n    ".join(tail[-5:])
    return Run(
        name, round(wall, 3), round(peak, 1), error or None, seed, tuple(cells)
    )


def run_file(
    path: Path,
    root: Path,
    env: Mapping[str, str] | None = None,
    *,
    seed: int | None = None,
) -> Run:
    """Execute the notebook file ``path`` (in its folder) and name it relative to ``root``."""
    import nbformat

    path = Path(path).resolve()
    nb = nbformat.read(path, as_version=4)
    return execute(
        nb, name=rel_name(path, root), cwd=path.parent, env=env, seed=seed
    )


@dataclass(frozen=True)
class Job:
    """One notebook to run, with its seed (``None``: the lesson's default) and
    extra kernel environment."""

    path: Path
    seed: int | None = None
    env: Mapping[str, str] = field(default_factory=dict)


#: Runs one notebook file with an environment: ``run_file`` bound to a root.
Runner = Callable[[Path, dict[str, str]], Run]


def run_jobs(
    jobs: Sequence[Job],
    root: Path,
    ledger: Path,
    *,
    parallel: int = 1,
    runner: Runner | None = None,
    out: TextIO | None = None,
) -> list[Run]:
    """Run every job in a fresh kernel, ``parallel`` at a time; return their
    runs in the jobs' order (``Run.seed`` is the job's seed).

    Each kernel gets ``LIVINGDICT_SEED`` (the job's seed, or empty: the
    lesson's default), ``LIVINGDICT_NOTEBOOK`` (its path relative to ``root``,
    without ``.ipynb``), a ledger of its own, then the job's ``env``. When all
    have run, ``ledger`` is rewritten with their ledgers in the jobs' order, so
    that a parallel run writes what a serial one would. A line is printed to
    ``out`` (default stdout) as each job ends.
    """
    root, out = Path(root), out or sys.stdout
    if runner is None:

        def runner(path: Path, env: dict[str, str]) -> Run:
            return run_file(path, root, env)

    runs: list[Run | None] = [None] * len(jobs)
    with tempfile.TemporaryDirectory(prefix="nbrun-") as tmp:
        ledgers = [Path(tmp) / f"{i}.jsonl" for i in range(len(jobs))]

        def one(i: int) -> Run:
            job = jobs[i]
            env = {
                "LIVINGDICT_SEED": "" if job.seed is None else str(job.seed),
                "LIVINGDICT_NOTEBOOK": rel_name(job.path, root).removesuffix(
                    ".ipynb"
                ),
                "LIVINGDICT_LEDGER": str(ledgers[i]),
                **job.env,
            }
            return dataclasses.replace(runner(job.path, env), seed=job.seed)

        with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
            futures = {pool.submit(one, i): i for i in range(len(jobs))}
            for future in as_completed(futures):
                r = runs[futures[future]] = future.result()
                seed = "" if r.seed is None else f" seed {r.seed}"
                status = "ok" if r.ok else f"FAILED: {r.error}"
                print(
                    f"  {r.path}{seed}: {r.wall_s:.2f} s, "
                    f"{r.peak_rss_mb:.0f} MB, {status}",
                    file=out,
                    flush=True,
                )
        ledger = Path(ledger)
        ledger.parent.mkdir(parents=True, exist_ok=True)
        with ledger.open("w", encoding="utf-8") as f:
            for part in ledgers:
                if part.exists():
                    f.write(part.read_text(encoding="utf-8"))
    return [r for r in runs if r is not None]
