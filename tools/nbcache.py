"""The book executes each lesson once: nbval's runs go to its jupyter-cache.

As a pytest plugin (``pytest -p tools.nbcache --nbcache DIR --nbval-lax``,
``make notebooks``), a lesson whose cells all passed under nbval is stored
with the outputs nbval's kernel produced in the jupyter-cache ``DIR`` the
book build reads; myst-nb matches a notebook by its code, so a lesson edited
since runs again. A cell that writes to stderr (a warning the page would
show) fails. nbval sends cells without history, and IPython then shows the
value of ``f();`` anyway: the plugin sends them with history, as Jupyter.

``python -m tools.nbcache execute [--jobs N]`` is ``make book``'s first step:
it executes, ``N`` kernels at a time (jupyter-cache's own parallel executor
starts one per CPU), every lesson the cache lacks, or whose claims have no
ledger line (a deleted ledger recovers), or whose Japanese figures were
drawn before their translation changed; the build then executes nothing.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from jupyter_cache import get_cache

ROOT = Path(__file__).resolve().parents[1]
_cells: Counter = Counter()  # notebook -> nbval items still to run
_failed: set[Path] = set()
_started: dict[Path, float] = {}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--nbcache", metavar="DIR", help="jupyter-cache to fill")


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("nbcache", None):
        return
    from nbval.kernel import RunningKernel

    def execute_cell_input(
        self: Any, cell: str, allow_stdin: Any = None
    ) -> str:
        kwargs = {"allow_stdin": allow_stdin, "stop_on_error": False}
        return self.kc.execute(cell, store_history=True, **kwargs)

    RunningKernel.execute_cell_input = execute_cell_input


def _notebook(item: pytest.Item) -> Path | None:
    """The notebook of an nbval cell item (``None`` for other tests)."""
    if hasattr(item, "cell") and hasattr(item.parent, "nb"):
        return Path(str(item.parent.fspath)).resolve()
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    _cells.update(path for item in items if (path := _notebook(item)))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any):
    report = (yield).get_result()
    path = _notebook(item)
    if path is None or not item.config.getoption("nbcache"):
        return
    _started.setdefault(path, time.perf_counter())
    if report.failed or report.skipped:
        _failed.add(path)
    if call.when != "call":
        return
    outputs = getattr(item, "test_outputs", None)
    if outputs is not None:  # the executed cell keeps what the kernel showed
        item.cell.outputs = list(outputs)
        stderr = [o["text"] for o in outputs if o.get("name") == "stderr"]
        if stderr and report.passed:
            report.outcome = "failed"
            report.longrepr = f"the cell wrote to stderr:\n{stderr[0]}"
            _failed.add(path)
    _cells[path] -= 1
    if _cells[path] == 0 and path not in _failed:  # all passed: cache it
        from jupyter_cache.base import CacheBundleIn

        took = {"execution_seconds": time.perf_counter() - _started[path]}
        bundle = CacheBundleIn(item.parent.nb, str(path), data=took)
        cache = get_cache(item.config.getoption("nbcache"))
        cache.cache_notebook_bundle(
            bundle, check_validity=False, overwrite=True
        )


def unrecorded(root: Path) -> set[Path]:
    """The lessons whose claims have no line in the ledger: cached, they
    would never write one again."""
    from livingdict import claims

    recorded = {r["id"] for r in claims.read_ledger()}
    return {
        (root / f"{e['notebook']}.ipynb").resolve()
        for cid, e in claims.registry().items()
        if e.get("notebook") and cid not in recorded
    }


def execute(
    root: Path, cache_dir: Path, timeout: int = 600, jobs: int = 2
) -> int:
    """Execute, ``jobs`` at a time, every lesson the cache or the ledger
    lacks; return how many failed (their tracebacks are printed)."""
    from jupyter_cache.executors.basic import (
        ExecutionWorkerLocalMProc,
        ProcessData,
    )

    from livingdict.claims import notebooks
    from livingdict.figure_words import stale_notebook

    cache, paths = get_cache(str(cache_dir)), notebooks(root)
    stale = unrecorded(root)
    for path in paths:
        cache.add_nb_to_project(str(path))  # if it is not in the project
        try:
            record = cache.get_cached_project_nb(str(path))
            nb = record and cache.get_cache_bundle(record.pk).nb
        except KeyError:  # no usable cached copy: it runs anyway
            continue
        # cached, it would never write its ledger lines again; its Japanese
        # figures, drawn before their translation changed, are refused
        if nb and (path.resolve() in stale or stale_notebook(nb, path.parent)):
            cache.remove_cache(record.pk)
    todo = cache.list_unexecuted([str(p) for p in paths])
    print(
        f"nbcache: {len(todo)} of {len(paths)} lessons to execute", flush=True
    )
    work = [ProcessData(r.pk, r.uri, cache, timeout, False) for r in todo]
    with multiprocessing.Pool(max(1, min(jobs, len(work)))) as pool:
        codes = pool.map(ExecutionWorkerLocalMProc(), work)
    failed = [uri for code, uri in codes if code != 0]
    for uri in failed:
        traceback = cache.get_project_record(uri).traceback
        print(f"nbcache: {uri} failed:\n{traceback}", file=sys.stderr)
    return len(failed)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(prog="python -m tools.nbcache")
    ap.add_argument("command", choices=["execute"])
    ap.add_argument("--jobs", type=int, default=2, help="kernels at a time")
    jobs = ap.parse_args().jobs
    failed = execute(ROOT, ROOT / "_build" / ".jupyter_cache", jobs=jobs)
    sys.exit(1 if failed else 0)
