"""book/_ext/page_fixes.py: a citation links to its own chapter's reference list.

A fixture book with two chapters that cite the same work, each with a filtered
bibliography on its landing page, and the book's full bibliography.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONF = f"""
import sys
sys.path.insert(0, {str(ROOT / "book" / "_ext")!r})
extensions = ["claims_ledger", "sphinxcontrib.bibtex"]
bibtex_bibfiles = [{str(ROOT / "book" / "references.bib")!r}]
bibtex_reference_style = "author_year"
suppress_warnings = ["bibtex.duplicate_citation"]
project = "fixture"
"""
PAGES = {
    "index": "Book\n====\n\n.. toctree::\n\n   ch1\n   ch4\n   ch0\n   bibliography\n",
    "ch1": "Ch1\n===\n\n.. toctree::\n\n   ch1_lesson\n\n"
    '.. bibliography::\n   :filter: docnames & {"ch1_lesson"}\n',
    "ch1_lesson": "L1\n==\n\nSee :cite:t:`geva2021transformer`.\n",
    "ch4": "Ch4\n===\n\n.. toctree::\n\n   ch4_lesson\n\n"
    '.. bibliography::\n   :filter: docnames & {"ch4_lesson"}\n',
    "ch4_lesson": "L4\n==\n\nSee :cite:t:`geva2021transformer`.\n",
    "ch0": "Ch0\n===\n\nSee :cite:t:`geva2021transformer`.\n",
    "bibliography": "Bibliography\n============\n\n.. bibliography::\n",
}


def test_citations_link_to_their_chapters_list(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(CONF)
    for name, text in PAGES.items():
        (src / f"{name}.rst").write_text(text)
    cmd = [
        sys.executable,
        "-m",
        "sphinx",
        "-W",
        "-q",
        "-b",
        "html",
        str(src),
        str(tmp_path / "o"),
    ]
    result = subprocess.run(cmd, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr

    def target(page: str) -> str:
        html = (tmp_path / "o" / f"{page}.html").read_text()
        (href,) = set(
            re.findall(
                r'class="reference internal" href="([^"#]*)#id\d+"', html
            )
        )
        return href

    assert target("ch1_lesson") == "ch1.html"
    assert target("ch4_lesson") == "ch4.html"
    assert (
        target("ch0") == "bibliography.html"
    )  # no chapter list above it: the book's
