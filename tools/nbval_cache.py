"""``pytest -p tools.nbval_cache --nbcache DIR --nbval-lax`` (``make
notebooks``): a lesson whose cells all passed under nbval is stored, with the
outputs its kernel produced, in the jupyter-cache ``DIR`` the book reads
(matched by its code: an edited lesson runs again), so the book executes it
once. A cell that writes to stderr (a warning the page would show) fails.
Cells go with history, as in Jupyter (without, IPython shows ``f();``).
"""

import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from jupyter_cache import get_cache
from jupyter_cache.base import CacheBundleIn

import tools.nbcache  # noqa: F401 (writers to the cache take turns)

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
        took = {"execution_seconds": time.perf_counter() - _started[path]}
        bundle = CacheBundleIn(item.parent.nb, str(path), data=took)
        get_cache(item.config.getoption("nbcache")).cache_notebook_bundle(
            bundle, check_validity=False, overwrite=True
        )
