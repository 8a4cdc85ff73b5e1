"""Japanese notebooks, made from the English lessons and the Japanese catalogs.

The English notebooks are the one source. A Japanese notebook is the same
notebook with each markdown block replaced by its translation from
``locale/ja/LC_MESSAGES/<notebook>.po`` (the catalog Sphinx's Japanese build
reads); code cells, their metadata and tags stay byte for byte the same. A
message id is the block's MyST source with its line breaks made spaces, so a
block is found by its words (any whitespace between them) and replaced whole.

As a Sphinx extension (the Japanese build): each lesson's download button
serves the Japanese ``.ipynb``. As a script, for ``make lab-ja``::

    python book/_ext/ja_notebooks.py OUT   # writes OUT/notebooks/**.ipynb
"""

from __future__ import annotations

import copy
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
LOCALE = ROOT / "locale" / "ja" / "LC_MESSAGES"
# what may stand before a block on its first line: a heading's #, a list
# bullet or number, a quote, an admonition's directive (its title)
_LEAD = r"[ \t]*(?:#{1,6}[ \t]+|[-*+][ \t]+|\d+\.[ \t]+|>[ \t]*|:::\{[\w-]+\}[ \t]*)?"


def catalog(po: Path) -> dict[str, str]:
    """``{msgid: msgstr}`` of a catalog's translated, non-fuzzy messages."""
    from babel.messages.pofile import read_po

    with po.open("rb") as f:
        cat = read_po(f)
    return {
        m.id: m.string
        for m in cat
        if m.id and isinstance(m.id, str) and m.string and not m.fuzzy
    }


def _pattern(msgid: str) -> re.Pattern[str]:
    words = [re.escape(w) for w in msgid.split()]
    body = r"\s+".join(words)
    return re.compile(rf"(?m)^({_LEAD}){body}[ \t]*$")


def translate_markdown(text: str, messages: dict[str, str]) -> str:
    """``text`` with every block whose words are a message id replaced by
    its translation (longest ids first, so a short id never splits a long
    block)."""
    for msgid in sorted(messages, key=len, reverse=True):
        pat = _pattern(msgid)
        msgstr = messages[msgid]
        text = pat.sub(lambda m, s=msgstr: m.group(1) + s, text)
    return "\n".join(_table_row(line, messages) for line in text.split("\n"))


def _table_row(line: str, messages: dict[str, str]) -> str:
    """A table row with each cell translated (a cell is one message)."""
    if not line.lstrip().startswith("|"):
        return line
    cells = line.split("|")
    for i, cell in enumerate(cells[1:-1], start=1):
        words = " ".join(cell.split())
        if words in messages:
            cells[i] = f" {messages[words]} "
    return "|".join(cells)


def translate_notebook(
    nb: dict[str, Any], messages: dict[str, str]
) -> dict[str, Any]:
    """A copy of ``nb`` whose markdown cells are translated; code cells are
    the very same objects' copies."""
    out = copy.deepcopy(nb)
    for cell in out["cells"]:
        if cell["cell_type"] == "markdown":
            src = "".join(cell["source"])
            cell["source"] = translate_markdown(src, messages)
    return out


def japanese(notebook: Path, root: Path = ROOT) -> dict[str, Any]:
    """The Japanese version of one lesson (``notebooks/…/x.ipynb``)."""
    rel = notebook.resolve().relative_to(root)
    po = root / "locale" / "ja" / "LC_MESSAGES" / rel.with_suffix(".po")
    if not po.is_file():
        raise ValueError(f"{rel} has no Japanese catalog at {po}")
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    return translate_notebook(nb, catalog(po))


def write_all(out: Path, root: Path = ROOT) -> list[Path]:
    """Write every lesson's Japanese notebook under ``out``, the English
    folder layout kept; returns the paths written."""
    written = []
    for nb in sorted((root / "notebooks").rglob("*.ipynb")):
        if ".ipynb_checkpoints" in nb.parts:
            continue
        target = out / nb.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(japanese(nb, root), ensure_ascii=False, indent=1)
        target.write_text(text + "\n", encoding="utf-8")
        written.append(target)
    return written


def _build_finished(app: Any, exception: Exception | None) -> None:
    """In the Japanese build, the lessons' downloadable sources become the
    Japanese notebooks."""
    if exception or (app.config.language or "en").split("_")[0] != "ja":
        return
    if app.builder.format != "html":
        return
    root = Path(app.srcdir)
    write_all(Path(app.outdir) / "_sources", root)


def setup(app: Any) -> dict[str, Any]:
    app.connect("build-finished", _build_finished)
    return {"version": "1", "parallel_read_safe": True}


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python book/_ext/ja_notebooks.py OUT")
    for path in write_all(Path(sys.argv[1])):
        print(path)
