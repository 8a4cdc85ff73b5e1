"""make sweep (tools.nbrun): runs and ledger lines become per-claim verdicts, a margins
table and the controls' record."""

import json

import pytest

from livingdict import claims
from tools import nbrun
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


def _evaluate(measured, expected):
    """claims.evaluate on a record's stored texts, as experiments."""
    kinds = {k: claims.experiment(v) for k, v in expected.items()}
    return claims.evaluate(measured, kinds)


def line(cid, nb, seed, passed=True, error=0.01, control=False):
    """A ledger line as claims.check writes it: error < 0.1, one control."""
    measured = {"error": error}
    expected = {"error": "< 0.1"}
    return {
        "id": cid,
        "passed": passed,
        "notebook": nb,
        "seed": seed,
        "measured": measured,
        "expected": expected,
        "conditions": _evaluate(measured, expected),
        "controls": {"shuffled values": control},
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
    s = nbrun.aggregate(REGISTRY, all_lines(), runs_for(), SEEDS)
    assert s.ok and s.problems == []
    r = rows(s)
    assert r["C0.1"].status == "passed" and r["C0.1"].passed == SEEDS
    assert r["C2.1"].status == "pending"
    text = nbrun.report(s)
    assert "✓ C0.1   5/5 seeds passed" in text
    assert text.splitlines()[-1].startswith("sweep passed")


def test_a_claim_failing_one_seed_fails_the_sweep():
    lines = [x for x in all_lines() if x["seed"] != 3 or x["id"] == "C0.1"]
    lines.append(line("C1.1", B, 3, passed=False, error=0.5))
    s = nbrun.aggregate(
        REGISTRY,
        lines,  # the failed check stopped the notebook: no C1.2 at seed 3
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
    assert rows(s)["C1.2"].missing == [3]
    text = nbrun.report(s)
    assert "✗ C1.1   4/5 seeds passed" in text and "failed for seeds 3" in text
    assert "seed 3) raised: AssertionError" in text and "sweep FAILED" in text


def test_a_missing_ledger_line_fails_even_without_an_error():
    lines = [
        x for x in all_lines() if not (x["id"] == "C0.1" and x["seed"] == 2)
    ]
    s = nbrun.aggregate(REGISTRY, lines, runs_for(), SEEDS)
    assert not s.ok and rows(s)["C0.1"].missing == [2] and s.problems == []


def test_a_notebook_error_fails_even_if_its_claims_passed():
    s = nbrun.aggregate(
        REGISTRY, all_lines(), runs_for(errors={(A, 4): "NameError: x"}), SEEDS
    )
    assert not s.ok and all(r.status != "failed" for r in s.rows)
    assert s.problems == [f"{A}.ipynb (seed 4) raised: NameError: x"]


def test_passed_must_be_true_not_truthy():
    lines = all_lines()
    lines[0] = {**lines[0], "passed": "false"}
    s = nbrun.aggregate(REGISTRY, lines, runs_for(), SEEDS)
    assert rows(s)["C0.1"].failed == [0] and not s.ok


def test_a_notebook_ignoring_the_seed_is_caught():
    """A lesson that calls setup(0) writes seed 0 for every run: lines match no run."""
    lines = [line("C0.1", A, 0) for _ in SEEDS]
    s = nbrun.aggregate(
        {"C0.1": {"notebook": A}}, lines, runs_for(nbs=[A]), SEEDS
    )
    assert not s.ok and rows(s)["C0.1"].missing == [1, 2, 3, 4]
    lines = [line("C0.1", A, None) for _ in SEEDS]  # no setup() at all
    s = nbrun.aggregate(
        {"C0.1": {"notebook": A}}, lines, runs_for(nbs=[A]), SEEDS
    )
    assert (
        not s.ok and len(s.problems) == 5 and "matches no run" in s.problems[0]
    )


def test_a_line_from_another_notebook_does_not_count():
    """Only the registered notebook's line counts (which notebook checks
    which id is a static check's question, not the sweep's)."""
    lines = [x for x in all_lines() if x["id"] != "C0.1"]
    lines += [line("C0.1", B, s) for s in SEEDS]
    s = nbrun.aggregate(REGISTRY, lines, runs_for(), SEEDS)
    assert not s.ok and rows(s)["C0.1"].missing == SEEDS


def test_pending_claims_are_not_failures():
    lines = all_lines() + [line("C2.1", B, s) for s in SEEDS]
    s = nbrun.aggregate(REGISTRY, lines, runs_for(), SEEDS)
    assert s.ok and rows(s)["C2.1"].status == "pending"


def test_a_subset_run_lists_the_other_claims_as_not_run():
    lines = [x for x in all_lines() if x["notebook"] == A]
    s = nbrun.aggregate(REGISTRY, lines, runs_for(nbs=[A]), SEEDS)
    assert s.ok
    assert [rows(s)[c].status for c in ("C0.1", "C1.1", "C2.1")] == [
        "passed",
        "not run",
        "pending",
    ]
    assert "  not run (their notebooks were not named): C1.1, C1.2" in (
        nbrun.report(s)
    )


def test_a_run_missing_for_a_seed_fails():
    runs = [
        r for r in runs_for() if not (r.path == A + ".ipynb" and r.seed == 1)
    ]
    lines = [
        x for x in all_lines() if not (x["notebook"] == A and x["seed"] == 1)
    ]
    s = nbrun.aggregate(REGISTRY, lines, runs, SEEDS)
    assert not s.ok and f"{A} was not run for seed 1" in s.problems


# ------------------------------------------------------------- margins
def test_margins_keep_the_worst_seed_thinnest_first():
    lines = all_lines()
    for x in lines:  # C1.1 comes near its threshold at seed 2 only
        if x["id"] == "C1.1" and x["seed"] == 2:
            x.update(line("C1.1", B, 2, error=0.095))
        if x["id"] == "C1.2":
            x.update(line("C1.2", B, x["seed"], error=0.05 - x["seed"] / 100))
    s = nbrun.aggregate(REGISTRY, lines, runs_for(), SEEDS)
    table = nbrun.margins(s.rows)
    assert [(m.claim, m.seed) for m in table] == [
        ("C1.1", 2),  # margin 0.05: thin
        ("C1.2", 0),  # 0.05 at seed 0 is C1.2's worst: margin 0.5
        ("C0.1", 0),  # 0.9, first of equals
    ]
    assert [round(m.margin, 3) for m in table] == [0.05, 0.5, 0.9]
    assert [m.mark for m in table] == ["thin", "", ""]
    assert table[0].worst == 0.095 and table[0].expected == "< 0.1"
    text = nbrun.report(s)
    thin = next(ln for ln in text.splitlines() if "[thin]" in ln)
    assert thin.split()[:5] == ["0.050", "2", "C1.1", "0.095", "<"]
    assert thin.split()[-2:] == ["error", "[thin]"]
    assert "1 thin margin(s)" in text.splitlines()[-1]


def test_a_failed_condition_leads_the_table():
    lines = all_lines() + [line("C1.1", B, 9, passed=False, error=0.2)]
    s = nbrun.aggregate(
        REGISTRY, lines, runs_for(seeds=[*SEEDS, 9]), [*SEEDS, 9]
    )
    first = nbrun.margins(s.rows)[0]
    assert (first.claim, first.seed, first.mark) == ("C1.1", 9, "✗ failed")
    assert first.margin == pytest.approx(-1.0)


def test_the_margin_of_a_list_names_its_worst_element():
    rec = line("C0.1", A, 0)
    rec["measured"] = {"error": [0.01, 0.08, 0.02]}
    rec["conditions"] = _evaluate(rec["measured"], rec["expected"])
    s = nbrun.aggregate(
        {"C0.1": {"notebook": A}}, [rec], runs_for([A], [0]), [0]
    )
    (m,) = nbrun.margins(s.rows)
    assert m.worst == 0.08 and m.margin == pytest.approx(0.2)


def test_equalities_that_hold_go_last_and_are_not_thin():
    rec = line("C0.1", A, 0)
    rec["measured"] = {"error": 0.01, "count": 3}
    rec["expected"] = {"error": "< 0.1", "count": "== 3"}
    rec["conditions"] = _evaluate(rec["measured"], rec["expected"])
    s = nbrun.aggregate(
        {"C0.1": {"notebook": A}}, [rec], runs_for([A], [0]), [0]
    )
    table = nbrun.margins(s.rows)
    assert [(m.name, m.mark) for m in table] == [
        ("error", ""),
        ("count", "exact"),
    ]


def test_controls_per_claim():
    lines = all_lines()
    for x in lines:
        if x["id"] == "C1.2" and x["seed"] in (1, 3):
            x["controls"]["shuffled values"] = True
    s = nbrun.aggregate(REGISTRY, lines, runs_for(), SEEDS)
    by_claim = {r.id: r.controls for r in s.rows if r.records}
    assert set(by_claim) == {"C0.1", "C1.1", "C1.2"}  # pending: nothing ran
    assert by_claim["C0.1"] == {"shuffled values": []}
    assert by_claim["C1.2"] == {"shuffled values": [1, 3]}
    text = nbrun.report(s)
    assert "✓ C0.1   1 control, every one failed on every seed" in text
    assert (
        "✗ C1.2   1 control; 'shuffled values' passed for seeds 1, 3" in text
    )


def test_a_claim_without_controls_is_flagged():
    rec = line("C0.1", A, 0)
    rec["controls"] = {}
    s = nbrun.aggregate(
        {"C0.1": {"notebook": A}}, [rec], runs_for([A], [0]), [0]
    )
    assert rows(s)["C0.1"].controls == {}
    assert "✗ C0.1   0 controls: none recorded" in nbrun.report(s)


# ----------------------------------------------------------- the command
def test_parse_separates_seeds_from_paths():
    args = nbrun.parse_sweep(
        []
    )  # as make sweep: seeds 0-19, two kernels at once
    assert (args.seeds, args.targets, args.ledger, args.jobs) == (
        list(range(20)),
        [],
        None,
        2,
    )
    args = nbrun.parse_sweep(["3", "notebooks/01_b", "1", "--jobs", "1"])
    assert (args.seeds, args.targets, args.jobs) == (
        [3, 1],
        ["notebooks/01_b"],
        1,
    )
    for bad in (["-1"], ["--jobs", "0"]):
        with pytest.raises(SystemExit):
            nbrun.parse_sweep(bad)


def make_tree(root, registry, write_nb, write_registry):
    for nb in {e["notebook"] for e in registry.values()} - {None}:
        write_nb(root, nb, "1 + 1")
    write_registry(
        root,
        [{"id": k, "notebook": v["notebook"]} for k, v in registry.items()],
    )
    return root


def test_main_with_a_fake_kernel(tmp_path, capsys, write_nb, write_registry):
    """main() runs every (notebook, seed), reads the ledger, exits 0 / 1."""
    root = make_tree(tmp_path, REGISTRY, write_nb, write_registry)
    ledger = root / "ledger.jsonl"
    ledger.write_text(json.dumps(line("C0.1", A, 0, passed=False)) + "\n")
    envs = []

    def fake(fail_seed):
        def runner(path, env):
            envs.append(env)
            nb, seed = env["LIVINGDICT_NOTEBOOK"], int(env["LIVINGDICT_SEED"])
            with open(env["LIVINGDICT_LEDGER"], "a") as f:
                for cid, e in REGISTRY.items():
                    if e["notebook"] == nb:
                        ok = not (cid == "C1.2" and seed == fail_seed)
                        f.write(json.dumps(line(cid, nb, seed, ok)) + "\n")
            return Run(path.relative_to(root).as_posix(), 1.0, 1.0)

        return runner

    argv = ["0", "1", "--ledger", str(ledger), "--jobs", "1"]
    assert nbrun.sweep(argv, runner=fake(None), root=root) == 0
    assert [e["LIVINGDICT_SEED"] for e in envs] == ["0", "1", "0", "1"]
    assert [e["LIVINGDICT_NOTEBOOK"] for e in envs] == [A, A, B, B]
    out = capsys.readouterr().out
    assert "✓ C1.2   2/2 seeds passed" in out and "C2.1   pending" in out
    assert "margins:" in out and "controls:" in out
    assert len(ledger.read_text().splitlines()) == 6  # the stale line is gone
    assert nbrun.sweep(argv, runner=fake(1), root=root) == 1
    assert "✗ C1.2   1/2 seeds passed" in capsys.readouterr().out


NOTEBOOK_FAILING_SEED_3 = """import livingdict
from livingdict import claims

SEED = livingdict.setup()
claims.check(
    "C0.1",
    SEED != 3,
    measured={"seed": SEED, "distance from seed 3": abs(SEED - 3)},
    expected={"distance from seed 3": claims.experiment(">= 1")},
    controls={"a constant seed of 3": False},
)"""


@pytest.mark.slow
def test_end_to_end_a_claim_that_fails_for_one_seed(
    tmp_path, capsys, write_nb, write_registry
):
    """Two real kernels at once: the seed reaches the lesson, the failure
    reaches the verdict, the margin reaches the table."""
    nb_name = "notebooks/00_a/01_x"
    write_registry(tmp_path, [{"id": "C0.1", "notebook": nb_name}])
    write_nb(tmp_path, nb_name, NOTEBOOK_FAILING_SEED_3, markdown=())
    assert nbrun.sweep(["0", "3"], root=tmp_path) == 1
    out = capsys.readouterr().out
    assert "✗ C0.1   1/2 seeds passed" in out and "failed for seeds 3" in out
    assert (
        "(seed 3) raised: cell 0: AssertionError: claim C0.1 did not reproduce"
        in out
    )
    worst = next(ln for ln in out.splitlines() if "[✗ failed]" in ln)
    assert worst.split()[:3] == ["-1.000", "3", "C0.1"]
    ledger = tmp_path / "_build" / "sweep-ledger.jsonl"
    records = [json.loads(x) for x in ledger.read_text().splitlines()]
    assert [(r["seed"], r["passed"], r["notebook"]) for r in records] == [
        (0, True, nb_name),
        (3, False, nb_name),
    ]


def test_a_positive_control_that_passes_for_a_seed_fails_the_sweep():
    lines = all_lines()
    for rec in lines:
        rec["positive_controls"] = {"a task where depth helps": False}
    lines[-1]["positive_controls"]["a task where depth helps"] = True
    s = nbrun.aggregate(REGISTRY, lines, runs_for(), SEEDS)
    passed_for = rows(s)["C1.2"].controls
    assert passed_for["positive: a task where depth helps"] == [4]
    assert "✗ C1.2   2 controls; 'positive: a task" in nbrun.report(s)
