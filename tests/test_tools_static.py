"""tools.static_checks on fixture trees (``lesson_tree`` in conftest): a clean
tree passes, every violation fails, each with its own message.

The fixture lesson's cells: 0 title, 1 Colab (remove-cell), 2 imports,
3 mechanism, 4 figure (hide-input), 5 check of C0.1 (hide-cell).
"""

import json

import pytest
import yaml

from tools import static_checks

NB = "notebooks/00_intro/01_lesson"
OTHER = "notebooks/00_intro/02_other"


def errors(root):
    return static_checks.run_all(root)[0]


def test_clean_tree_passes(lesson_tree, capsys):
    assert static_checks.run_all(lesson_tree) == ([], ["C1.1"])
    assert static_checks.main(["--root", str(lesson_tree)]) == 0
    assert "passed" in capsys.readouterr().out


# ------------------------------------------------------------ clean, toc
def test_notebook_saved_with_outputs_fails(lesson_tree, edit_nb, capsys):
    def run_it(nb):
        nb["cells"][3]["outputs"] = [
            {"output_type": "stream", "name": "stdout", "text": "hi\n"}
        ]

    edit_nb(lesson_tree / f"{NB}.ipynb", run_it)
    assert errors(lesson_tree) == [
        f"{NB}.ipynb: cell 3 is stored with outputs"
    ]
    assert static_checks.main(["--root", str(lesson_tree)]) == 1
    assert "FAILED" in capsys.readouterr().out


def test_execution_count_and_widget_state_fail(lesson_tree, edit_nb):
    def run_it(nb):
        nb["cells"][2]["execution_count"] = 3
        nb["metadata"]["widgets"] = {
            "application/vnd.jupyter.widget-state+json": {}
        }

    edit_nb(lesson_tree / f"{NB}.ipynb", run_it)
    assert errors(lesson_tree) == [
        f"{NB}.ipynb: cell 2 is stored with an execution count",
        f"{NB}.ipynb: stored with widget state (metadata.widgets)",
    ]


