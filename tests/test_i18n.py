"""The Japanese edition's machinery: catalogs checked, links between editions."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))

import claims_ledger  # noqa: E402
import editions  # noqa: E402

from livingdict import claims  # noqa: E402
from tools import static_checks  # noqa: E402

PO_HEAD = (
    'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
)


def po(path: Path, entries: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(PO_HEAD + entries, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("page", "here", "there", "url"),
    [
        ("book/intro", "", "ja", "../ja/book/intro.html"),
        ("book/intro", "ja", "", "../../book/intro.html"),
        (
            "notebooks/02_mlp/03_x",
            "",
            "ja",
            "../../ja/notebooks/02_mlp/03_x.html",
        ),
        ("index", "ja", "", "../index.html"),
    ],
)
def test_the_switch_links_to_the_same_page(page, here, there, url):
    assert editions.edition_url(page, page + ".html", here, there) == url


def test_the_registry_gives_every_shown_text_and_no_essay_phrase():
    texts = set(claims_ledger.registry_messages())
    reg = claims.registry()
    assert reg["C0.1"]["claim"].strip().split()[0] in " ".join(texts)
    assert " ".join(reg["C0.1"]["why"].split()) in {
        " ".join(t.split()) for t in texts
    }
    assert "holds" in texts and "Beyond the essay" in texts
    assert not any(
        e.get("essay") in texts for e in reg.values() if e.get("essay")
    )


def test_markup_a_translation_must_keep():
    en = "See {term}`key` and {cite:t}`geva2021transformer`, $x W$ [here](a.md)."
    ja = "{term}`キー <key>` と {cite:t}`geva2021transformer` を見よ。$x W$ [ここ](a.md)"
    assert static_checks.markup(en) == static_checks.markup(ja)
    assert static_checks.markup(en) != static_checks.markup(
        "{term}`キー` のみ"
    )


def catalogs(tmp_path: Path, entry: str) -> Path:
    locale = tmp_path / "locale"
    po(locale / "ja" / "LC_MESSAGES" / "book" / "intro.po", entry)
    return locale


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ('msgid "The key."\nmsgstr ""\n', "untranslated"),
        ('#, fuzzy\nmsgid "The key."\nmsgstr "キー。"\n', "fuzzy"),
        (
            'msgid "A"\nmsgstr "あ"\n\n#~ msgid "Old."\n#~ msgstr "古い。"\n',
            "obsolete",
        ),
        ('msgid "The {term}`key`."\nmsgstr "キー。"\n', "inconsistent markup"),
    ],
)
def test_the_check_refuses_each_problem(tmp_path, entry, problem):
    errors = static_checks.check_catalogs(catalogs(tmp_path, entry))
    assert errors and errors[0].startswith(problem)


def test_a_complete_catalog_passes(tmp_path):
    done = 'msgid "The {term}`key`."\nmsgstr "{term}`キー <key>`。"\n'
    assert static_checks.check_catalogs(catalogs(tmp_path, done)) == []


def i18n_current(folder: Path) -> subprocess.CompletedProcess:
    """``make i18n-current`` in ``folder``, on its ``_build/gettext``."""
    cmd = ["make", "-f", str(ROOT / "Makefile"), "-o", "gettext"]
    cmd += ["i18n-current", f"BIN={ROOT / '.venv' / 'bin'}"]
    return subprocess.run(cmd, cwd=folder, capture_output=True, text=True)


@pytest.mark.slow
def test_an_english_edit_without_update_is_out_of_date(tmp_path):
    locale = catalogs(tmp_path, 'msgid "The key."\nmsgstr "キー。"\n')
    po(locale / "ja/LC_MESSAGES/book/old.po", 'msgid "Gone."\nmsgstr "消"\n')
    before = {p: p.read_bytes() for p in locale.rglob("*.po")}
    pots = tmp_path / "_build" / "gettext" / "book"
    po(pots / "intro.pot", 'msgid "The key."\nmsgstr ""\n')
    po(pots / "old.pot", 'msgid "Gone."\nmsgstr ""\n')
    assert i18n_current(tmp_path).returncode == 0
    po(pots / "intro.pot", 'msgid "The keys."\nmsgstr ""\n')
    po(pots / "old.pot", 'msgid "Something else entirely."\nmsgstr ""\n')
    po(pots / "new.pot", 'msgid "New."\nmsgstr ""\n')
    result = i18n_current(tmp_path)
    assert result.returncode != 0 and "out of date" in result.stdout
    assert '+msgid "The keys."' in result.stdout  # new English
    assert '+#~ msgid "Gone."' in result.stdout  # stale
    assert "book/new.po" in result.stdout  # a new page
    after = {p: p.read_bytes() for p in locale.rglob("*.po")}
    assert after == before  # locale/ untouched


def test_a_linked_term_keeps_its_japanese_name(tmp_path):
    names = {"filter": "フィルター", "key": "キー"}
    en = "Match against the {term}`filters <filter>`; the {term}`key` reads."
    good = "{term}`フィルター <filter>` と照合し、{term}`キー <key>` が読む。"
    bad = "{term}`フィルタ <filter>` と照合し、{term}`鍵 <key>` が読む。"
    assert static_checks.terminology(en, good, names) == []
    assert static_checks.terminology(en, bad, names) == [
        "filter → フィルター",
        "key → キー",
    ]
    entry = f'msgid "{en}"\nmsgstr "{bad}"\n'
    errors = static_checks.check_catalogs(catalogs(tmp_path, entry))
    assert [e.split(":")[0] for e in errors] == ["terminology", "terminology"]


def test_the_essays_names_only_in_quotation(tmp_path):
    quoted = 'msgid "The map."\nmsgstr "エッセイの「Attention weight map」"\n'
    assert static_checks.check_catalogs(catalogs(tmp_path, quoted)) == []
    entry = 'msgid "A causal mask."\nmsgstr "causal attention mask。"\n'
    (error,) = static_checks.check_catalogs(catalogs(tmp_path, entry))
    assert error.startswith("essay's name:")
    assert error.endswith("say causal attention mask → 因果マスク")


def test_the_term_list_gives_both_names_for_every_term():
    listed = editions.load_terms()
    assert {"en": "filter", "ja": "フィルター"}.items() <= listed[
        [t["en"] for t in listed].index("filter")
    ].items()
    en_first = editions.glossary_source(listed, "en")
    ja_first = editions.glossary_source(listed, "ja")
    assert en_first[1:3] == [listed[0]["en"], listed[0]["ja"]]
    assert ja_first[1:3] == [listed[0]["ja"], listed[0]["en"]]
    assert static_checks.term_names()["filter"] == "フィルター"


def test_the_term_list_refuses_gaps_and_doubles(tmp_path):
    path = tmp_path / "terms.yml"
    path.write_text("- {en: key, definition: d}\n", encoding="utf-8")
    with pytest.raises(ValueError, match="lacks"):
        editions.load_terms(path)
    path.write_text(
        "- {en: key, ja: キー, definition: d}\n- {en: Key, ja: 鍵, definition: d}\n",
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match="listed twice"):
        editions.load_terms(path)


@pytest.mark.slow
def test_the_tocs_captions_are_translated(fixture_book):
    """sphinx-external-toc's toctrees (a part's caption, a chapter's title)
    are in the page's catalog, and the Japanese page shows them."""
    book = fixture_book(
        {"book/intro": "Intro\n=====\n\nx\n", "book/a": "A\n=\n\nx\n"},
        extensions=("sphinx_external_toc", "editions"),
        conf="external_toc_path = '_toc.yml'\nlanguage = 'ja'\n"
        "locale_dirs = ['locale']\ngettext_compact = False\n"
        "html_theme = 'sphinx_book_theme'\n",
    )
    (book.src / "_toc.yml").write_text(
        "format: jb-book\nroot: book/intro\nparts:\n  - caption: The lessons"
        "\n    chapters:\n      - file: book/a\n        title: Chapter A\n"
    )
    po(
        book.src / "locale" / "ja" / "LC_MESSAGES" / "book" / "intro.po",
        'msgid "The lessons"\nmsgstr "授業"\n\n'
        'msgid "Chapter A"\nmsgstr "第A章"\n',
    )
    result = book.build()
    assert result.returncode == 0, result.stderr
    page = book.html("book/intro")
    assert "授業" in page and "第A章" in page
    assert "The lessons" not in page and "Chapter A" not in page


