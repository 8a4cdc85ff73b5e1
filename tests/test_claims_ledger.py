"""The claims-ledger extension (book/_ext/claims_ledger.py) on fixture ledgers.

Unit tests of its logic, then real Sphinx builds under -W: the build must fail when a
claim whose lesson is built has no ledger line, or its latest line failed.
"""

from __future__ import annotations

import json

import claims_ledger as ext  # book/_ext: on sys.path through conftest
import pytest

LESSON = "notebooks/00_introduction/01_three_guises"
REGISTRY = {
    "C0.1": {
        "id": "C0.1",
        "chapter": 0,
        "claim": "a",
        "verdict": "holds",
        "notebook": LESSON,
    },
    "C1.2": {
        "id": "C1.2",
        "chapter": 1,
        "claim": "b",
        "verdict": "holds with caveats",
        "notebook": "notebooks/01_x/02_y",
    },
    "C3.1": {
        "id": "C3.1",
        "chapter": 3,
        "claim": "c",
        "verdict": None,
        "notebook": None,
    },
}


def rec(cid: str, passed: bool, measured: float = 1.0) -> dict:
    return {
        "id": cid,
        "passed": passed,
        "measured": {"largest error": measured, "runs": 3, "rise": 0.5},
        "expected": {"largest error": "< 2", "rise": "> 0.1"},
        "kinds": {"largest error": "identity", "rise": "experiment"},
        "controls": {"shuffled values": False, "untrained network": False},
        "positive_controls": {"a task where depth helps": False},
        "seed": 0,
    }


def test_latest_record_wins():
    latest = ext.latest_records(
        [rec("C0.1", False), rec("C1.2", True), rec("C0.1", True)]
    )
    assert latest["C0.1"]["passed"] is True and set(latest) == {"C0.1", "C1.2"}


@pytest.mark.parametrize(
    ("entry", "record", "built", "status"),
    [
        (REGISTRY["C3.1"], None, None, "pending"),
        (REGISTRY["C3.1"], rec("C3.1", True), None, "pending"),
        (REGISTRY["C0.1"], None, {"book/intro"}, "unbuilt"),
        (REGISTRY["C0.1"], None, {LESSON}, "missing"),
        (REGISTRY["C0.1"], None, None, "missing"),
        (REGISTRY["C0.1"], rec("C0.1", False), {LESSON}, "failed"),
        (
            REGISTRY["C0.1"],
            {"id": "C0.1", "passed": "yes"},
            {LESSON},
            "failed",
        ),
        (REGISTRY["C0.1"], rec("C0.1", True), {LESSON}, "passed"),
    ],
)
def test_claim_status(entry, record, built, status):
    assert ext.claim_status(entry, record, built) == status


def test_a_complete_passing_ledger_has_no_problems():
    latest = ext.latest_records([rec("C0.1", True), rec("C1.2", True)])
    assert ext.ledger_problems(REGISTRY, latest, None) == []


def test_a_built_lesson_without_a_line_is_a_problem():
    latest = ext.latest_records([rec("C1.2", True)])
    problems = ext.ledger_problems(
        REGISTRY, latest, {LESSON, "notebooks/01_x/02_y"}
    )
    assert [doc for doc, _ in problems] == [LESSON]
    assert "C0.1" in problems[0][1] and "no line" in problems[0][1]


def test_a_lesson_outside_this_build_is_not_a_problem():
    assert ext.ledger_problems(REGISTRY, {}, {"book/intro"}) == []


def test_the_latest_line_decides():
    failed_last = ext.latest_records(
        [rec("C0.1", True), rec("C0.1", False, measured=0.9)]
    )
    problems = ext.ledger_problems(REGISTRY, failed_last, {LESSON})
    assert (
        len(problems) == 1
        and "failed" in problems[0][1]
        and "0.9" in problems[0][1]
    )
    fixed_last = ext.latest_records([rec("C0.1", False), rec("C0.1", True)])
    assert ext.ledger_problems(REGISTRY, fixed_last, {LESSON}) == []


def test_summary_counts_verdicts_of_passed_checks_only():
    latest = ext.latest_records([rec("C0.1", True), rec("C1.2", False)])
    counts = ext.summary_counts(REGISTRY, latest, None)
    assert (
        counts["holds"] == 1
        and counts["failed"] == 1
        and counts["pending"] == 1
    )
    assert counts["holds with caveats"] == 0


