"""The cached book build: a warm build redoes nothing, a ledger change rewrites its pages.

Real incremental Sphinx builds of a fixture with the claims-ledger extension
(book/_ext/claims_ledger.py): the pages that show the ledger are neither re-read nor
re-written when nothing changed, and are re-written (not re-read) when the ledger did.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))

import claims_ledger as ext  # noqa: E402

LESSON = "notebooks/00_introduction/01_three_guises"
CONF = f"""
import sys
sys.path.insert(0, {str(ROOT / "book" / "_ext")!r})
extensions = ["claims_ledger"]
project = "fixture"
"""


def rec(measured: float, time: str = "2026-01-01T00:00:00+00:00") -> dict:
    return {
        "id": "C0.1",
        "passed": True,
        "measured": {"err": measured},
        "expected": 0,
        "seed": 0,
        "time": time,
    }


def test_stamp_ignores_time_and_sees_everything_shown():
    base = ext.ledger_stamp("reg", {"C0.1": rec(1.0)}, ["a", "b"])
    assert (
        ext.ledger_stamp("reg", {"C0.1": rec(1.0, time="later")}, ["b", "a"])
        == base
    )
    assert ext.ledger_stamp("reg", {"C0.1": rec(2.0)}, ["a", "b"]) != base
    assert ext.ledger_stamp("reg2", {"C0.1": rec(1.0)}, ["a", "b"]) != base
    assert ext.ledger_stamp("reg", {"C0.1": rec(1.0)}, ["a"]) != base
    assert ext.ledger_stamp("reg", {}, ["a", "b"]) != base


def build(src: Path, out: Path, ledger: Path) -> tuple[list[str], list[str]]:
    """One incremental build; returns (docs read, docs written)."""
    env = {**os.environ, "LIVINGDICT_LEDGER": str(ledger)}
    cmd = [
        sys.executable,
        "-m",
        "sphinx",
        "-W",
        "--keep-going",
        "-b",
        "html",
        str(src),
        str(out),
    ]
    result = subprocess.run(cmd, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    text = re.sub(r"\x1b\[[0-9;]*m", "", result.stdout)
    read = re.findall(r"reading sources\.\.\. \[\s*\d+%\] (\S+)", text)
    written = re.findall(r"writing output\.\.\. \[\s*\d+%\] (\S+)", text)
    return read, written


def test_warm_build_redoes_nothing_and_a_ledger_change_rewrites(tmp_path):
    src, out, ledger = (
        tmp_path / "src",
        tmp_path / "html",
        tmp_path / "ledger.jsonl",
    )
    (src / Path(LESSON).parent).mkdir(parents=True)
    (src / "conf.py").write_text(CONF)
    (src / "index.rst").write_text(
        "Ledger\n======\n\n.. claims-table::\n   :chapter: 0\n\n"
        ".. toctree::\n\n   " + LESSON + "\n   other\n"
    )
    (src / (LESSON + ".rst")).write_text(
        "Lesson\n======\n\n.. verdict:: C0.1\n"
    )
    (src / "other.rst").write_text("Other\n=====\n\nNo ledger here.\n")
    ledger.write_text(json.dumps(rec(1.5e-7)) + "\n")

    read, written = build(src, out, ledger)  # cold
    assert (
        sorted(read) == sorted(written) == sorted(["index", LESSON, "other"])
    )

    assert build(src, out, ledger) == (
        [],
        [],
    )  # warm: nothing read, nothing written

    with ledger.open(
        "a"
    ) as f:  # the same result, re-run later: nothing to show
        f.write(
            json.dumps(rec(1.5e-7, time="2026-02-02T00:00:00+00:00")) + "\n"
        )
    assert build(src, out, ledger) == ([], [])

    with ledger.open(
        "a"
    ) as f:  # a new number: its pages are re-written, not re-read
        f.write(json.dumps(rec(9.25e-6)) + "\n")
    read, written = build(src, out, ledger)
    assert read == [] and sorted(written) == sorted(["index", LESSON])
    for page in ("index.html", LESSON + ".html"):
        assert "err = 9.25e-06" in (out / page).read_text(), page

    assert build(src, out, ledger) == (
        [],
        [],
    )  # and the next build is warm again
