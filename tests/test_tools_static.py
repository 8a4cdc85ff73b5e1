"""tools.static_checks on fixture trees: a clean tree passes, every violation fails."""

import json

import nbformat
import pytest
import yaml

from tools import static_checks

NB = "notebooks/00_intro/01_lesson"
CHECK_SRC = (
    'claims.check(\n    "C0.1",\n    err < 1e-5,\n    measured={"error": err},\n'
    '    expected={"error": "< 1e-5"},\n    controls={"shuffled": False},\n)'
)


def write_nb(root, name, sources, *, markdown=("# A lesson",)):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [nbformat.v4.new_markdown_cell(m) for m in markdown]
    nb.cells += [nbformat.v4.new_code_cell(s) for s in sources]
    path = root / f"{name}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def write_registry(root, claims):
    path = root / "src" / "livingdict" / "claims.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        yaml.safe_dump(
            {"chapters": {0: {"title": "t", "section": "s"}}, "claims": claims}
        )
    )


def write_toc(root, files):
    toc = {
        "format": "jb-book",
        "root": "book/intro",
        "parts": [{"caption": "c", "chapters": [{"file": f} for f in files]}],
    }
    (root / "_toc.yml").write_text(yaml.safe_dump(toc))


@pytest.fixture
def tree(tmp_path):
    """A tree that passes every check: one lesson checking C0.1, C1.1 pending."""
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "intro.md").write_text("# Intro\n")
    (tmp_path / "book" / "claims_ledger.md").write_text("# Ledger\n")
    write_nb(tmp_path, NB, ["import livingdict\nerr = 0.0", CHECK_SRC])
    write_toc(tmp_path, [NB, "book/claims_ledger"])
    write_registry(
        tmp_path,
        [
            {
                "id": "C0.1",
                "chapter": 0,
                "claim": "x",
                "verdict": "holds",
                "notebook": NB,
            },
            {
                "id": "C1.1",
                "chapter": 1,
                "claim": "y",
                "verdict": None,
                "notebook": None,
            },
        ],
    )
    return tmp_path


def errors(root):
    report = static_checks.run_all(root)
    assert report.ok == (not report.errors)
    return report.errors


def edit_nb(path, fn):
    nb = nbformat.read(path, as_version=4)
    fn(nb)
    nbformat.write(nb, path)


def test_clean_tree_passes(tree, capsys):
    report = static_checks.run_all(tree)
    assert report.errors == [] and report.ok
    assert report.pending == ["C1.1"]
    assert static_checks.main(["--root", str(tree)]) == 0
    assert "passed" in capsys.readouterr().out


def test_notebook_saved_with_outputs_fails(tree, capsys):
    def run_it(nb):
        nb.cells[1].outputs = [
            nbformat.v4.new_output("stream", name="stdout", text="hi\n")
        ]

    edit_nb(tree / f"{NB}.ipynb", run_it)
    assert errors(tree) == [f"{NB}.ipynb: cell 1 is stored with outputs"]
    assert static_checks.main(["--root", str(tree)]) == 1
    assert "FAILED" in capsys.readouterr().out


def test_execution_count_and_widget_state_fail(tree):
    def run_it(nb):
        nb.cells[2].execution_count = 3
        nb.metadata["widgets"] = {
            "application/vnd.jupyter.widget-state+json": {}
        }

    edit_nb(tree / f"{NB}.ipynb", run_it)
    assert errors(tree) == [
        f"{NB}.ipynb: cell 2 is stored with an execution count",
        f"{NB}.ipynb: stored with widget state (metadata.widgets)",
    ]


def test_a_really_executed_notebook_fails(tree):
    """The shape nbclient writes: outputs and counts on every code cell."""
    path = tree / f"{NB}.ipynb"
    nb = json.loads(path.read_text())
    for i, cell in enumerate(
        c for c in nb["cells"] if c["cell_type"] == "code"
    ):
        cell["execution_count"] = i + 1
        cell["outputs"] = [{"output_type": "execute_result", "data": {"text/plain": "1"},
                            "metadata": {}, "execution_count": i + 1}]  # fmt: skip
    path.write_text(json.dumps(nb))
    assert len(errors(tree)) == 4