def test_a_really_executed_notebook_fails(lesson_tree):
    """The shape nbclient writes: outputs and counts on every code cell."""
    path = lesson_tree / f"{NB}.ipynb"
    nb = json.loads(path.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    for i, cell in enumerate(code, 1):
        cell["execution_count"] = i
        cell["outputs"] = [
            {
                "output_type": "execute_result",
                "data": {"text/plain": "1"},
                "metadata": {},
                "execution_count": i,
            }
        ]
    path.write_text(json.dumps(nb))
    assert len(errors(lesson_tree)) == 2 * len(code)


def test_unreadable_notebook_fails(lesson_tree):
    (lesson_tree / "notebooks" / "00_intro" / "02_broken.ipynb").write_text(
        "{not json"
    )
    (error,) = errors(lesson_tree)
    assert error.startswith(
        "notebooks/00_intro/02_broken.ipynb: not a readable notebook"
    )


def test_checkpoints_are_ignored(lesson_tree, write_nb):
    write_nb(
        lesson_tree / "notebooks" / "00_intro",
        ".ipynb_checkpoints/01_lesson-checkpoint",
        "print('stale')",
        markdown=["We typed 97.3 % here."],
    )
    assert errors(lesson_tree) == []


def test_notebook_missing_from_toc_fails(lesson_tree, write_lesson):
    write_lesson(lesson_tree, "notebooks/01_x/01_new", claim=None)
    assert errors(lesson_tree) == [
        "notebooks/01_x/01_new.ipynb is not listed in _toc.yml"
    ]


def test_toc_entries_may_name_their_suffix(lesson_tree, write_toc):
    """A toc entry that is no document is Sphinx's to refuse (-W)."""
    write_toc(lesson_tree, [f"{NB}.ipynb", "book/claims_ledger.md"])
    assert errors(lesson_tree) == []


def test_a_toc_glob_lists_the_lessons_it_matches(lesson_tree, write_lesson):
    """A ``glob:`` entry matches docnames (a file without its suffix)."""
    write_lesson(lesson_tree, "notebooks/01_x/01_new", claim=None)
    toc = yaml.safe_load((lesson_tree / "_toc.yml").read_text())
    toc["parts"][0]["chapters"].append({"glob": "notebooks/01_x/*"})
    (lesson_tree / "_toc.yml").write_text(yaml.safe_dump(toc))
    assert errors(lesson_tree) == []
    toc["parts"][0]["chapters"][-1] = {"glob": "notebooks/01_x/02*"}
    (lesson_tree / "_toc.yml").write_text(yaml.safe_dump(toc))
    assert errors(lesson_tree) == [
        "notebooks/01_x/01_new.ipynb is not listed in _toc.yml"
    ]


def test_missing_toc_fails(lesson_tree):
    (lesson_tree / "_toc.yml").unlink()
    assert errors(lesson_tree) == ["_toc.yml does not exist"]


# ------------------------------------------------- registry <-> lessons
def test_registered_notebook_without_its_check_fails(
    lesson_tree, write_lesson
):
    write_lesson(lesson_tree, NB, claim=None)
    assert errors(lesson_tree) == [
        f"C0.1: {NB}.ipynb has no check('C0.1', ...) call"
    ]


def test_check_in_markdown_does_not_count(
    lesson_tree, write_lesson, edit_nb, new_cell
):
    path = write_lesson(lesson_tree, NB, claim=None)
    edit_nb(
        path,
        lambda nb: nb["cells"].append(
            new_cell('We call `check("C0.1", ...)`.', "markdown")
        ),
    )
    assert errors(lesson_tree) == [
        f"C0.1: {NB}.ipynb has no check('C0.1', ...) call"
    ]


def test_id_checked_twice_fails(lesson_tree, edit_nb, new_cell):
    edit_nb(
        lesson_tree / f"{NB}.ipynb",
        lambda nb: nb["cells"].append(
            new_cell(nb["cells"][5]["source"], tags=["hide-cell"])
        ),
    )
    assert errors(lesson_tree) == [
        f"C0.1: checked 2 times ({NB}, {NB}); once only"
    ]


def test_id_checked_by_a_second_notebook_fails(
    lesson_tree, write_lesson, write_toc
):
    write_lesson(lesson_tree, OTHER)
    write_toc(lesson_tree, [NB, OTHER, "book/claims_ledger"])
    assert errors(lesson_tree) == [
        f"C0.1: checked 2 times ({NB}, {OTHER}); once only",
        f"C0.1: checked in {OTHER}, but its registry entry names {NB}",
    ]


def test_unregistered_id_fails(lesson_tree, write_lesson, write_toc):
    write_lesson(lesson_tree, OTHER, claim="C9.9")
    write_toc(lesson_tree, [NB, OTHER, "book/claims_ledger"])
    assert errors(lesson_tree) == [
        f"C9.9: checked in {OTHER} but not registered in claims.yml"
    ]


def test_pending_id_that_a_notebook_checks_fails(
    lesson_tree, write_lesson, write_toc
):
    write_lesson(lesson_tree, OTHER, claim="C1.1")
    write_toc(lesson_tree, [NB, OTHER, "book/claims_ledger"])
    assert static_checks.run_all(lesson_tree) == (
        [
            f"C1.1: checked in {OTHER}, but its registry entry names no "
            "notebook (pending)"
        ],
        [],
    )


def test_registry_naming_a_missing_notebook_fails(
    lesson_tree, write_registry, registry_entry
):
    write_registry(lesson_tree, [registry_entry("C0.1", "notebooks/x/gone")])
    assert errors(lesson_tree) == [
        "C0.1: its notebook notebooks/x/gone.ipynb does not exist",
        f"C0.1: checked in {NB}, but its registry entry names notebooks/x/gone",
    ]


@pytest.mark.parametrize(
    ("verdict", "notebook", "message"),
    [
        ("holds", None, "C0.1: names no notebook but has verdict; set both or neither"),
        (None, NB, "C0.1: names a notebook but no verdict; set both or neither"),
        ("mostly", NB, "C0.1: verdict 'mostly' is not one of holds, holds with caveats, "
                       "conclusion holds, reason does not, does not hold, "
                       "inconclusive"),
        ("holds", NB + ".ipynb", f"C0.1: notebook '{NB}.ipynb' must be named without .ipynb"),
    ],
)  # fmt: skip
def test_registry_entry_consistency(
    lesson_tree, write_registry, verdict, notebook, message
):
    entry = {"id": "C0.1", "chapter": 0, "claim": "x"}
    write_registry(
        lesson_tree, [{**entry, "verdict": verdict, "notebook": notebook}]
    )
    assert message in errors(lesson_tree)


@pytest.mark.parametrize(
    ("form", "extra", "message"),
    [
        ("because", {"x": "it works"}, "C0.1: form 'because' needs x:"),
        ("maybe", {}, "C0.1: form 'maybe' is not one of claim, because"),
    ],
)  # fmt: skip
def test_registry_form_is_checked(
    lesson_tree, write_registry, registry_entry, form, extra, message
):
    entry = {**registry_entry("C0.1", NB), "form": form, **extra}
    write_registry(lesson_tree, [entry])
    (error,) = errors(lesson_tree)
    assert error.startswith(message)


def test_a_because_claim_naming_x_and_y_passes(
    lesson_tree, write_registry, registry_entry
):
    entry = {**registry_entry("C0.1", NB), "form": "because", "x": "it works"}
    write_registry(lesson_tree, [{**entry, "y": "it is linear"}])
    assert errors(lesson_tree) == []


def test_duplicate_registry_id_fails(
    lesson_tree, write_registry, registry_entry
):
    entry = registry_entry("C0.1", NB)
    write_registry(lesson_tree, [entry, entry])
    (error,) = errors(lesson_tree)
    assert error.startswith("src/livingdict/claims.yml: unreadable registry")
    assert "C0.1 is registered twice" in error


def test_unreadable_registry_fails(lesson_tree):
    (lesson_tree / static_checks.REGISTRY).write_text("claims: [unclosed\n")
    static_checks.claims._read.cache_clear()
    (error,) = errors(lesson_tree)
    assert error.startswith("src/livingdict/claims.yml: unreadable registry")


def test_check_call_pattern():
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell('claims.check(\n    "C1.2",\n    ok)'),
        nbformat.v4.new_code_cell("livingdict.claims.check('B1', ok)\nre = 1"),
        nbformat.v4.new_code_cell("check(cid, ok)  # not a literal: no id"),
        nbformat.v4.new_markdown_cell('check("C4.1", ok)'),
    ]
    assert list(static_checks.check_calls(nb)) == [
        (0, "C1.2", set()),
        (1, "B1", set()),
    ]


