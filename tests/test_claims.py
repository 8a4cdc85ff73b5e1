"""claims.check: verdict line, ledger record, failure with numbers, registry."""

import json
import os
from pathlib import Path

import pytest
import yaml

import livingdict
from livingdict import claims

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def ledger(tmp_path, monkeypatch):
    path = tmp_path / "ledger.jsonl"
    monkeypatch.setenv("LIVINGDICT_LEDGER", str(path))
    monkeypatch.setenv("LIVINGDICT_NOTEBOOK", "notebooks/test/nb")
    return path


OK = dict(
    measured={"largest error": 1e-7, "error of the shuffled control": 0.4},
    expected={"largest error": claims.identity("< 1e-5")},
    controls={"shuffled values": False},
)


def test_passing_check_writes_one_record(ledger, capsys):
    livingdict.setup(7)
    rec = claims.check("C0.1", True, note="n", **OK)
    out = capsys.readouterr().out
    assert out.startswith("✓ C0.1 reproduced (seed 7)")
    assert "[identity] largest error: 1e-07 (expected < 1e-5)" in out
    assert "shuffled values: failed, as it should" in out
    (stored,) = claims.read_ledger(ledger)
    assert stored == rec
    assert stored["controls"] == {"shuffled values": False}
    assert stored["conditions"][0]["held"] is True
    assert stored["conditions"][0]["kind"] == "identity"
    assert stored["kinds"] == {"largest error": "identity"}
    assert stored["positive_controls"] == {}
    assert stored["conditions"][0]["margin"] == pytest.approx(0.99)
    assert stored["seed"] == 7 and stored["notebook"] == "notebooks/test/nb"


def test_failing_check_raises_with_numbers_and_is_recorded(ledger):
    with pytest.raises(
        AssertionError, match=r"C1.2.*\n.*0.9 \(expected < 0.1\)"
    ):
        claims.check(
            "C1.2",
            False,
            measured={"mean correlation": 0.9},
            expected={"mean correlation": claims.experiment("< 0.1")},
            controls={"identity matrix": True},
        )
    assert json.loads(ledger.read_text())["passed"] is False


def test_a_control_that_passes_fails_the_check(ledger):
    kw = {**OK, "controls": {"shuffled values": True, "untrained": False}}
    with pytest.raises(AssertionError, match="shuffled values: PASSED"):
        claims.check("C0.1", True, **kw)
    assert json.loads(ledger.read_text())["passed"] is False


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"controls": {}}, "at least one control"),
        ({"expected": {}}, "no condition"),
        ({"measured": {"largest_error": 1e-7}}, "not a plain name"),
        (
            {"expected": {"other thing": claims.experiment("< 1")}},
            "measured lacks",
        ),
    ],
)
def test_malformed_checks_are_rejected_before_recording(
    ledger, change, message
):
    with pytest.raises(ValueError, match=message):
        claims.check("C0.1", True, **{**OK, **change})
    assert not ledger.exists()


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"expected": {"largest error": "< 1e-5"}}, TypeError, "identity"),
        ({"measured": 0.9}, TypeError, "measured must be a mapping.*0.9"),
        ({"controls": [True]}, TypeError, "controls must be a mapping"),
    ],
)
def test_conditions_must_say_their_kind(ledger, change, error, message):
    with pytest.raises(error, match=message):
        claims.check("C0.1", True, **{**OK, **change})
    assert not ledger.exists()


def test_a_condition_of_an_unknown_kind_or_text_is_refused():
    with pytest.raises(ValueError, match="not one of"):
        claims.Expect("< 1", "evidence")
    with pytest.raises(ValueError, match="not one of"):
        claims.experiment("small")


def test_a_positive_control_that_passes_fails_the_check(ledger):
    kw = {**OK, "positive_controls": {"a setting that differs": True}}
    with pytest.raises(AssertionError, match="positive control"):
        claims.check("C0.1", True, **kw)
    rec = json.loads(ledger.read_text())
    assert rec["passed"] is False
    assert rec["positive_controls"] == {"a setting that differs": True}


def test_a_no_difference_claim_needs_a_positive_control(ledger):
    nodiff = [
        cid
        for cid, e in claims.registry().items()
        if e.get("form") == "no difference"
    ]
    if not nodiff:
        pytest.skip("no claim of the form 'no difference' is registered")
    with pytest.raises(ValueError, match="positive_controls"):
        claims.check(nodiff[0], True, **OK)
    assert not ledger.exists()


def test_passed_must_agree_with_the_conditions(ledger):
    with pytest.raises(ValueError, match="contradicts"):
        claims.check("C0.1", False, **OK)
    with pytest.raises(ValueError, match="contradicts"):
        claims.check(
            "C0.1", True, **{**OK, "measured": {"largest error": 1.0}}
        )


def test_unknown_id_is_rejected(ledger):
    with pytest.raises(ValueError, match="C9.9"):
        claims.check("C9.9", True, **OK)
    assert not ledger.exists()