@pytest.mark.slow
def test_a_translation_keeps_the_lessons_glued_numbers(tmp_path):
    """A glued number in a translated message of a lesson is shown."""
    import json
    import subprocess

    src = tmp_path / "src"
    glue = {
        "output_type": "display_data",
        "data": {"application/papermill.record/text/plain": "42"},
        "metadata": {
            "scrapbook": {
                "name": "answer",
                "mime_prefix": "application/papermill.record/",
            }
        },
    }
    cells = [
        {"cell_type": "markdown", "id": "a", "metadata": {}, "source": "# L"},
        {
            "cell_type": "code",
            "id": "b",
            "metadata": {},
            "execution_count": 1,
            "source": "glue('answer', 42)",
            "outputs": [glue],
        },
        {
            "cell_type": "markdown",
            "id": "c",
            "metadata": {},
            "source": "The answer is {glue:text}`answer`.",
        },
    ]
    kernel = {"name": "python3", "language": "python", "display_name": "P"}
    nb = {"nbformat": 4, "nbformat_minor": 5, "cells": cells}
    nb["metadata"] = {"kernelspec": kernel}
    src.mkdir()
    (src / "lesson.ipynb").write_text(json.dumps(nb))
    (src / "index.md").write_text("# Book\n\n```{toctree}\nlesson\n```\n")
    po(
        src / "locale" / "ja" / "LC_MESSAGES" / "lesson.po",
        'msgid "The answer is {glue:text}`answer`."\n'
        'msgstr "答えは{glue:text}`answer`です。"\n',
    )
    (src / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT / 'book' / '_ext')!r})\n"
        "extensions = ['myst_nb', 'editions']\nproject = 'fixture'\n"
        "nb_execution_mode = 'off'\nlocale_dirs = ['locale']\n"
        "gettext_compact = False\nhtml_theme = 'sphinx_book_theme'\n"
    )
    cmd = [sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html"]
    cmd += ["-D", "language=ja", str(src), str(tmp_path / "ja")]
    run = subprocess.run(cmd, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    html = (tmp_path / "ja" / "lesson.html").read_text()
    assert '答えは<span class="pasted-text">42</span>です' in html
    # the translated nodes belong to the page, not to the small document
    # of their message (which holds the environment: 23 KB pickled, not 4)
    doctree = tmp_path / "ja" / ".doctrees" / "lesson.doctree"
    assert doctree.stat().st_size < 10_000