def test_unreadable_notebook_fails(tree):
    (tree / "notebooks" / "00_intro" / "02_broken.ipynb").write_text(
        "{not json"
    )
    errs = errors(tree)
    assert any("02_broken.ipynb: not a readable notebook" in e for e in errs)


def test_checkpoints_are_ignored(tree):
    cp = tree / "notebooks" / "00_intro" / ".ipynb_checkpoints"
    write_nb(cp.parent, ".ipynb_checkpoints/01_lesson-checkpoint", ["1"])
    edit_nb(
        cp / "01_lesson-checkpoint.ipynb",
        lambda nb: setattr(nb.cells[1], "execution_count", 1),
    )
    assert errors(tree) == []


def test_notebook_missing_from_toc_fails(tree):
    write_nb(tree, "notebooks/01_x/01_new", ["1 + 1"])
    assert errors(tree) == [
        "notebooks/01_x/01_new.ipynb is not listed in _toc.yml"
    ]


def test_toc_entry_that_does_not_exist_fails(tree):
    write_toc(tree, [NB, "book/claims_ledger", "book/ch1_gone"])
    assert errors(tree) == [
        "_toc.yml: file 'book/ch1_gone' does not exist (.md, .ipynb or .rst)"
    ]


def test_toc_root_must_exist_and_suffixes_are_allowed(tree):
    (tree / "book" / "intro.md").unlink()
    write_toc(tree, [f"{NB}.ipynb", "book/claims_ledger.md"])
    assert errors(tree) == [
        "_toc.yml: root 'book/intro' does not exist (.md, .ipynb or .rst)"
    ]


def test_missing_toc_fails(tree):
    (tree / "_toc.yml").unlink()
    assert errors(tree) == ["_toc.yml does not exist"]


def test_registered_notebook_without_its_check_fails(tree):
    write_nb(tree, NB, ["err = 0.0", "print(err)"])
    assert errors(tree) == [
        "C0.1: notebooks/00_intro/01_lesson.ipynb has no check('C0.1', ...) call"
    ]


def test_check_in_markdown_does_not_count(tree):
    write_nb(
        tree,
        NB,
        ["err = 0.0"],
        markdown=['We call `check("C0.1", ...)` below.'],
    )
    assert errors(tree) == [
        "C0.1: notebooks/00_intro/01_lesson.ipynb has no check('C0.1', ...) call"
    ]


def test_id_checked_twice_fails(tree):
    write_nb(
        tree,
        NB,
        [
            "err = 0.0",
            CHECK_SRC,
            "check('C0.1', True, measured=1, expected=1, controls=c)",
        ],
    )
    assert errors(tree) == [f"C0.1: checked 2 times ({NB}, {NB}); once only"]


def test_id_checked_by_a_second_notebook_fails(tree):
    other = "notebooks/00_intro/02_other"
    write_nb(tree, other, [CHECK_SRC])
    write_toc(tree, [NB, other, "book/claims_ledger"])
    assert errors(tree) == [
        f"C0.1: checked 2 times ({NB}, {other}); once only",
        f"C0.1: checked in {other}, but its registry entry names {NB}",
    ]


def test_unregistered_id_fails(tree):
    write_nb(
        tree,
        NB,
        [
            "err = 0.0",
            CHECK_SRC,
            'claims.check("C9.9", True, measured=1, expected=1, controls=c)',
        ],
    )
    assert errors(tree) == [
        f"C9.9: checked in {NB} but not registered in claims.yml"
    ]


def test_pending_id_that_a_notebook_checks_fails(tree):
    write_nb(
        tree,
        NB,
        [
            "err = 0.0",
            CHECK_SRC,
            'claims.check("C1.1", True, measured=1, expected=1, controls=c)',
        ],
    )
    report = static_checks.run_all(tree)
    assert report.errors == [
        f"C1.1: checked in {NB}, but its registry entry names no notebook (pending)"
    ]
    assert report.pending == []


