"""make bench (tools.nbrun): budget verdicts, the JSON schema, the table and the exit code."""

import json
import math

import pytest

from tools import nbrun
from tools.nbrun import Run

FLOOR = Run(nbrun.FLOOR_NAME, 3.0, 280.0)


def run(path="notebooks/a/01_x.ipynb", wall=5.0, peak=400.0, error=None):
    return Run(path, wall, peak, error)


def test_within_every_budget_is_clean():
    runs = [run("a.ipynb", 8.0), run("b.ipynb", 10.0)]  # 18 ≤ 3 × 2 × 3
    assert nbrun.violations(FLOOR, runs) == {}


@pytest.mark.parametrize(
    ("r", "reason"),
    [
        (run(wall=30.01), "wall 30.01 s > 5 × floor = 30.00 s"),
        (run(peak=1024.5), "peak 1024.5 MB > 1024 MB"),
        (
            run(error="cell 3: ValueError: bad"),
            "error: cell 3: ValueError: bad",
        ),
        (run(peak=0.0), "measured no memory"),
    ],
)
def test_each_notebook_budget(r, reason):
    floor = Run(nbrun.FLOOR_NAME, 6.0, 280.0)  # lesson 30 s, suite 18 s
    bad = nbrun.violations(floor, [r])
    assert bad.pop("suite", None) == (
        ["suite 30.0 s > 3 × 1 × floor = 18.0 s"] if r.wall_s > 18 else None
    )
    assert bad == {r.path: [reason]}


def test_nan_is_never_within_budget():
    bad = nbrun.violations(
        Run(nbrun.FLOOR_NAME, 30.0, 1.0), [run(wall=math.nan)]
    )
    assert bad[run().path] == ["wall nan s > 5 × floor = 150.00 s"]
    assert bad["suite"] == ["suite nan s > 3 × 1 × floor = 90.0 s"]
    assert "floor" in nbrun.violations(
        Run(nbrun.FLOOR_NAME, math.nan, 1.0), [run()]
    )


def test_budget_edges_are_inclusive():
    r = run(wall=10.0, peak=1024.0)
    assert nbrun.violations(Run(nbrun.FLOOR_NAME, 10.0, 1.0), [r]) == {}


def test_suite_budget_catches_notebooks_each_within_theirs():
    runs = [run("a.ipynb", 10.0), run("b.ipynb", 9.0)]  # 19 s > 3 × 2 × 3 s
    assert nbrun.violations(FLOOR, runs) == {
        "suite": ["suite 19.0 s > 3 × 2 × floor = 18.0 s"]
    }


def test_a_benchmark_that_measured_nothing_fails():
    assert "suite" in nbrun.violations(FLOOR, [])
    bad_floor = Run(nbrun.FLOOR_NAME, 0.0, 0.0, "RuntimeError: no kernel")
    assert nbrun.violations(bad_floor, [run()])["floor"] == [
        "error: RuntimeError: no kernel",
        "measured no wall time",
    ]


def test_table_marks_exactly_the_exceeded_rows():
    runs = [
        run("ok.ipynb", 4.0),
        run("slow.ipynb", 25.0),
        run("fat.ipynb", 2.0, 2000.0),
    ]
    lines = nbrun.table(FLOOR, runs).splitlines()
    row = {ln.split()[1]: ln for ln in lines[1:-1]}
    assert row["ok.ipynb"].startswith("✓") and "1.33" in row["ok.ipynb"]
    assert (
        row["slow.ipynb"].startswith("✗")
        and "wall 25.00 s > 5 × floor = 15.00 s" in row["slow.ipynb"]
    )
    assert (
        row["fat.ipynb"].startswith("✗")
        and "peak 2000.0 MB > 1024 MB" in row["fat.ipynb"]
    )
    assert row["(floor:"].startswith("✓")
    assert row["suite"].startswith("✗")  # 31 s > 3 × 3 × 3 s
    assert (
        "  3.44 " in row["suite"] and "10.33" not in row["suite"]
    )  # 31 / (3 × 3), not 31 / 3


def make_root(tmp_path, names, write_nb):
    for name in names:
        write_nb(tmp_path, name.removesuffix(".ipynb"))
    return tmp_path


def fake_runs(walls):
    seen = []

    def runner(path, env):
        seen.append((path, env))
        return Run(
            path.relative_to(path.parents[2]).as_posix(),
            walls[len(seen) - 1],
            300.0,
        )

    def run_floor(env):
        return Run(nbrun.FLOOR_NAME, 3.0, 250.0)

    return seen, runner, run_floor


