"""``python -m tools.nbcache execute [--jobs N]`` (``make book``'s first step,
with only a reader's install) executes into the book's jupyter-cache, ``N``
at a time, the lessons it lacks, whose claims have no ledger line, or whose
Japanese figures predate their translation. Writers to the cache take turns
(here and in ``tools.nbval_cache``): jupyter-cache's own writes race.
"""

import argparse
import fcntl
import multiprocessing
import sys
from pathlib import Path
from typing import Any

from jupyter_cache import get_cache
from jupyter_cache.cache.main import JupyterCacheBase
from jupyter_cache.executors import basic

ROOT = Path(__file__).resolve().parents[1]
_write = JupyterCacheBase.cache_notebook_bundle


def _one_writer_at_a_time(self: Any, *args: Any, **kwargs: Any) -> Any:
    """Two first writes both create the tables; one deletes another's
    record before its file exists."""
    self._path.mkdir(parents=True, exist_ok=True)  # .path races too
    with open(self._path / ".lock", "w") as lock:  # unlocked when closed
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _write(self, *args, **kwargs)


JupyterCacheBase.cache_notebook_bundle = _one_writer_at_a_time


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