@pytest.mark.parametrize(
    ("text", "value", "held", "margin"),
    [
        ("< 0.1", 0.05, True, 0.5),
        ("< 0.1", 0.1, False, 0.0),
        ("<= 0.1", 0.1, True, 0.0),
        ("> 2", 3.0, True, 0.5),
        (">= 2", 1.0, False, -0.5),
        ("== 0", 0.0, True, 0.0),
        ("== 0", 1e-9, False, -1e-9),
        ("0.5 ± 0.1", 0.55, True, 0.5),
        ("0.5 ± 0.1", 0.65, False, -0.5),
        ("in [1, 3]", 1.5, True, 0.5),
        ("in [1, 3]", 3.5, False, -0.5),
        ("true", True, True, 1.0),
        ("false", True, False, -1.0),
        ("< 1e-5", 1e-7, True, 0.99),
    ],
)
def test_conditions(text, value, held, margin):
    cond = claims.Condition.parse(text)
    assert cond.holds(value) is held
    assert cond.margin(value) == pytest.approx(margin)


def test_a_list_must_meet_the_condition_everywhere():
    (row,) = claims.evaluate(
        {"errors": [0.01, 0.2]}, {"errors": claims.experiment("< 0.1")}
    )
    assert row["held"] is False and row["margin"] == pytest.approx(-1.0)
    assert row["kind"] == "experiment" and row["worst"] == 0.2


def test_arrays_and_infinities_are_serialised(ledger):
    import numpy as np

    claims.check(
        "C0.1",
        True,
        measured={"errors": np.array([1e-9, 0.0]), "ratio": np.inf},
        expected={"errors": claims.identity("< 1e-6")},
        controls={"random map": False},
    )
    rec = claims.read_ledger(ledger)[0]
    assert rec["measured"] == {"errors": [1e-9, 0.0], "ratio": "inf"}


def test_default_ledger_is_under_repo_build(monkeypatch, tmp_path):
    monkeypatch.delenv("LIVINGDICT_LEDGER", raising=False)
    monkeypatch.chdir(tmp_path)  # not inside the repo: found from the package
    assert claims.ledger_path() == ROOT / "_build" / "ledger.jsonl"


def test_the_registry_and_the_lessons_agree():
    """The repository's registry is its own source of truth: every entry's
    lesson exists and checks it, every check is registered (the static
    check's rules, on this checkout)."""
    from tools import static_checks

    lessons, errors = static_checks.load_lessons(ROOT)
    assert not errors
    claim_errors, _pending = static_checks.check_claims(ROOT, lessons)
    assert claim_errors == []
    assert set(claims.registry()) >= {
        cid
        for nb in lessons.values()
        for _, cid, _ in static_checks.check_calls(nb)
    }


def test_setup_seed_sources(monkeypatch):
    monkeypatch.setenv("LIVINGDICT_SEED", "3")
    assert livingdict.setup() == 3
    assert livingdict.setup(5) == 5
    monkeypatch.delenv("LIVINGDICT_SEED")
    assert livingdict.setup() == livingdict.DEFAULT_SEED
    monkeypatch.setenv("LIVINGDICT_SEED", "x")
    with pytest.raises(ValueError, match="'x'"):
        livingdict.setup()
    with pytest.raises(TypeError, match="str"):
        livingdict.setup("3")


def test_setup_is_reproducible():
    import torch

    livingdict.setup(11)
    a = torch.randn(3)
    livingdict.setup(11)
    assert torch.equal(a, torch.randn(3))
    assert torch.get_num_threads() == livingdict.TORCH_THREADS


def test_registry_refuses_a_duplicate_id_and_sees_edits(tmp_path):
    path = tmp_path / "claims.yml"
    entry = {"id": "C0.1", "chapter": 0, "claim": "x"}
    path.write_text(yaml.safe_dump({"chapters": {}, "claims": [entry]}))
    assert list(claims.registry(path)) == ["C0.1"]
    path.write_text(yaml.safe_dump({"chapters": {}, "claims": [entry, entry]}))
    os.utime(path, ns=(1, 10**18))  # a new modification time: read again
    with pytest.raises(ValueError, match="C0.1 is registered twice"):
        claims.registry(path)
    assert len(claims.entries(path)) == 2


def test_setup_turns_on_deterministic_algorithms():
    import torch

    torch.use_deterministic_algorithms(False)
    livingdict.setup(0)
    assert torch.are_deterministic_algorithms_enabled()


@pytest.mark.parametrize("arg", ["controls", "positive_controls"])
def test_controls_given_as_a_list_are_a_type_error_naming_the_argument(
    ledger, arg
):
    bad = {**OK, arg: [True]}
    with pytest.raises(TypeError, match=rf"C0.1: {arg} must be a mapping"):
        claims.check("C0.1", True, **bad)