def test_main_writes_every_notebook_and_passes(tmp_path, capsys, write_nb):
    names = ["notebooks/00_a/01_x.ipynb", "notebooks/01_b/01_y.ipynb"]
    root = make_root(
        tmp_path, [*names, "notebooks/01_b/.ipynb_checkpoints/z"], write_nb
    )
    seen, runner, run_floor = fake_runs([4.0, 3.0])
    (root / "_build").mkdir()
    ledger = root / "_build" / "bench-ledger.jsonl"
    ledger.write_text('{"stale": true}\n')
    assert nbrun.bench([], runner=runner, run_floor=run_floor, root=root) == 0
    data = json.loads((root / "_build" / "bench.json").read_text())
    assert data == {  # the schema, exactly
        "floor": {"wall_s": 3.0, "peak_rss_mb": 250.0},
        "notebooks": [
            {"path": names[0], "wall_s": 4.0, "peak_rss_mb": 300.0},
            {"path": names[1], "wall_s": 3.0, "peak_rss_mb": 300.0},
        ],
        "suite_wall_s": 7.0,
    }
    assert ledger.read_text() == ""  # rewritten; never the book's ledger
    for path, env in seen:
        assert env["LIVINGDICT_LEDGER"] != str(root / "_build/ledger.jsonl")
        assert (
            env["LIVINGDICT_NOTEBOOK"]
            == path.relative_to(root).as_posix()[: -len(".ipynb")]
        )
        assert env["LIVINGDICT_SEED"] == ""  # the lesson's default seed
    assert "every budget met" in capsys.readouterr().out


def test_main_exits_1_on_an_exceeded_budget(tmp_path, capsys, write_nb):
    root = make_root(
        tmp_path,
        ["notebooks/00_a/01_x.ipynb", "notebooks/00_a/02_y.ipynb"],
        write_nb,
    )
    _, runner, run_floor = fake_runs([4.0, 16.0])

    def with_cells(path, env):
        r = runner(path, env)
        cells = (
            (1, 0.5, "import torch"),
            (3, 19.0, "train.fit(model)"),
            (4, 0.1, "x"),
        )
        return Run(r.path, r.wall_s, r.peak_rss_mb, cells=cells)

    assert (
        nbrun.bench([], runner=with_cells, run_floor=run_floor, root=root) == 1
    )
    out = capsys.readouterr().out
    assert (
        "bench: FAILED" in out and "wall 16.00 s > 5 × floor = 15.00 s" in out
    )
    slow = [
        ln
        for ln in out.splitlines()
        if ln.strip().startswith("slowest cells of n")
    ]
    assert slow == [
        "  slowest cells of notebooks/00_a/02_y.ipynb: #3 19.0 s `train.fit(model)`; "
        "#1 0.5 s `import torch`; #4 0.1 s `x`"
    ]
    assert (root / "_build" / "bench.json").is_file()


def test_main_names_the_suites_slowest_cells(tmp_path, capsys, write_nb):
    root = make_root(
        tmp_path,
        ["notebooks/00_a/01_x.ipynb", "notebooks/00_a/02_y.ipynb"],
        write_nb,
    )
    _, runner, run_floor = fake_runs([10.0, 9.0])  # 19 s > 3 × 2 × 3 s

    def with_cells(path, env):
        r = runner(path, env)
        return Run(
            r.path,
            r.wall_s,
            r.peak_rss_mb,
            cells=((2, 1.0, "a"), (5, 7.5, "fit")),
        )

    assert (
        nbrun.bench([], runner=with_cells, run_floor=run_floor, root=root) == 1
    )
    out = capsys.readouterr().out.splitlines()
    i = out.index("  slowest cells of the suite:")
    assert out[i + 1 : i + 5] == [
        "      7.50 s  notebooks/00_a/01_x.ipynb #5 `fit`",
        "      7.50 s  notebooks/00_a/02_y.ipynb #5 `fit`",
        "      1.00 s  notebooks/00_a/01_x.ipynb #2 `a`",
        "      1.00 s  notebooks/00_a/02_y.ipynb #2 `a`",
    ]


def test_main_on_a_subset_keeps_bench_json(tmp_path, write_nb):
    root = make_root(
        tmp_path,
        ["notebooks/00_a/01_x.ipynb", "notebooks/00_a/02_y.ipynb"],
        write_nb,
    )
    seen, runner, run_floor = fake_runs([4.0])
    target = str(root / "notebooks/00_a/02_y.ipynb")
    assert (
        nbrun.bench([target], runner=runner, run_floor=run_floor, root=root)
        == 0
    )
    assert [p.name for p, _ in seen] == ["02_y.ipynb"]
    assert not (root / "_build" / "bench.json").exists()
    data = json.loads((root / "_build" / "bench-subset.json").read_text())
    assert [n["path"] for n in data["notebooks"]] == [
        "notebooks/00_a/02_y.ipynb"
    ]


def test_main_with_no_notebooks_fails(tmp_path):
    (tmp_path / "notebooks").mkdir()
    _, runner, run_floor = fake_runs([])
    assert (
        nbrun.bench([], runner=runner, run_floor=run_floor, root=tmp_path) == 1
    )
