"""tools.nbval_cache: a notebook that passed nbval lands in the book's cache;
tools.nbcache: make book executes what the cache lacks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def notebook(path: Path, *sources: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [nbformat.v4.new_markdown_cell("# t")]
    nb.cells += [nbformat.v4.new_code_cell(s) for s in sources]
    nbformat.write(nb, path)
    return path


def run_nbval(cache: Path, *paths: Path) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "tools.nbval_cache"]
    cmd += ["--nbcache", str(cache), "--nbval-lax", "-p", "no:cacheprovider"]
    return subprocess.run(
        [*cmd, *map(str, paths)], cwd=ROOT, capture_output=True, text=True
    )


def test_passed_notebooks_are_cached_with_their_outputs(tmp_path):
    from jupyter_cache import get_cache

    good = notebook(tmp_path / "good.ipynb", "x = 6 * 7", "print(x)")
    bad = notebook(tmp_path / "bad.ipynb", "print('first')", "1 / 0")
    result = run_nbval(tmp_path / "cache", good, bad)
    assert result.returncode == 1, result.stdout  # bad.ipynb fails
    cache = get_cache(str(tmp_path / "cache"))
    record = cache.match_cache_notebook(nbformat.read(good, 4))
    _, merged = cache.merge_match_into_notebook(nbformat.read(good, 4))
    assert merged.cells[2].outputs[0]["text"] == "42\n"
    assert record.data["execution_seconds"] > 0
    with pytest.raises(KeyError):
        cache.match_cache_notebook(nbformat.read(bad, 4))
    # an edited notebook no longer matches what was executed
    notebook(good, "x = 6 * 8", "print(x)")
    with pytest.raises(KeyError):
        cache.match_cache_notebook(nbformat.read(good, 4))


def test_writers_to_the_cache_take_turns(tmp_path):
    """Two nbval workers finishing at once raced inside jupyter-cache (both
    created its tables; one deleted the other's half-written record): a
    writer waits while another holds the cache's lock."""
    import fcntl
    import threading

    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    import tools.nbcache  # noqa: F401 (the lock)

    (tmp_path / "cache").mkdir()
    cache = get_cache(str(tmp_path / "cache"))
    nb = nbformat.read(notebook(tmp_path / "a.ipynb", "1"), 4)
    bundle, written = CacheBundleIn(nb, "a.ipynb"), threading.Event()

    def write() -> None:
        cache.cache_notebook_bundle(bundle, check_validity=False)
        written.set()

    with open(tmp_path / "cache" / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        writer = threading.Thread(target=write)
        writer.start()
        assert not written.wait(1.0)  # it waits for the lock
    writer.join(30)
    assert written.is_set() and len(cache.list_cache_records()) == 1


def test_a_warning_fails_the_cell_and_is_not_cached(tmp_path):
    from jupyter_cache import get_cache

    warns = "import warnings\n\nwarnings.warn('careful')"
    nb = notebook(tmp_path / "warns.ipynb", "x = 1", warns)
    result = run_nbval(tmp_path / "cache", nb)
    assert result.returncode == 1, result.stdout
    assert "wrote to stderr" in result.stdout and "careful" in result.stdout
    cache = get_cache(str(tmp_path / "cache"))
    with pytest.raises(KeyError):
        cache.match_cache_notebook(nbformat.read(nb, 4))


def test_a_trailing_semicolon_hides_the_value_as_in_jupyter(tmp_path):
    # plain nbval executes without history, and IPython then shows the value
    # of `f();` anyway: the book showed claims.check's record on every page
    from jupyter_cache import get_cache

    nb = notebook(
        tmp_path / "semi.ipynb", "def f():\n    return {'a': 1}", "f();", "f()"
    )
    result = run_nbval(tmp_path / "cache", nb)
    assert result.returncode == 0, result.stdout
    cache = get_cache(str(tmp_path / "cache"))
    _, merged = cache.merge_match_into_notebook(nbformat.read(nb, 4))
    assert merged.cells[2].outputs == []
    assert merged.cells[3].outputs[0]["output_type"] == "execute_result"


def test_execute_runs_only_what_the_cache_lacks(tmp_path, capsys):
    from jupyter_cache import get_cache

    from tools import nbcache

    lessons = tmp_path / "notebooks" / "00_x"
    lessons.mkdir(parents=True)
    good = notebook(lessons / "01_good.ipynb", "print(6 * 7)")
    notebook(lessons / "02_bad.ipynb", "1 / 0")
    cache_dir = tmp_path / "cache"
    assert nbcache.execute(tmp_path, cache_dir, timeout=120) == 1
    out, err = capsys.readouterr()
    assert "2 of 2 lessons to run" in out
    assert "02_bad.ipynb failed" in err and "ZeroDivisionError" in err
    cache = get_cache(str(cache_dir))
    _, merged = cache.merge_match_into_notebook(nbformat.read(good, 4))
    assert merged.cells[1].outputs[0]["text"] == "42\n"
    assert nbcache.execute(tmp_path, cache_dir, timeout=120) == 1
    assert "1 of 2 lessons to run" in capsys.readouterr().out


def test_a_deleted_ledger_sends_the_lessons_back_to_execution(
    tmp_path, monkeypatch
):
    """Cached lessons never write their ledger lines again: after the ledger
    is deleted, ``execute`` must run them (make book then recovers)."""
    import json

    from livingdict import claims
    from tools import nbcache

    root = Path(nbcache.ROOT)
    ledger = tmp_path / "ledger.jsonl"
    monkeypatch.setenv("LIVINGDICT_LEDGER", str(ledger))
    registered = {
        (root / f"{e['notebook']}.ipynb").resolve()
        for e in claims.registry().values()
        if e.get("notebook")
    }
    assert nbcache.unrecorded(root) == registered  # no ledger at all
    ledger.write_text(
        "".join(json.dumps({"id": cid}) + "\n" for cid in claims.registry())
    )
    assert nbcache.unrecorded(root) == set()


def test_a_lesson_drawn_before_its_translation_changed_runs_again(
    tmp_path, capsys, monkeypatch
):
    """The Japanese build refuses a figure drawn with an old translation:
    ``execute`` sends such a cached lesson back to execution."""
    from livingdict import figure_words
    from tools import nbcache

    lessons = tmp_path / "notebooks" / "00_x"
    lessons.mkdir(parents=True)
    notebook(lessons / "01_good.ipynb", "print(6 * 7)")
    cache_dir = tmp_path / "cache"
    assert nbcache.execute(tmp_path, cache_dir, timeout=120) == 0
    assert nbcache.execute(tmp_path, cache_dir, timeout=120) == 0
    assert "0 of 1 lessons to run" in capsys.readouterr().out
    monkeypatch.setattr(
        figure_words, "stale_notebook", lambda nb, folder: ["trained"]
    )
    assert nbcache.execute(tmp_path, cache_dir, timeout=120) == 0
    assert "1 of 1 lessons to run" in capsys.readouterr().out
