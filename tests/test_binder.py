"""Binder can launch the repository: repo2docker builds it from environment.yml + postBuild.

``jupyter-repo2docker --no-build --debug .`` writes the Dockerfile that mybinder.org
would build, without a Docker engine; we check it uses the conda environment file and
runs postBuild after the repository is copied in.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def dockerfile() -> tuple[str, str]:
    exe = Path(sys.executable).with_name("jupyter-repo2docker")
    if not exe.exists():
        exe = shutil.which("jupyter-repo2docker")
    assert exe, "jupyter-repo2docker is not installed (pyproject's dev extra)"
    result = subprocess.run(
        [str(exe), "--no-build", "--debug", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout, result.stderr


@pytest.mark.slow
def test_repo2docker_builds_the_conda_environment(dockerfile):
    out, err = dockerfile
    assert "Building conda environment for python=3.11" in err
    assert (
        "COPY --chown=0:0 src/environment.yml ${REPO_DIR}/environment.yml"
        in out
    )
    assert re.search(
        r'env update -p \$\{NB_PYTHON_PREFIX\} --file "environment.yml"', out
    )


@pytest.mark.slow
def test_repo2docker_runs_postbuild_after_copying_the_repository(dockerfile):
    out, _ = dockerfile
    env_update = out.index('--file "environment.yml"')
    copy_repo = out.index("COPY --chown=0:0 src/ ${REPO_DIR}/")
    post_build = out.index("RUN ./postBuild")
    assert env_update < copy_repo < post_build


def test_postbuild_installs_the_book_package_without_touching_the_environment():
    script = (ROOT / "postBuild").read_text()
    assert (
        script.startswith("#!/usr/bin/env bash")
        and "set -euo pipefail" in script
    )
    assert re.search(r"pip install --no-deps .*-e \.", script)
    assert (ROOT / "postBuild").stat().st_mode & 0o111, (
        "postBuild must be executable"
    )


def test_no_binder_folder_hides_the_root_files():
    # repo2docker reads binder/ (or .binder/) instead of the root when it exists
    assert not (ROOT / "binder").exists() and not (ROOT / ".binder").exists()


def test_environment_is_lean_for_binder():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    deps = [d for d in env["dependencies"] if isinstance(d, str)]
    deps += [
        p
        for d in env["dependencies"]
        if isinstance(d, dict)
        for p in d.get("pip", [])
    ]
    assert "python=3.11" in deps
    assert any(d.startswith("pytorch-cpu") for d in deps)
    names = " ".join(deps).lower()
    for heavy in ("cuda", "pytorch-gpu", "cudatoolkit", "tensorflow", "jax"):
        assert heavy not in names, (
            f"{heavy} does not belong in the Binder environment"
        )
    # the harness-only tools stay out of the reader's environment
    for dev in ("playwright", "zizmor", "repo2docker", "ruff"):
        assert dev not in names
