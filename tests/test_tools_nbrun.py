"""tools.nbrun: a real kernel runs, and what it costs is measured, not assumed."""

import os
import subprocess
import sys
import time

import nbformat
import psutil
import pytest

from tools import nbrun


def notebook(*sources):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    return nb


ALLOC_MB = 300


def test_a_real_kernel_is_measured_and_gets_the_environment(
    tmp_path, monkeypatch
):
    """One kernel: memory peak caught, wall time counted, env and cwd passed, error kept."""
    monkeypatch.setenv("MPLBACKEND", "Agg")  # as the Makefile exports it
    nb = notebook(
        f"import numpy as np\nx = np.ones({ALLOC_MB} * 2**20 // 8)\ndel x",  # +300 MB, then freed
        "import os, time\ntime.sleep(0.5)\n"
        "print(os.environ.get('LIVINGDICT_SEED'), os.environ.get('MPLBACKEND', '-'), os.getcwd())",
        "1 / 0",
        "print('never')",
    )
    r = nbrun.execute(
        nb,
        name="fixture.ipynb",
        cwd=tmp_path,
        env={"LIVINGDICT_SEED": "3"},
        seed=3,
    )
    assert (
        r.error == "cell 2: ZeroDivisionError: division by zero" and not r.ok
    )
    assert r.peak_rss_mb > ALLOC_MB + 20  # the array plus an interpreter
    assert r.peak_rss_mb < ALLOC_MB + 400
    assert 0.5 < r.wall_s < 60
    seed, backend, cwd = nb.cells[1].outputs[0]["text"].split()
    assert seed == "3" and cwd == str(tmp_path)
    assert (
        backend == "module://matplotlib_inline.backend_inline"
    )  # the reader's backend
    assert nb.cells[3].outputs == []
    assert r.seed == 3
    assert [(i, head) for i, _, head in r.cells] == [
        (0, "import numpy as np"),
        (1, "import os, time"),
    ]
    assert r.cells[1][1] >= 0.5  # the cell that sleeps


SPIKE = f"import numpy as np, time\nx = np.ones({ALLOC_MB} * 2**20 // 8)\ntime.sleep(0.3)\ndel x"


def test_peak_from_the_high_water_mark_alone(tmp_path, monkeypatch):
    """Polling every 30 s sees nothing of a 0.3 s spike: VmHWM must catch it."""
    monkeypatch.setattr(nbrun, "POLL_S", 30.0)
    r = nbrun.execute(notebook(SPIKE), name="spike.ipynb", cwd=tmp_path)
    assert r.ok and r.peak_rss_mb > ALLOC_MB + 20


def test_peak_from_polling_alone(tmp_path, monkeypatch):
    """Without VmHWM (other systems), the 20 ms polling must catch the same spike."""
    monkeypatch.setattr(nbrun, "_hwm_mb", lambda pid: 0.0)
    r = nbrun.execute(notebook(SPIKE), name="spike.ipynb", cwd=tmp_path)
    assert r.ok and r.peak_rss_mb > ALLOC_MB + 20


def test_polling_counts_children():
    """A child process's memory is part of the kernel's footprint."""
    code = (
        f"import numpy as np, time; x = np.ones({ALLOC_MB} * 2**20 // 8); "
        "print(1, flush=True); time.sleep(30)"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True
    )
    try:
        child.stdout.readline()  # the child holds its array now
        own = psutil.Process().memory_info().rss / nbrun.MB
        monitor = nbrun.PeakRss(os.getpid())
        monitor.start()
        time.sleep(0.1)
        assert monitor.stop() > own + ALLOC_MB
    finally:
        child.kill()
        child.wait()


def test_tree_rss_of_this_process():
    own = nbrun.tree_rss_mb(os.getpid())
    assert 10 < own < 10_000
    assert nbrun.tree_rss_mb(2**22 + 12345) == 0.0  # no such process


def test_peak_rss_thread_samples_and_stops():
    monitor = nbrun.PeakRss(os.getpid(), interval=0.001)
    monitor.start()
    peak = monitor.stop()
    assert monitor.samples >= 1 and peak > 10 and not monitor.is_alive()


def test_find_notebooks(tmp_path):
    for name in [
        "notebooks/b/01.ipynb",
        "notebooks/a/02.ipynb",
        "notebooks/a/.ipynb_checkpoints/x.ipynb",
    ]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}")
    found = [
        nbrun.rel_name(p, tmp_path) for p in nbrun.find_notebooks(tmp_path)
    ]
    assert found == ["notebooks/a/02.ipynb", "notebooks/b/01.ipynb"]
    only = nbrun.find_notebooks(tmp_path, [tmp_path / "notebooks" / "b"])
    assert [p.name for p in only] == ["01.ipynb"]
    with pytest.raises(ValueError, match="not a notebook"):
        nbrun.find_notebooks(tmp_path, [tmp_path / "nothing.ipynb"])


def test_kernel_env_drops_the_script_backend(monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    env = nbrun.kernel_env({"LIVINGDICT_SEED": "2"})
    assert "MPLBACKEND" not in env and env["LIVINGDICT_SEED"] == "2"
