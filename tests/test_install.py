"""The install a reader runs: torch from PyTorch's CPU index, never CUDA.

These tests need no network: they read the exact commands `make install` would
run (`make -n -B install`), the lock, and the environment the install built.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def make_n(*args: str) -> list[str]:
    if shutil.which("make") is None:  # pragma: no cover - make is required
        pytest.skip("make is not installed")
    out = subprocess.run(
        ["make", "-n", "-B", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return out.replace("\\\n", " ").splitlines()


def torch_pin() -> str:
    lock = (ROOT / "constraints.txt").read_text().splitlines()
    (pin,) = [line for line in lock if line.startswith("torch==")]
    return pin


def test_the_installed_torch_is_a_cpu_build():
    """What ``make install`` put in .venv: torch from the CPU index (a CPU
    build, ``+cpu`` on Linux where the index serves it), never CUDA."""
    import torch

    assert torch.version.cuda is None
    assert torch.__version__.split("+")[0] == torch_pin().split("==")[1]


def test_the_reader_install_needs_no_harness_tools():
    """``make book`` installs the reader's extras only (book, lab)."""
    reader = [ln for ln in make_n("reader") if '-e ".[' in ln]
    assert reader and all('-e ".[lab,book]"' in ln for ln in reader)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    extras = project["project"]["optional-dependencies"]
    for tool in ("playwright", "zizmor", "jupyter-repo2docker", "pytest"):
        assert not any(
            d.startswith(tool) for d in extras["lab"] + extras["book"]
        )


def test_a_gpu_user_can_name_another_index():
    lines = make_n("install", "TORCH_INDEX=https://pypi.org/simple")
    assert any("--index-url https://pypi.org/simple" in ln for ln in lines)
    assert not any(CPU_INDEX in ln for ln in lines)


def test_lock_also_takes_torch_from_the_cpu_index():
    lines = make_n("lock")
    assert any(
        f"--no-deps --index-url {CPU_INDEX}" in ln and torch_pin() in ln
        for ln in lines
    )


def test_the_lock_and_the_project_pin_one_torch():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    deps = project["project"]["dependencies"]
    assert torch_pin() in deps


def test_the_lock_resolves_no_cuda_package():
    lock = (ROOT / "constraints.txt").read_text().lower()
    assert not re.search(r"^(nvidia-|triton==|cuda-)", lock, re.M)


def test_the_installed_environment_has_no_cuda_package():
    names = {d.metadata["Name"].lower() for d in metadata.distributions()}
    assert "torch" in names
    assert not {n for n in names if n.startswith(("nvidia-", "cuda-"))}
    assert "triton" not in names


def test_make_runs_its_commands_with_bytecode_kept():
    """Nothing is compiled at install: each module is compiled on its first
    import and kept, so make's commands run without PYTHONDONTWRITEBYTECODE
    (with it, every kernel would import torch from source)."""
    import os

    show = "show-env:\n\t@echo bytecode=$${PYTHONDONTWRITEBYTECODE-kept}"
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run(
        ["make", "-s", "--eval", show, "show-env"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.strip() == "bytecode=kept"


def test_the_slow_iri_parser_is_left_out():
    """rfc3987-syntax builds a parser on import: 1.0 s in every process that
    imports nbformat (make install excludes it; nothing validates an IRI)."""
    import importlib.util

    assert importlib.util.find_spec("rfc3987_syntax") is None
    import jsonschema  # still validates, without the "iri" format

    assert "iri" not in jsonschema.FormatChecker().checkers


def test_what_make_book_runs_needs_no_test_tools():
    """make book installs a reader's tools only (.[lab,book]): the harness
    it runs (tools.nbcache) and the book's extensions import without pytest
    or the other test and harness tools. (tools.nbcache imported pytest until
    this test: a fresh clone's make book failed.)"""
    import sys

    blocked = ["pytest", "nbval", "xdist", "hypothesis", "playwright"]
    blocked += ["ruff", "zizmor", "repo2docker", "_pytest"]
    code = "import sys\nsys.path.insert(0, 'book/_ext')\n"
    code += "".join(f"sys.modules[{m!r}] = None\n" for m in blocked)
    extensions = sorted(p.stem for p in (ROOT / "book" / "_ext").glob("*.py"))
    code += "import tools.nbcache, " + ", ".join(extensions)
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
