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


@pytest.mark.slow
def test_chapters_are_numbered_from_the_configured_start(fixture_book):
    book = fixture_book(
        {"intro": "I\n=\n\nx\n", "a": "A\n=\n\nx\n", "b": "B\n=\n\nx\n"},
        extensions=("sphinx_external_toc", "page_fixes"),
        conf="external_toc_path = '_toc.yml'\n"
        "book_chapter_start = {'numerical': 0}\n",
    )
    (book.src / "_toc.yml").write_text(
        "format: jb-book\nroot: intro\nparts:\n  - caption: P\n"
        "    numbered: true\n    chapters:\n      - file: a\n      - file: b\n"
    )
    result = book.build()
    assert result.returncode == 0, result.stderr
    assert '<h1><span class="section-number">0. </span>A' in book.html("a")
    assert '<h1><span class="section-number">1. </span>B' in book.html("b")


@pytest.mark.slow
def test_thebe_adds_no_script_to_the_pages(fixture_book):
    """jupyter-book always loads sphinx-thebe; the book has no thebe button,
    and its inline script, written twice, broke every page's JavaScript."""
    pages = {"index": "I\n=\n\nx\n"}
    for fixes in ((), ("page_fixes",)):  # the control first: thebe alone
        book = fixture_book(pages, extensions=("sphinx_thebe", *fixes))
        assert book.build().returncode == 0
        scripts = book.html("index").count("THEBE_JS_URL")
        assert scripts == (0 if fixes else 2), fixes
