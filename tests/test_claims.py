"""claims.check: verdict line, ledger record, failure with numbers, registry."""

import json
import re
from pathlib import Path

import pytest

import livingdict
from livingdict import claims

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT.parent / "shared" / "claims.md"


@pytest.fixture
def ledger(tmp_path, monkeypatch):
    path = tmp_path / "ledger.jsonl"
    monkeypatch.setenv("LIVINGDICT_LEDGER", str(path))
    monkeypatch.setenv("LIVINGDICT_NOTEBOOK", "notebooks/test/nb")
    return path


def test_passing_check_writes_one_record(ledger, capsys):
    livingdict.setup(7)
    rec = claims.check("C0.1", True, measured={"err": 1e-7}, expected="< 1e-5", note="n")
    line = capsys.readouterr().out
    assert line.startswith("✓ C0.1") and "1e-07" in line
    (stored,) = claims.read_ledger(ledger)
    assert stored == rec
    assert set(stored) == {
        "id",
        "passed",
        "measured",
        "expected",
        "note",
        "notebook",
        "seed",
        "time",
    }
    assert stored["seed"] == 7 and stored["notebook"] == "notebooks/test/nb"


def test_failing_check_raises_with_numbers_and_is_recorded(ledger):
    with pytest.raises(AssertionError, match=r"C1.2.*0.9.*0.1"):
        claims.check("C1.2", False, measured=0.9, expected=0.1)
    assert json.loads(ledger.read_text())["passed"] is False


def test_unknown_id_is_rejected(ledger):
    with pytest.raises(ValueError, match="C9.9"):
        claims.check("C9.9", True, measured=1, expected=1)
    assert not ledger.exists()


def test_arrays_and_infinities_are_serialised(ledger):
    import numpy as np

    claims.check("C0.1", True, measured=np.array([1.0, np.inf]), expected=float("nan"))
    rec = claims.read_ledger(ledger)[0]
    assert rec["measured"] == [1.0, "inf"] and rec["expected"] == "nan"


def test_default_ledger_is_under_repo_build(monkeypatch, tmp_path):
    monkeypatch.delenv("LIVINGDICT_LEDGER", raising=False)
    monkeypatch.chdir(tmp_path)  # not inside the repo: found from the package
    assert claims.ledger_path() == ROOT / "_build" / "ledger.jsonl"


def test_registry_covers_the_spec_exactly():
    reg = claims.registry()
    if SPEC.exists():
        spec_ids = set(re.findall(r"\*\*((?:C\d|B)\d*\.?\d*)\*\*", SPEC.read_text()))
        assert spec_ids == set(reg)
    for cid, entry in reg.items():
        assert entry["claim"].strip(), cid
        assert entry["verdict"] in (None, "holds", "holds with caveats", "does not hold"), cid
        assert (entry["verdict"] is None) == (entry["notebook"] is None), cid
        if entry["notebook"]:
            assert (ROOT / (entry["notebook"] + ".ipynb")).is_file(), cid


def test_setup_seed_sources(monkeypatch):
    monkeypatch.setenv("LIVINGDICT_SEED", "3")
    assert livingdict.setup() == 3
    assert livingdict.setup(5) == 5
    monkeypatch.delenv("LIVINGDICT_SEED")
    assert livingdict.setup() == livingdict.DEFAULT_SEED
    monkeypatch.setenv("LIVINGDICT_SEED", "x")
    with pytest.raises(ValueError, match="'x'"):
        livingdict.setup()


def test_setup_is_reproducible():
    import torch

    livingdict.setup(11)
    a = torch.randn(3)
    livingdict.setup(11)
    assert torch.equal(a, torch.randn(3))
    assert torch.get_num_threads() == livingdict.TORCH_THREADS
