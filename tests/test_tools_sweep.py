"""tools.sweep: aggregation of runs and ledger lines into per-claim verdicts."""

import json

import nbformat
import pytest
import yaml

from tools import sweep
from tools.nbrun import Run

A, B = "notebooks/00_a/01_x", "notebooks/01_b/01_y"
SEEDS = [0, 1, 2, 3, 4]
REGISTRY = {
    "C0.1": {"notebook": A},
    "C1.1": {"notebook": B},
    "C1.2": {"notebook": B},
    "C2.1": {"notebook": None},
}


def runs_for(nbs=(A, B), seeds=SEEDS, errors=None):
    errors = errors or {}
    return [
        Run(nb + ".ipynb", 1.0, 100.0, errors.get((nb, s)), s)
        for nb in nbs
        for s in seeds
    ]


def line(cid, nb, seed, passed=True):
    return {
        "id": cid,
        "passed": passed,
        "notebook": nb,
        "seed": seed,
        "measured": 1,
        "expected": 1,
    }


def all_lines(seeds=SEEDS):
    return [
        line(c, REGISTRY[c]["notebook"], s)
        for s in seeds
        for c in ("C0.1", "C1.1", "C1.2")
    ]


def rows(summary):
    return {r.id: r for r in summary.rows}


def test_every_claim_passing_every_seed_is_green():
    s = sweep.aggregate(REGISTRY, all_lines(), runs_for(), SEEDS)
    assert s.ok and s.problems == []
    r = rows(s)
    assert r["C0.1"].status == "passed" and r["C0.1"].passed == SEEDS
    assert r["C2.1"].status == "pending"
    assert "✓ C0.1  5/5 seeds passed" in sweep.report(s)


def test_a_claim_failing_one_seed_fails_the_sweep():
    lines = [x for x in all_lines() if x["seed"] != 3 or x["id"] == "C0.1"]
    lines.append(
        line("C1.1", B, 3, passed=False)
    )  # the check raised: C1.2 never ran
    s = sweep.aggregate(
        REGISTRY,
        lines,
        runs_for(errors={(B, 3): "AssertionError: claim C1.1"}),
        SEEDS,
    )
    assert not s.ok
    r = rows(s)["C1.1"]
    assert (r.status, r.passed, r.failed, r.missing) == (
        "failed",
        [0, 1, 2, 4],
        [3],
        [],
    )
    assert rows(s)["C1.2"].missing == [
        3
    ]  # the failed check stopped the notebook
    text = sweep.report(s)
    assert "✗ C1.1  4/5 seeds passed" in text and "failed for seeds 3" in text
    assert "seed 3) raised: AssertionError" in text and "sweep FAILED" in text


def test_a_missing_ledger_line_fails_even_without_an_error():
    lines = [
        x for x in all_lines() if not (x["id"] == "C0.1" and x["seed"] == 2)
    ]
    s = sweep.aggregate(REGISTRY, lines, runs_for(), SEEDS)
    assert not s.ok and rows(s)["C0.1"].missing == [2] and s.problems == []


def test_a_notebook_error_fails_even_if_its_claims_passed():
    s = sweep.aggregate(
        REGISTRY, all_lines(), runs_for(errors={(A, 4): "NameError: x"}), SEEDS
    )
    assert not s.ok and all(r.status != "failed" for r in s.rows)
    assert s.problems == [f"{A}.ipynb (seed 4) raised: NameError: x"]


def test_passed_must_be_true_not_truthy():
    lines = all_lines()
    lines[0] = {**lines[0], "passed": "false"}
    s = sweep.aggregate(REGISTRY, lines, runs_for(), SEEDS)
    assert rows(s)["C0.1"].failed == [0] and not s.ok


def test_a_notebook_ignoring_the_seed_is_caught():
    """A lesson that calls setup(0) writes seed 0 for every run: lines match no run."""
    lines = [line("C0.1", A, 0) for _ in SEEDS]
    s = sweep.aggregate(
        {"C0.1": {"notebook": A}}, lines, runs_for(nbs=[A]), SEEDS
    )
    assert not s.ok and rows(s)["C0.1"].missing == [1, 2, 3, 4]
    lines = [line("C0.1", A, None) for _ in SEEDS]  # no setup() at all
    s = sweep.aggregate(
        {"C0.1": {"notebook": A}}, lines, runs_for(nbs=[A]), SEEDS
    )
    assert (
        not s.ok and len(s.problems) == 5 and "matches no run" in s.problems[0]
    )


def test_a_claim_checked_by_the_wrong_notebook_fails():
    lines = all_lines() + [line("C0.1", B, s) for s in SEEDS]
    s = sweep.aggregate(REGISTRY, lines, runs_for(), SEEDS)
    assert not s.ok and s.problems == [
        f"C0.1: checked by {B}, registered to {A}"
    ]


def test_pending_claims_are_not_failures_but_are_reported_when_checked():
    lines = all_lines() + [line("C2.1", B, s) for s in SEEDS]
    s = sweep.aggregate(REGISTRY, lines, runs_for(), SEEDS)
    assert s.ok
    assert rows(s)["C2.1"].status == "pending"
    assert f"checked by {B}: register its notebook" in sweep.report(s)