def test_registry_naming_a_missing_notebook_fails(tree):
    reg = [
        {
            "id": "C0.1",
            "chapter": 0,
            "claim": "x",
            "verdict": "holds",
            "notebook": "notebooks/x/gone",
        }
    ]
    write_registry(tree, reg)
    assert errors(tree) == [
        "C0.1: its notebook notebooks/x/gone.ipynb does not exist",
        f"C0.1: checked in {NB}, but its registry entry names notebooks/x/gone",
    ]


@pytest.mark.parametrize(
    ("verdict", "notebook", "message"),
    [
        ("holds", None, "C0.1: names no notebook but has verdict; set both or neither"),
        (None, NB, "C0.1: names a notebook but no verdict; set both or neither"),
        ("mostly", NB, "C0.1: verdict 'mostly' is not one of holds, holds with caveats, "
                       "conclusion holds, reason does not, does not hold"),
        ("holds", NB + ".ipynb", f"C0.1: notebook '{NB}.ipynb' must be named without .ipynb"),
    ],
)  # fmt: skip
def test_registry_entry_consistency(tree, verdict, notebook, message):
    write_registry(
        tree,
        [
            {
                "id": "C0.1",
                "chapter": 0,
                "claim": "x",
                "verdict": verdict,
                "notebook": notebook,
            }
        ],
    )
    assert message in errors(tree)


def test_duplicate_registry_id_fails(tree):
    entry = {
        "id": "C0.1",
        "chapter": 0,
        "claim": "x",
        "verdict": "holds",
        "notebook": NB,
    }
    write_registry(tree, [entry, entry])
    assert errors(tree) == ["claims.yml: id C0.1 is registered twice"]


def test_check_call_pattern():
    nb = {
        "cells": [
            {
                "cell_type": "code",
                "source": ["claims.check(\n", '    "C1.2",\n', "    ok)"],
            },
            {
                "cell_type": "code",
                "source": "livingdict.claims.check('B1', ok)\nrecheck = 1",
            },
            {
                "cell_type": "code",
                "source": "check(cid, ok)  # not a literal: not counted",
            },
            {"cell_type": "markdown", "source": 'check("C4.1", ok)'},
        ]
    }
    assert static_checks.checked_ids(nb) == ["C1.2", "B1"]


def test_check_without_controls_fails(tree):
    no_controls = CHECK_SRC.replace('    controls={"shuffled": False},\n', "")
    write_nb(tree, NB, ["err = 0.0", no_controls])
    (error,) = errors(tree)
    assert error.startswith(
        f"{NB}.ipynb: check('C0.1', ...) names no controls"
    )


def test_typed_percentage_in_a_caption_fails(tree):
    def caption(nb):
        nb.cells[1].metadata["mystnb"] = {
            "figure": {"caption": "One hidden layer reaches 97.3 %."},
            "image": {"alt": "A line plot of accuracy against depth."},
        }

    edit_nb(tree / f"{NB}.ipynb", caption)
    (error,) = errors(tree)
    assert "cell 1 caption types the number '97.3%'" in error


@pytest.mark.parametrize(
    ("text", "typed"),
    [
        ("Accuracy {glue:text}`c26_acc:.1f` % on digits.", []),
        ("A 3 × 3 board, two layers, step 10.", []),
        ("Accuracy 97.3 % and 5 % of the keys.", ["97.3%", "5%"]),
        ("It took 312 passes.", ["312"]),
        ("Here $W \\in \\R^{64 \\times 128}$ is fixed.", []),
        ("Here $q < 0.035$ at every point.", ["0.035"]),
        ("As {cite:t}`saxe2014exact` (2014) showed for C2.1.", []),
        ("See [the lesson](../02_mlp/12_x.ipynb).", []),
        ("```python\nx = 1234\n```\nthen prose.", []),
        (
            "```{admonition} Claim 1.5\n:class: tip\nWidth 512 here.\n```",
            ["512"],
        ),
        ("The essay's 784 filters.", []),
    ],
)
def test_typed_numbers(text, typed):
    allowed = static_checks.load_allowed()
    assert static_checks.typed_numbers(text, allowed) == typed