def test_quantities_read_as_measured_beside_needed_with_their_kind():
    r = rec("C0.1", True, measured=3.5762786865234375e-07)
    r["expected"]["runs"] = "== 3"
    assert ext.quantity_rows(r) == [
        ("largest error", "3.58e-07", "< 2", "identity"),
        ("rise", "0.5", "> 0.1", "experiment"),
        ("runs", "3", "= 3", "unknown"),  # a kind not recorded
    ]
    r["expected"]["runs"] = "true"
    assert ext.quantity_rows(r)[2][2] == "yes"
    del r["expected"]["runs"]
    assert ext.quantity_rows(r)[2] == ("runs", "3", "—", "")


def test_kinds_are_counted_and_read_apart():
    r = rec("C0.1", True)
    assert ext.kind_counts(r) == {"identity": 1, "experiment": 1}
    assert (
        ext.kinds_text(ext.kind_counts(r)) == "1 by experiment, 1 by algebra"
    )
    r["kinds"]["rise"] = "identity"
    assert ext.kinds_text(ext.kind_counts(r)) == "by algebra only (2)"
    # an old-style record: kinds from its conditions, else unknown
    del r["kinds"]
    r["conditions"] = [{"name": "rise", "kind": "experiment"}]
    assert ext.kind_counts(r) == {"unknown": 1, "experiment": 1}


def test_controls_read_as_failed_or_not():
    r = rec("C0.1", True)
    r["controls"]["untrained network"] = True
    assert ext.control_lines(r) == [
        ("shuffled values", True),
        ("untrained network", False),
    ]
    assert ext.control_lines(r, "positive_controls") == [
        ("a task where depth helps", True)
    ]
    assert ext.control_lines({"id": "C0.1"}, "positive_controls") == []


def test_anchors_are_stable_slugs():
    assert (
        ext.anchor("C2.1") == "claim-c2-1" and ext.anchor("B1") == "claim-b1"
    )
    assert ext.slug("conclusion holds, reason does not") == (
        "conclusion-holds-reason-does-not"
    )


# ------------------------------------------------------------- real builds under -W
PAGES = {
    "index": "Ledger\n======\n\n.. claims-summary::\n\n.. claims-table::\n"
    "   :chapter: 0\n   :numbers:\n\n.. essay-summary::\n\n"
    ".. essay-checked::\n\n.. toctree::\n\n   "
    f"{LESSON}\n   chapter\n",
    LESSON: "Lesson\n======\n\n.. verdict:: C0.1\n",
    "chapter": "Chapter\n=======\n\nAs :claim:`C0.1` shows.\n\n"
    ".. claims-table::\n   :chapter: 0\n",
}


@pytest.fixture
def build(tmp_path, fixture_book):
    """A fixture book (conftest) built under -W with the given ledger lines."""

    def run(ledger_lines: list[dict]):
        book = fixture_book(PAGES)
        ledger = tmp_path / "ledger.jsonl"
        ledger.write_text("".join(json.dumps(r) + "\n" for r in ledger_lines))
        return book.build(ledger)

    return run


