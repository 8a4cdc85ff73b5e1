"""pytest plugin: each lesson nbval executes becomes the book's executed copy.

``make test`` runs every lesson under nbval (the notebook test suite), then
builds the book. Without this plugin the book build executes every lesson a
second time. With it (``pytest -p tools.nbcache --nbcache DIR --nbval-lax``),
a notebook whose cells all passed is stored, with the outputs nbval's kernel
produced, in the jupyter-cache ``DIR`` that the book build reads
(``_build/.jupyter_cache``). myst-nb finds a stored notebook by the hash of
its code cells, so a lesson edited after the test run no longer matches and
the build executes it itself. A lesson with a failing cell is not stored.

nbval executes every cell as before; the plugin keeps what the execution
produced, and adds one test: a cell that writes to stderr (a warning, which
the page would show) fails.

nbval sends every cell with ``store_history=False``, and IPython decides
whether a trailing ``;`` hides a cell's value by reading the input history, so
under plain nbval ``claims.check(...);`` still shows the record it returns.
With ``--nbcache`` the plugin makes nbval store history as a reader's Jupyter
does, so the outputs kept for the book are the ones a reader sees.

``python -m tools.nbcache execute`` is ``make book``'s first step: it
executes every lesson that has no match in the cache, ``--jobs`` at a time
(``make JOBS=``; jupyter-cache's own parallel executor would start one kernel
per CPU), so that the book build itself executes nothing. A lesson whose
claims have no line in the ledger (``_build/ledger.jsonl`` deleted) is run
again even if cached, so the build recovers by itself. A lesson that fails
there stops ``make book`` with its traceback.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

_expected: dict[Path, int] = {}
_done: dict[Path, int] = defaultdict(int)
_failed: set[Path] = set()
_started: dict[Path, float] = {}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--nbcache",
        metavar="DIR",
        help="store each notebook that passed, executed, in this jupyter-cache",
    )


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("nbcache", None):
        return
    from nbval.kernel import RunningKernel

    def execute_cell_input(self, cell_input, allow_stdin=None):
        # as a reader's Jupyter sends it: with history, so ';' hides a value
        return self.kc.execute(
            cell_input,
            store_history=True,
            allow_stdin=allow_stdin,
            stop_on_error=False,
        )

    RunningKernel.execute_cell_input = execute_cell_input


def _notebook(item: pytest.Item) -> Path | None:
    """The notebook an nbval cell item belongs to (``None`` for others)."""
    parent = getattr(item, "parent", None)
    if hasattr(item, "cell") and hasattr(parent, "nb"):
        return Path(str(parent.fspath)).resolve()
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        path = _notebook(item)
        if path is not None:
            _expected[path] = _expected.get(path, 0) + 1


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any):
    outcome = yield
    path = _notebook(item)
    if path is None or not item.config.getoption("nbcache"):
        return
    report = outcome.get_result()
    _started.setdefault(path, time.perf_counter())
    if report.failed or report.skipped:
        _failed.add(path)
    if call.when != "call":
        return
    outputs = getattr(item, "test_outputs", None)
    if outputs is not None:  # the executed cell keeps what the kernel showed
        item.cell.outputs = list(outputs)
        stderr = [o["text"] for o in outputs if o.get("name") == "stderr"]
        if stderr and report.passed:  # a warning would show on the page
            report.outcome = "failed"
            report.longrepr = f"the cell wrote to stderr:\n{stderr[0]}"
            _failed.add(path)
    _done[path] += 1
    if _done[path] == _expected.get(path) and path not in _failed:
        store(
            Path(item.config.getoption("nbcache")),
            path,
            item.parent.nb,
            time.perf_counter() - _started[path],
        )


def store(cache_dir: Path, path: Path, nb: Any, seconds: float) -> None:
    """Put the executed notebook ``nb`` (read from ``path``) into the cache."""
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    cache = get_cache(str(cache_dir))
    cache.cache_notebook_bundle(
        CacheBundleIn(nb, str(path), data={"execution_seconds": seconds}),
        check_validity=False,
        overwrite=True,
    )


ROOT = Path(__file__).resolve().parents[1]


def unrecorded(root: Path) -> set[Path]:
    """The lessons whose registered claims have no line in the ledger (it was
    deleted or reset): their cached copies would never write one again."""
    from livingdict import claims

    recorded = {r["id"] for r in claims.read_ledger()}
    return {
        (root / f"{e['notebook']}.ipynb").resolve()
        for cid, e in claims.registry().items()
        if e.get("notebook") and cid not in recorded
    }


def drawn_stale(cache: Any, paths: list[Path]) -> set[Path]:
    """The cached lessons whose Japanese figures were drawn before their
    words' translation changed (``figure_words.stale_notebook``): the
    Japanese build refuses them, so they run again."""
    from livingdict.figure_words import stale_notebook

    found = set()
    for path in paths:
        try:
            record = cache.get_cached_project_nb(str(path))
            if record is None:
                continue
            nb = cache.get_cache_bundle(record.pk).nb
        except KeyError:  # no usable cached copy: it runs anyway
            continue
        if stale_notebook(nb, path.parent):
            found.add(path.resolve())
    return found


def execute(
    root: Path, cache_dir: Path, timeout: int = 600, jobs: int = 2
) -> int:
    """Execute, ``jobs`` at a time, every lesson with no match in
    ``cache_dir`` or whose claims the ledger lacks; return the number that
    failed (their tracebacks are printed)."""
    import multiprocessing

    from jupyter_cache import get_cache
    from jupyter_cache.executors.basic import (
        ExecutionWorkerLocalMProc,
        ProcessData,
    )

    from livingdict.claims import notebooks

    cache = get_cache(str(cache_dir))
    paths = notebooks(root)
    known = {r.uri for r in cache.list_project_records()}
    for path in paths:
        if str(path) not in known:
            cache.add_nb_to_project(str(path))
    stale = unrecorded(root) & {p.resolve() for p in paths}
    stale |= drawn_stale(cache, paths)
    for path in sorted(stale):
        if (record := cache.get_cached_project_nb(str(path))) is not None:
            cache.remove_cache(record.pk)  # so it runs and writes its line
    todo = cache.list_unexecuted([str(p) for p in paths])
    print(
        f"nbcache: {len(todo)} of {len(paths)} lessons to execute", flush=True
    )
    if not todo:
        return 0
    # jupyter-cache's local-parallel executor starts one kernel per CPU
    work = [ProcessData(r.pk, r.uri, cache, timeout, False) for r in todo]
    with multiprocessing.Pool(max(1, min(jobs, len(work)))) as pool:
        codes = pool.map(ExecutionWorkerLocalMProc(), work)
    failed = [uri for code, uri in codes if code != 0]
    for uri in failed:
        record = cache.get_project_record(uri)
        print(f"nbcache: {uri} failed:\n{record.traceback}", file=sys.stderr)
    return len(failed)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.nbcache")
    ap.add_argument("command", choices=["execute"])
    ap.add_argument(
        "--cache", type=Path, default=ROOT / "_build" / ".jupyter_cache"
    )
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--jobs", type=int, default=2, help="kernels at a time")
    args = ap.parse_args(argv)
    return 1 if execute(ROOT, args.cache, args.timeout, args.jobs) else 0


if __name__ == "__main__":
    sys.exit(main())
