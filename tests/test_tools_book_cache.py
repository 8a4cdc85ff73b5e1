"""The cached book build: a warm build redoes nothing, a ledger change rewrites its pages.

Real incremental Sphinx builds of a fixture (``fixture_book`` in conftest) with the
claims-ledger extension (book/_ext/claims_ledger.py): the pages that show the ledger
are neither re-read nor re-written when nothing changed, and are re-written (not
re-read) when the ledger did.
"""

from __future__ import annotations

import json
import re

import claims_ledger as ext  # book/_ext: on sys.path through conftest
import pytest

LESSON = "notebooks/00_introduction/01_three_guises"
PAGES = {
    "index": "Ledger\n======\n\n.. claims-table::\n   :chapter: 0\n   :numbers:\n\n"
    ".. toctree::\n\n   " + LESSON + "\n   other\n",
    LESSON: "Lesson\n======\n\n.. verdict:: C0.1\n",
    "other": "Other\n=====\n\nNo ledger here.\n",
}


def rec(measured: float, time: str = "2026-01-01T00:00:00+00:00") -> dict:
    return {
        "id": "C0.1",
        "passed": True,
        "measured": {"largest error": measured},
        "expected": {"largest error": "< 1e-5"},
        "controls": {"shuffled values": False},
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


@pytest.mark.slow
def test_warm_build_redoes_nothing_and_a_ledger_change_rewrites(
    tmp_path, fixture_book
):
    book = fixture_book(PAGES)
    ledger = tmp_path / "ledger.jsonl"
    ledger.write_text(json.dumps(rec(1.5e-7)) + "\n")

    def build() -> tuple[list[str], list[str]]:
        """One incremental build; returns (docs read, docs written)."""
        result = book.build(ledger, quiet=False)
        assert result.returncode == 0, result.stderr
        text = re.sub(r"\x1b\[[0-9;]*m", "", result.stdout)
        read = re.findall(r"reading sources\.\.\. \[\s*\d+%\] (\S+)", text)
        written = re.findall(r"writing output\.\.\. \[\s*\d+%\] (\S+)", text)
        return sorted(read), sorted(written)

    everything = sorted(["index", LESSON, "other"])
    assert build() == (everything, everything)  # cold
    assert build() == ([], [])  # warm: nothing read, nothing written

    with ledger.open("a") as f:  # the same result, later: nothing to show
        f.write(json.dumps(rec(1.5e-7, time="2026-02-02T00:00:00+00:00")))
        f.write("\n")
    assert build() == ([], [])

    with ledger.open("a") as f:  # a new number: pages re-written, not re-read
        f.write(json.dumps(rec(9.25e-6)) + "\n")
    assert build() == ([], sorted(["index", LESSON]))
    for page in ("index", LESSON):
        assert "9.25e-06" in book.html(page), page

    assert build() == ([], [])  # and the next build is warm again


def test_a_changed_japanese_catalog_changes_the_stamp(tmp_path):
    """A translation edit changes no document: the stamp must see it, so the
    Japanese pages that show claims are re-written."""
    from types import SimpleNamespace

    po = tmp_path / "locale" / "ja" / "LC_MESSAGES" / "claims.po"
    po.parent.mkdir(parents=True)
    po.write_text('msgid "holds"\nmsgstr "成り立つ"\n')
    config = SimpleNamespace(language="ja", locale_dirs=["locale"])
    app = SimpleNamespace(config=config, srcdir=str(tmp_path))
    before = ext.ledger_stamp("reg", {}, ["a"], ext.catalog_bytes(app))
    po.write_text('msgid "holds"\nmsgstr "成立する"\n')
    after = ext.ledger_stamp("reg", {}, ["a"], ext.catalog_bytes(app))
    assert before != after
    config.language = "en"
    assert ext.catalog_bytes(app) == b""
