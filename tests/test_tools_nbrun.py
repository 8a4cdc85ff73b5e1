"""tools.nbrun: a real kernel runs, and what it costs is measured, not assumed;
jobs run serially or in parallel with the same results and ledger."""

import json
import threading

import pytest

from tools import nbrun
from tools.nbrun import Run

ALLOC_MB = 300


def kernel_notebook(notebook, *sources):
    """The conftest's notebook as nbclient runs it (a NotebookNode)."""
    import nbformat  # ~2 s of CPU: only the tests that start a kernel pay it

    return nbformat.from_dict(notebook(*sources))


@pytest.mark.slow
def test_a_real_kernel_is_measured_and_gets_the_environment(
    tmp_path, monkeypatch, notebook
):
    """One kernel: memory peak caught, wall time counted, env and cwd passed, error kept."""
    monkeypatch.setenv("MPLBACKEND", "Agg")  # as the Makefile exports it
    nb = kernel_notebook(
        notebook,
        f"import numpy as np\nx = np.ones({ALLOC_MB} * 2**20 // 8)\ndel x",  # +300 MB, then freed
        "import os, time\ntime.sleep(0.5)\n"
        "print(os.environ.get('LIVINGDICT_SEED'), os.environ.get('MPLBACKEND', '-'), os.getcwd())",
        "1 / 0",
        "print('never')",
    )
    r = nbrun.execute(
        nb, name="fixture.ipynb", cwd=tmp_path, env={"LIVINGDICT_SEED": "3"}
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
    assert [(i, head) for i, _, head in r.cells] == [
        (0, "import numpy as np"),
        (1, "import os, time"),
        (2, "1 / 0"),  # the cell that failed ran too
    ]
    assert r.cells[1][1] >= 0.5  # the cell that sleeps


SPIKE = f"import time\nx = b'1' * ({ALLOC_MB} * 2**20)\ntime.sleep(0.3)\ndel x"


@pytest.mark.slow
def test_a_spike_counts_against_the_same_kernel_without_it(tmp_path, notebook):
    """The peak is the kernel's high-water mark: a 0.3 s spike of 300 MB
    (written bytes, so resident) raises it by that much over the same cell
    without the allocation, run the same way."""
    quiet = nbrun.execute(
        kernel_notebook(notebook, "import time\ntime.sleep(0.3)"),
        name="quiet.ipynb",
        cwd=tmp_path,
    )
    spike = nbrun.execute(
        kernel_notebook(notebook, SPIKE), name="spike.ipynb", cwd=tmp_path
    )
    assert quiet.ok and spike.ok
    assert spike.peak_rss_mb - quiet.peak_rss_mb > ALLOC_MB - 20
    assert quiet.peak_rss_mb < ALLOC_MB  # a kernel alone is smaller


def test_find_notebooks(tmp_path, write_nb):
    for name in ["notebooks/b/01", "notebooks/a/02", "notebooks/a/.x/03"]:
        write_nb(tmp_path, name)
    elsewhere = write_nb(tmp_path, "drafts/04")
    found = [
        nbrun.rel_name(p, tmp_path) for p in nbrun.find_notebooks(tmp_path)
    ]
    assert found == ["notebooks/a/02.ipynb", "notebooks/b/01.ipynb"]
    only = nbrun.find_notebooks(tmp_path, [tmp_path / "notebooks" / "b"])
    assert [p.name for p in only] == ["01.ipynb"]
    assert nbrun.find_notebooks(tmp_path, [elsewhere]) == [elsewhere]
    for bad in ["nothing.ipynb", "drafts"]:  # drafts/ holds no lesson
        with pytest.raises(ValueError, match="not a notebook or a folder"):
            nbrun.find_notebooks(tmp_path, [tmp_path / bad])


def fake_runner(log=None, barrier=None):
    """Writes one ledger line naming the kernel's notebook and seed; with a
    barrier, waits for the other job (deadlocks unless run in parallel)."""

    def run(path, env):
        if barrier is not None:
            barrier.wait(timeout=10)
        if log is not None:
            log.append(env)
        line = {"notebook": env["LIVINGDICT_NOTEBOOK"]}
        line["seed"] = env["LIVINGDICT_SEED"]
        with open(env["LIVINGDICT_LEDGER"], "a") as f:
            f.write(json.dumps(line) + "\n")
        return Run(path.name, 1.0, 2.0)

    return run


def test_run_jobs_gives_each_kernel_its_seed_name_and_ledger(tmp_path):
    ledger = tmp_path / "out" / "ledger.jsonl"
    log = []
    jobs = [
        (tmp_path / "notebooks/a/01.ipynb", 3),
        (tmp_path / "notebooks/a/01.ipynb", None),
    ]
    runs = nbrun.run_jobs(jobs, tmp_path, ledger, runner=fake_runner(log))
    assert [r.seed for r in runs] == [3, None]
    assert [e["LIVINGDICT_SEED"] for e in log] == ["3", ""]
    assert {e["LIVINGDICT_NOTEBOOK"] for e in log} == {"notebooks/a/01"}
    assert len({e["LIVINGDICT_LEDGER"] for e in log}) == 2  # one per kernel
    lines = [json.loads(x) for x in ledger.read_text().splitlines()]
    assert [x["seed"] for x in lines] == ["3", ""]


def test_parallel_jobs_run_at_once_and_write_the_serial_ledger(tmp_path):
    jobs = [(tmp_path / f"notebooks/a/0{i}.ipynb", i) for i in (1, 2)]
    serial, parallel = tmp_path / "serial.jsonl", tmp_path / "parallel.jsonl"
    nbrun.run_jobs(jobs, tmp_path, serial, runner=fake_runner())
    runs = nbrun.run_jobs(
        jobs,
        tmp_path,
        parallel,
        parallel=2,
        runner=fake_runner(barrier=threading.Barrier(2)),
    )
    assert [r.path for r in runs] == ["01.ipynb", "02.ipynb"]
    assert parallel.read_text() == serial.read_text() != ""


def test_run_jobs_rewrites_the_ledger(tmp_path):
    ledger = tmp_path / "ledger.jsonl"
    ledger.write_text('{"stale": true}\n')
    assert nbrun.run_jobs([], tmp_path, ledger) == []
    assert ledger.read_text() == ""