# --------------------------------------------------------------- numbers
def test_typed_percentage_in_a_caption_fails(lesson_tree, edit_nb):
    def caption(nb):
        nb["cells"][4]["metadata"]["mystnb"]["figure"]["caption"] = (
            "One hidden layer reaches 97.3 %."
        )

    edit_nb(lesson_tree / f"{NB}.ipynb", caption)
    (error,) = errors(lesson_tree)
    assert "cell 4 caption types the number '97.3%'" in error


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
        ("```{exercise-start}\n:label: ex\n```\nStore 16 pairs.", ["16"]),
        ("````{note}\n```python\nx = 99\n```\nThen 77 more.\n````", ["77"]),
        ("```python\nprint(12)\n```\n\nafter 13", ["13"]),
    ],
)
def test_typed_numbers(text, typed):
    allowed = static_checks.load_allowed()
    assert static_checks.typed_numbers(text, allowed) == typed


# ------------------------------------------------------ the lesson's shape
@pytest.mark.parametrize(
    "pragma",
    ["# fmt: off", "# fmt: on", "# fmt: skip", "# noqa", "# noqa: E501",
     "# ruff: noqa: E501", "#fmt:skip"],
)  # fmt: skip
def test_formatter_and_linter_pragmas_fail(lesson_tree, edit_nb, pragma):
    def add(nb):
        nb["cells"][3]["source"] += f"\nx = [1, 2]  {pragma}"

    edit_nb(lesson_tree / f"{NB}.ipynb", add)
    (error,) = errors(lesson_tree)
    assert error.startswith(f"{NB}.ipynb: cell 3 line 2 has the pragma")


def test_comments_that_only_look_like_pragmas_pass(lesson_tree, edit_nb):
    def add(nb):
        nb["cells"][3]["source"] += "\n# fmt is short for format; no qa here"

    edit_nb(lesson_tree / f"{NB}.ipynb", add)
    assert errors(lesson_tree) == []


def _untag(index):
    def edit(nb):
        nb["cells"][index]["metadata"]["tags"] = []

    return edit


def test_a_figure_cell_must_fold_its_code(lesson_tree, edit_nb):
    edit_nb(lesson_tree / f"{NB}.ipynb", _untag(4))
    assert errors(lesson_tree) == [
        f"{NB}.ipynb: cell 4 draws a figure: tag it hide-input (the figure "
        "shows, its code folds)"
    ]