@pytest.mark.slow
def test_build_passes_and_shows_the_numbers(tmp_path, build):
    result = build([rec("C0.1", True, measured=1.5e-7)])
    assert result.returncode == 0, result.stderr
    html = (tmp_path / "html" / "index.html").read_text()
    assert "✓ passed" in html and "claim-verdict-holds" in html
    assert (tmp_path / "html" / "_static" / "book.css").is_file()  # styled
    # the ledger: each condition beside what it needed and its kind, by row
    assert "largest error: 1.5e-07 (needed &lt; 2, by algebra)" in html
    assert "rise: 0.5 (needed &gt; 0.1, by experiment)" in html
    assert "conditions: 1 by experiment, 1 by algebra" in html
    assert "controls: 2 of 2 failed, as they must" in html
    assert "positive controls: 1 of 1 failed, as they must" in html
    assert 'id="claim-c0-1"' in html
    assert "Their conditions: 1 by experiment, 1 by algebra" in html
    # the answer page: the essay's phrase, the verdict, why, the lesson, the kinds
    assert (
        "「同一のモノである」" in html and "identity of linear algebra" in html
    )
    assert (
        "(Checked: 1 by experiment, 1 by algebra; 1 positive controls.)"
        in html
    )
    assert 'class="essay-summary' in html
    # every claim id links to its lesson
    assert (
        f'<a class="reference internal" href="{LESSON}.html">C0.1</a>' in html
    )
    lesson = (tmp_path / "html" / (LESSON + ".html")).read_text()
    assert "verdict-holds" in lesson and "seed 0" in lesson
    assert (
        "<strong>Conditions: </strong>1 by experiment, 1 by algebra." in lesson
    )
    assert "What would have failed" in lesson and "Positive controls" in lesson
    assert (
        "untrained network — must fail: <strong>failed, as it should" in lesson
    )
    assert "failed the test" not in lesson
    assert "<p>1.5e-07</p>" in lesson and "<p>&lt; 2</p>" in lesson
    assert "<p>by algebra</p>" in lesson
    assert 'index.html#claim-c0-1">C0.1</a>' in lesson
    # a chapter page: a short list, no numbers, a link to the ledger's row
    chapter = (tmp_path / "html" / "chapter.html").read_text()
    assert 'class="claims-short' in chapter and "1.5e-07" not in chapter
    assert 'href="index.html#claim-c0-1">Its numbers in the ledger' in chapter
    # an id in prose ({claim}`C0.1`) links to its lesson too
    assert (
        f'As <a class="reference internal" href="{LESSON}.html">C0.1</a>'
        in chapter
    )


@pytest.mark.slow
def test_a_check_of_identities_only_says_so(tmp_path, build):
    r = rec("C0.1", True)
    r["kinds"]["rise"] = "identity"
    assert build([r]).returncode == 0
    lesson = (tmp_path / "html" / (LESSON + ".html")).read_text()
    assert (
        "verdict-identities-only" in lesson and "by algebra only (2)" in lesson
    )


@pytest.mark.slow
def test_an_old_record_without_kinds_renders(tmp_path, build):
    r = rec("C0.1", True)
    del r["kinds"], r["positive_controls"]
    assert build([r]).returncode == 0
    lesson = (tmp_path / "html" / (LESSON + ".html")).read_text()
    assert (
        "2 of unrecorded kind" in lesson and "Positive controls" not in lesson
    )


@pytest.mark.slow
def test_build_fails_without_a_ledger_line(build):
    result = build([])
    assert result.returncode != 0
    assert (
        "claim C0.1: its lesson" in result.stderr
        and "no line" in result.stderr
    )


@pytest.mark.slow
def test_build_fails_when_the_latest_line_failed(build):
    result = build([rec("C0.1", True), rec("C0.1", False, measured=0.42)])
    assert result.returncode != 0
    assert "claim C0.1: the latest check in the ledger failed" in result.stderr
    assert "0.42" in result.stderr


@pytest.mark.slow
def test_a_japanese_build_shows_the_claims_catalog(tmp_path, fixture_book):
    """claims.po, compiled by Sphinx with the pages' catalogs (a fuzzy entry
    left out), gives the words of the pages the extension writes."""
    book = fixture_book(
        PAGES, conf="language = 'ja'\nlocale_dirs = ['locale']\n"
    )
    po = book.src / "locale" / "ja" / "LC_MESSAGES" / "claims.po"
    po.parent.mkdir(parents=True)
    po.write_text(
        'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n'
        '\nmsgid "holds with caveats"\nmsgstr "条件付きで成り立つ"\n\n#, fuzzy\n'
        'msgid "What would have failed"\nmsgstr "古い訳"\n',
        encoding="utf-8",
    )
    ledger = tmp_path / "ledger.jsonl"
    ledger.write_text(json.dumps(rec("C0.1", True)) + "\n")
    result = book.build(ledger)
    assert result.returncode == 0, result.stderr
    lesson = book.html(LESSON)
    assert (
        "条件付きで成り立つ" in lesson and "What would have failed" in lesson
    )
    assert "古い訳" not in lesson


@pytest.mark.slow
def test_an_unknown_claim_id_fails_the_build(fixture_book):
    book = fixture_book(
        {"index": "X\n=\n\nSee :claim:`C9.9`.\n\n.. verdict:: C9.8\n"}
    )
    result = book.build()
    assert result.returncode != 0
    assert "claim: unknown claim id 'C9.9'" in result.stderr
    assert "verdict: unknown claim id 'C9.8'" in result.stderr
