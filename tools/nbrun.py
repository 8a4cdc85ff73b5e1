"""Run a notebook the way a reader's Jupyter does, and measure what it costs.

``execute(nb, name=..., cwd=..., env=...)`` runs every code cell top to bottom with
nbclient in a fresh kernel (the notebook's kernelspec) started in ``cwd``, inside a
child Python process of its own, and returns a :class:`Run`: the wall time from the
kernel's launch to the end of the last cell, each code cell's time (nbclient's
``record_timing``), and the kernel's peak resident memory (its ``ru_maxrss``, read by
the child that waited for it: a spike between two cells counts).

The kernel's environment is the caller's minus ``MPLBACKEND`` (a kernel started with
``MPLBACKEND=Agg`` draws nothing on the page; the Makefile unexports it, and this
guards any other caller) plus ``env``.

``run_jobs(jobs, root, ledger, parallel=N)`` is the skeleton ``tools.bench`` (serial:
it measures time) and ``tools.sweep`` (``JOBS`` kernels at once) share: it runs a list
of (notebook, seed, env) jobs, each kernel with its seed, its name and a ledger of its
own, and joins the ledgers in the jobs' order. ``find_notebooks`` selects the lessons
(``livingdict.claims.notebooks``) by file or folder.
"""

from __future__ import annotations

import dataclasses
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:  # imported where a kernel runs: nbformat costs ~2 s of CPU
    import nbformat

ROOT = Path(__file__).resolve().parents[1]
CELL_TIMEOUT_S = 600
#: Variables a reader's kernel does not have; dropped from the kernel's environment.
DROPPED_ENV = ("MPLBACKEND",)
#: ru_maxrss is in KiB on Linux, in bytes on macOS
RU_MAXRSS_MB = 1 / 1024 if sys.platform != "darwin" else 1 / 1024**2


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
    from livingdict import claims  # not at import: the child needs no torch

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


def _seconds(cell) -> float:
    """A cell's time from nbclient's ``record_timing`` metadata."""
    from datetime import datetime

    t = cell.metadata.get("execution", {})
    busy, reply = t.get("iopub.status.busy"), t.get("shell.execute_reply")
    if not (busy and reply):
        return 0.0
    parse = datetime.fromisoformat
    return round((parse(reply) - parse(busy)).total_seconds(), 3)


def _child(src: str, cwd: str, out: str, timeout: str) -> None:
    """In the child process: execute ``src`` in ``cwd``, write it back to
    ``src`` with its outputs and the run's numbers to ``out`` (JSON)."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.read(src, as_version=4)
    client = NotebookClient(
        nb,
        timeout=int(timeout),
        kernel_name=nb.metadata.get("kernelspec", {}).get("name", "python3"),
        resources={"metadata": {"path": cwd}},
        record_timing=True,
    )
    error, t0 = None, time.perf_counter()
    try:
        client.execute()
    except CellExecutionError as err:
        index = next(
            i
            for i, c in enumerate(nb.cells)
            if any(
                o.get("output_type") == "error" for o in c.get("outputs", [])
            )
        )
        error = f"cell {index}: {err.ename}: {err.evalue}"
    except Exception as err:  # the kernel did not start, died or timed out
        lines = str(err).strip().splitlines()
        error = f"{type(err).__name__}: {lines[-1] if lines else ''}"
    wall = time.perf_counter() - t0
    cells = [
        (
            i,
            _seconds(c),
            next((ln for ln in c.source.splitlines() if ln.strip()), "")[:60],
        )
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code" and "execution" in c.metadata
    ]
    nbformat.write(nb, src)
    # the kernel's high-water mark: this process waited for it alone (the
    # parent's own mark would be this process's, inherited through exec)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    result = {"wall_s": wall, "error": error, "cells": cells, "peak": peak}
    Path(out).write_text(json.dumps(result))


def execute(
    nb: nbformat.NotebookNode,
    *,
    name: str,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    timeout: int = CELL_TIMEOUT_S,
    seed: int | None = None,
) -> Run:
    """Execute ``nb`` (its outputs are filled in) in a fresh kernel started in
    ``cwd`` with ``kernel_env(env)``.

    Never raises for a failing notebook: the failure is ``Run.error`` (the cell index and
    the exception), with the time and memory it used until then; the kernel's last
    messages on stderr are appended to it.
    """
    import nbformat

    with tempfile.TemporaryDirectory(prefix="nbrun-") as tmp:
        src, out = Path(tmp, "nb.ipynb"), Path(tmp, "run.json")
        nbformat.write(nb, src)
        with Path(tmp, "stderr").open("w+") as log:
            t0 = time.perf_counter()
            child = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "tools.nbrun",
                    str(src),
                    str(cwd),
                    str(out),
                    str(timeout),
                ],
                cwd=ROOT,
                env=kernel_env(env),
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
            child.wait()
            log.seek(0)
            tail = [
                ln
                for ln in log.read().splitlines()
                if "without encryption" not in ln
            ]
        if out.is_file():
            result = json.loads(out.read_text())
            executed = nbformat.read(src, as_version=4)
            nb.cells[:] = executed.cells
        else:
            result = {
                "wall_s": time.perf_counter() - t0,
                "cells": [],
                "peak": 0,
            }
            result["error"] = f"the runner exited with {child.returncode}"
    error = result["error"]
    if error and tail:
        error += "\n    kernel stderr: " + "\n    ".join(tail[-5:])
    return Run(
        name,
        round(result["wall_s"], 3),
        round(result["peak"] * RU_MAXRSS_MB, 1),
        error,
        seed,
        tuple(tuple(c) for c in result["cells"]),
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


if __name__ == "__main__":  # the child of ``execute``
    _child(*sys.argv[1:])