def test_a_figure_cell_folded_whole_fails(lesson_tree, edit_nb):
    """hide-cell would fold the figure too: the figure must show."""

    def fold(nb):
        nb["cells"][4]["metadata"]["tags"] = ["hide-cell"]

    edit_nb(lesson_tree / f"{NB}.ipynb", fold)
    (error,) = errors(lesson_tree)
    assert "cell 4 draws a figure: tag it hide-input" in error


def test_a_check_cell_must_fold(lesson_tree, edit_nb):
    edit_nb(lesson_tree / f"{NB}.ipynb", _untag(5))
    assert errors(lesson_tree) == [
        f"{NB}.ipynb: cell 5 checks a claim: tag it hide-cell"
    ]


def test_a_lesson_without_visible_mechanism_fails(lesson_tree, edit_nb):
    def hide(nb):
        nb["cells"][3]["metadata"]["tags"] = ["hide-input"]

    edit_nb(lesson_tree / f"{NB}.ipynb", hide)
    assert errors(lesson_tree) == [
        f"{NB}.ipynb: no visible code cell besides the imports: show the "
        "lesson's mechanism (written out, or page.show)"
    ]


@pytest.mark.parametrize(
    ("source", "counts"),
    [
        ("from livingdict import lookup, page\n\npage.show(lookup)", True),
        ("import torch\nx = torch.ones(3)", True),
        ("import torch\nfrom livingdict import data", False),
        ("import livingdict\n\nSEED = livingdict.setup()", False),
        ("", False),
    ],
)
def test_what_counts_as_the_mechanism(lesson_tree, edit_nb, source, counts):
    def replace(nb):
        nb["cells"][3]["source"] = source

    edit_nb(lesson_tree / f"{NB}.ipynb", replace)
    errs = [e for e in errors(lesson_tree) if "no visible code cell" in e]
    assert len(errs) == (0 if counts else 1)


def test_the_first_code_cell_must_be_the_colab_cell(lesson_tree, edit_nb):
    def stale(nb):
        nb["cells"][1]["source"] = nb["cells"][1]["source"].replace(
            "me/", "old/"
        )

    edit_nb(lesson_tree / f"{NB}.ipynb", stale)
    (error,) = errors(lesson_tree)
    assert error.startswith(
        f"{NB}.ipynb: the first code cell is not the Colab cell"
    )
    assert '+REPO = "https://github.com/old/fixture-book"' in error


def test_the_colab_cell_follows_the_configured_url(lesson_tree):
    (lesson_tree / "_config.yml").write_text(
        "repository:\n  url: https://github.com/fork/book\n"
    )
    (error,) = errors(lesson_tree)
    assert "the first code cell is not the Colab cell" in error
    (lesson_tree / "_config.yml").write_text("title: no repository\n")
    assert errors(lesson_tree) == [
        "_config.yml: no repository.url (the Colab cells name it)"
    ]


def test_the_colab_cell_must_be_removed_from_the_page(lesson_tree, edit_nb):
    edit_nb(lesson_tree / f"{NB}.ipynb", _untag(1))
    assert errors(lesson_tree) == [
        f"{NB}.ipynb: tag the Colab cell (first code cell) remove-cell"
    ]


def test_a_widget_runs_only_for_a_reader(lesson_tree, edit_nb):
    def widget(nb):
        nb["cells"][3]["source"] += "\nwidgets.interact(show, beta=(0, 5))"
        nb["cells"][3]["metadata"]["tags"] = ["remove-output"]

    edit_nb(lesson_tree / f"{NB}.ipynb", widget)
    found = errors(lesson_tree)
    assert any(
        "cell 3 shows a widget: tag it skip-execution, nbval-skip" in e
        for e in found
    ), found

    def tag(nb):
        nb["cells"][3]["metadata"]["tags"] = list(static_checks.WIDGET_TAGS)

    edit_nb(lesson_tree / f"{NB}.ipynb", tag)
    assert not any("widget" in e for e in errors(lesson_tree))


def test_a_no_difference_claim_needs_positive_controls(
    lesson_tree, write_registry, registry_entry, edit_nb
):
    entry = {**registry_entry("C0.1", NB), "form": "no difference"}
    write_registry(lesson_tree, [entry])
    (error,) = errors(lesson_tree)
    assert error.startswith("C0.1: claims that something makes no difference")

    def add_positive(nb):
        cell = nb["cells"][5]
        text = "".join(cell["source"])
        cell["source"] = text.replace(
            "controls=",
            'positive_controls={"where it exists": False},\n    controls=',
        )

    edit_nb(lesson_tree / f"{NB}.ipynb", add_positive)
    assert errors(lesson_tree) == []
