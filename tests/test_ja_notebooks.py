"""Japanese notebooks: the English code, the Japanese prose (issue 22)."""

import json
import re
from pathlib import Path

import ja_notebooks  # book/_ext, on sys.path from conftest
import pytest

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted((ROOT / "notebooks").rglob("[0-9]*.ipynb"))
CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
# what may stay English in Japanese prose: code, math, roles and their
# targets, links' targets, directive lines
_NOT_PROSE = re.compile(
    r"```.*?```|\$\$.*?\$\$|\$[^$\n]*\$|`[^`]*`|\{[\w:-]+\}|\]\([^)]*\)"
    r"|^:::.*$|^:\w+:.*$|<[^>]*>",
    re.S | re.M,
)
# six Latin words in a row, outside code and math, is an English sentence
ENGLISH = re.compile(r"(?:\b[A-Za-z][a-z'’]+\b[ ,;]+){5}[A-Za-z][a-z]+")


def english_blocks(nb: dict) -> list[str]:
    """The markdown blocks of a notebook that still read as English."""
    found = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        for block in re.split(r"\n\s*\n", "".join(cell["source"])):
            prose = _NOT_PROSE.sub(" ", block)
            if ENGLISH.search(prose) and not CJK.search(prose):
                found.append(block)
    return found


def test_a_paragraph_heading_list_table_and_admonition_are_translated():
    messages = {
        "What we found": "分かったこと",
        "A key reads the table, one row per slot.": "キーが表を読む。",
        "first item": "一つ目",
        "Claim C1.1": "主張 C1.1",
        "layer": "層",
    }
    text = (
        "## What we found\n\nA key reads the table,\none row per slot.\n\n"
        "- first item\n\n:::{admonition} Claim C1.1\n:class: important\n"
        ":::\n\n| layer | `x` |\n|---|---|\n"
    )
    out = ja_notebooks.translate_markdown(text, messages)
    assert out == (
        "## 分かったこと\n\nキーが表を読む。\n\n- 一つ目\n\n"
        ":::{admonition} 主張 C1.1\n:class: important\n:::\n\n"
        "| 層 | `x` |\n|---|---|\n"
    )


def test_a_short_message_never_splits_a_longer_block():
    messages = {"ReLU": "ランプ", "ReLU cuts it to zero.": "ReLUは0にする。"}
    out = ja_notebooks.translate_markdown("ReLU cuts it to zero.", messages)
    assert out == "ReLUは0にする。"
    assert ja_notebooks.translate_markdown("We use ReLU.", messages) == (
        "We use ReLU."
    )


def test_a_block_without_its_translation_stays_english_and_is_seen():
    nb = {
        "cells": [
            {
                "cell_type": "markdown",
                "source": "A sentence that no catalog has translated yet.",
            },
            {"cell_type": "code", "source": "x = 1", "metadata": {}},
        ]
    }
    out = ja_notebooks.translate_notebook(nb, {"Other": "他"})
    assert english_blocks(out) == [
        "A sentence that no catalog has translated yet."
    ]


@pytest.mark.parametrize(
    "lesson", LESSONS, ids=[p.relative_to(ROOT).as_posix() for p in LESSONS]
)
def test_every_japanese_notebook_has_the_english_code_and_japanese_prose(
    lesson,
):
    en = json.loads(lesson.read_text(encoding="utf-8"))
    ja = ja_notebooks.japanese(lesson)
    assert len(ja["cells"]) == len(en["cells"])
    for a, b in zip(en["cells"], ja["cells"], strict=True):
        assert a["cell_type"] == b["cell_type"]
        if a["cell_type"] == "code":
            assert a == b  # source, metadata, tags: byte for byte
    assert english_blocks(ja) == []
    markdown = [c for c in ja["cells"] if c["cell_type"] == "markdown"]
    prose = [c for c in markdown if CJK.search("".join(c["source"]))]
    assert len(prose) >= 0.8 * len(markdown)


def test_the_script_writes_every_lesson(tmp_path):
    written = ja_notebooks.write_all(tmp_path)
    assert {p.relative_to(tmp_path) for p in written} == {
        p.relative_to(ROOT) for p in LESSONS
    }
    nb = json.loads(written[0].read_text(encoding="utf-8"))
    first = next(c for c in nb["cells"] if c["cell_type"] == "markdown")
    assert CJK.search("".join(first["source"]))