def test_a_subset_run_lists_the_other_claims_as_not_run():
    lines = [x for x in all_lines() if x["notebook"] == A]
    s = sweep.aggregate(REGISTRY, lines, runs_for(nbs=[A]), SEEDS)
    assert s.ok
    assert [rows(s)[c].status for c in ("C0.1", "C1.1", "C2.1")] == [
        "passed",
        "not run",
        "pending",
    ]


def test_a_full_run_fails_when_a_registered_notebook_is_missing():
    lines = [x for x in all_lines() if x["notebook"] == A]
    s = sweep.aggregate(
        REGISTRY, lines, runs_for(nbs=[A]), SEEDS, existing=[A]
    )
    assert not s.ok and rows(s)["C1.1"].status == "failed"


def test_a_run_missing_for_a_seed_fails():
    runs = [
        r for r in runs_for() if not (r.path == A + ".ipynb" and r.seed == 1)
    ]
    lines = [
        x for x in all_lines() if not (x["notebook"] == A and x["seed"] == 1)
    ]
    s = sweep.aggregate(REGISTRY, lines, runs, SEEDS)
    assert not s.ok and f"{A} was not run for seed 1" in s.problems


def test_unregistered_id_in_the_ledger_fails():
    s = sweep.aggregate(
        REGISTRY, all_lines() + [line("C9.9", A, 0)], runs_for(), SEEDS
    )
    assert not s.ok and s.problems == [
        f"C9.9: checked in {A} but not registered"
    ]


def test_parse_separates_seeds_from_paths():
    assert sweep.parse([]) == (SEEDS, [], None)
    assert sweep.parse(["3", "notebooks/01_b", "1"]) == (
        [3, 1],
        ["notebooks/01_b"],
        None,
    )
    with pytest.raises(SystemExit):
        sweep.parse(["-1"])


def make_tree(tmp_path, registry, names):
    for name in names:
        path = tmp_path / f"{name}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nbformat.v4.new_notebook(), path)
    reg = tmp_path / "src" / "livingdict" / "claims.yml"
    reg.parent.mkdir(parents=True)
    claims = [
        {"id": k, "notebook": v["notebook"]} for k, v in registry.items()
    ]
    reg.write_text(yaml.safe_dump({"claims": claims}))
    return tmp_path


def test_main_with_a_fake_kernel(tmp_path, capsys):
    """main() sets the environment per run, empties the ledger first, exits 0 / 1."""
    root = make_tree(tmp_path, REGISTRY, [A, B])
    ledger = root / "ledger.jsonl"
    ledger.write_text(
        json.dumps(line("C0.1", A, 0, passed=False)) + "\n"
    )  # a stale failure
    envs = []

    def fake(fail_seed):
        def run_file(path, env, seed):
            envs.append(env)
            nb = env["LIVINGDICT_NOTEBOOK"]
            with open(env["LIVINGDICT_LEDGER"], "a") as f:
                for cid, e in REGISTRY.items():
                    if e["notebook"] == nb:
                        ok = not (cid == "C1.2" and seed == fail_seed)
                        f.write(
                            json.dumps(
                                line(cid, nb, int(env["LIVINGDICT_SEED"]), ok)
                            )
                            + "\n"
                        )
            return Run(path.relative_to(root).as_posix(), 1.0, 1.0, None, seed)

        return run_file

    assert (
        sweep.main(
            ["0", "1", "--ledger", str(ledger)], run_file=fake(None), root=root
        )
        == 0
    )
    assert [e["LIVINGDICT_SEED"] for e in envs] == ["0", "1", "0", "1"]
    assert [e["LIVINGDICT_NOTEBOOK"] for e in envs] == [A, A, B, B]
    assert {e["LIVINGDICT_LEDGER"] for e in envs} == {str(ledger)}
    out = capsys.readouterr().out
    assert "✓ C1.2  2/2 seeds passed" in out and "C2.1  pending" in out
    assert (
        sweep.main(
            ["0", "1", "--ledger", str(ledger)], run_file=fake(1), root=root
        )
        == 1
    )
    assert "✗ C1.2  1/2 seeds passed" in capsys.readouterr().out


NOTEBOOK_FAILING_SEED_3 = """import livingdict
from livingdict import claims

SEED = livingdict.setup()
claims.check("C0.1", SEED != 3, measured=SEED, expected="any seed but 3")"""


def test_end_to_end_a_claim_that_fails_for_one_seed(tmp_path, capsys):
    """Two real kernels: the seed reaches the lesson, the failure reaches the verdict."""
    nb_name = "notebooks/00_a/01_x"
    root = make_tree(tmp_path, {"C0.1": {"notebook": nb_name}}, [])
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [nbformat.v4.new_code_cell(NOTEBOOK_FAILING_SEED_3)]
    (root / "notebooks" / "00_a").mkdir(parents=True)
    nbformat.write(nb, root / f"{nb_name}.ipynb")
    assert sweep.main(["0", "3"], root=root) == 1
    out = capsys.readouterr().out
    assert "✗ C0.1  1/2 seeds passed" in out and "failed for seeds 3" in out
    assert (
        "(seed 3) raised: cell 0: AssertionError: claim C0.1 did not reproduce"
        in out
    )
    records = [
        json.loads(x)
        for x in (root / "_build" / "sweep-ledger.jsonl")
        .read_text()
        .splitlines()
    ]
    assert [(r["seed"], r["passed"], r["notebook"]) for r in records] == [
        (0, True, nb_name),
        (3, False, nb_name),
    ]
