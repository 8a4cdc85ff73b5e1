"""The book executes each lesson once: nbval's runs go to its jupyter-cache.

As a pytest plugin (``pytest -p tools.nbcache --nbcache DIR --nbval-lax``,
``make notebooks``), a lesson whose cells all passed under nbval is stored,
with the outputs nbval's kernel produced, in the jupyter-cache ``DIR`` the
book reads (myst-nb matches a notebook by its code: an edited lesson runs
again). A cell that writes to stderr (a warning the page would show) fails.
Cells go with history, as in Jupyter (without, IPython shows ``f();``).

``python -m tools.nbcache execute [--jobs N]``, ``make book``'s first step,
executes ``N`` lessons at a time: those the cache lacks, those whose claims
have no ledger line, those whose Japanese figures predate their translation.
Writers to the cache take turns: jupyter-cache's own writes race.
"""

from __future__ import annotations

import argparse
import fcntl
import multiprocessing
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from jupyter_cache import get_cache
from jupyter_cache.base import CacheBundleIn
from jupyter_cache.cache.main import JupyterCacheBase
from jupyter_cache.executors import basic

ROOT = Path(__file__).resolve().parents[1]
_cells: Counter = Counter()  # notebook -> nbval items still to run
_failed: set[Path] = set()
_started: dict[Path, float] = {}
_write = JupyterCacheBase.cache_notebook_bundle


def _one_writer_at_a_time(self: Any, *args: Any, **kwargs: Any) -> Any:
    """Take turns: two first writes both create the tables; one deletes a
    record another wrote before its file exists."""
    self._path.mkdir(parents=True, exist_ok=True)  # .path races too
    with open(self._path / ".lock", "w") as lock:  # unlocked when closed
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _write(self, *args, **kwargs)


JupyterCacheBase.cache_notebook_bundle = _one_writer_at_a_time


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
        took = {"execution_seconds": time.perf_counter() - _started[path]}
        bundle = CacheBundleIn(item.parent.nb, str(path), data=took)
        get_cache(item.config.getoption("nbcache")).cache_notebook_bundle(
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
    print(f"nbcache: {len(todo)} of {len(paths)} lessons to run", flush=True)
    work = [
        basic.ProcessData(r.pk, r.uri, cache, timeout, False) for r in todo
    ]
    with multiprocessing.Pool(max(1, min(jobs, len(work)))) as pool:
        codes = pool.map(basic.ExecutionWorkerLocalMProc(), work)
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
