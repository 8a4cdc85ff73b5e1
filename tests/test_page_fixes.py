"""book/_ext/page_fixes.py: a citation links to its own chapter's reference list.

A fixture book with two chapters that cite the same work, each with a filtered
bibliography on its landing page, and the book's full bibliography.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

BIB = Path(__file__).resolve().parents[1] / "book" / "references.bib"
CONF = f"""
bibtex_bibfiles = [{str(BIB)!r}]
bibtex_reference_style = "author_year"
suppress_warnings = ["bibtex.duplicate_citation"]
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


@pytest.mark.slow
def test_citations_link_to_their_chapters_list(fixture_book):
    book = fixture_book(
        PAGES,
        extensions=("page_fixes", "sphinxcontrib.bibtex"),
        conf=CONF,
    )
    result = book.build()
    assert result.returncode == 0, result.stderr

    def target(page: str) -> str:
        html = book.html(page)
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
