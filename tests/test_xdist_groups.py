"""``make browser`` surveys each page once because pytest-xdist's
``--dist loadgroup`` sends a chapter's tests to one worker; with pytest 9.2
it silently groups nothing (pytest-dev/pytest-xdist#1386)."""

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # starts two xdist workers

TESTS = """
import os
from pathlib import Path

import pytest


@pytest.mark.parametrize("i", range(6))
@pytest.mark.xdist_group("one")
def test_grouped(i):
    with open(Path(__file__).with_name("workers.txt"), "a") as f:
        f.write(os.environ["PYTEST_XDIST_WORKER"] + "\\n")


@pytest.mark.parametrize("i", range(6))
def test_free(i):
    pass
"""


def test_a_group_runs_on_one_worker(tmp_path):
    (tmp_path / "test_g.py").write_text(TESTS)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "xdist", "-n", "2"]
    cmd += ["--dist", "loadgroup", "-p", "no:cacheprovider", str(tmp_path)]
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")  # xdist only
    result = subprocess.run(
        cmd, cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout
    workers = (tmp_path / "workers.txt").read_text().split()
    assert len(workers) == 6 and len(set(workers)) == 1, workers
