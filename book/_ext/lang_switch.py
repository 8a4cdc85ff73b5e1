"""Sphinx extension: a language switch on every page, to the same page in the other edition.

The English book is the site's root (``_build/html/``), each other edition a folder of
it (``_build/html/ja/``), all built from the same sources (one Sphinx build per
language, ``-D language=ja``). Config (``_config.yml`` → ``sphinx: config:``)::

    book_editions: [[en, English, ""], [ja, 日本語, ja]]   # language, label, folder

The switch is a template, ``lang-switch.html`` (``templates/`` beside this file), put in
front of the article-header buttons of sphinx-book-theme (top right of every page). Each
page also gets ``<link rel="alternate" hreflang=...>`` for every edition. Sphinx writes
``<html lang="...">`` from ``language`` itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config

TEMPLATES = Path(__file__).with_name("templates")
DEFAULT_EDITIONS = [["en", "English", ""], ["ja", "日本語", "ja"]]


def edition(config: Config) -> str:
    """The build's language without its region: ``ja_JP`` → ``ja``."""
    return (config.language or "en").split("_")[0]


def _config_inited(app: Sphinx, config: Config) -> None:
    lang = edition(config)
    if lang in config.book_titles:  # the book's title in this edition
        config.html_title = config.book_titles[lang]
    config.templates_path.append(
        str(TEMPLATES)
    )  # absolute: works from any -c folder
    options = config.html_theme_options
    end = list(
        options.get("article_header_end") or ["article-header-buttons.html"]
    )
    if "lang-switch.html" not in end:
        options["article_header_end"] = ["lang-switch.html", *end]


def _current(app: Sphinx) -> str:
    langs = [e[0] for e in app.config.book_editions]
    lang = edition(app.config)
    return lang if lang in langs else langs[0]


def edition_url(
    pagename: str, target_uri: str, current_folder: str, other_folder: str
) -> str:
    """Relative URL, from ``pagename`` in the edition at ``current_folder``, of the same
    page in the edition at ``other_folder`` (folders relative to the site root)."""
    up = pagename.count("/") + (
        len(current_folder.strip("/").split("/")) if current_folder else 0
    )
    prefix = "../" * up + (
        other_folder.strip("/") + "/" if other_folder else ""
    )
    return prefix + target_uri


def _page_context(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree
) -> None:
    if app.builder.format != "html":
        return
    current = _current(app)
    folders = {
        lang: folder for lang, _label, folder in app.config.book_editions
    }
    uri = app.builder.get_target_uri(pagename)
    entries = []
    for lang, label, folder in app.config.book_editions:
        url = edition_url(pagename, uri, folders[current], folder)
        entries.append(
            {
                "lang": lang,
                "label": label,
                "url": url,
                "current": lang == current,
            }
        )
    context["book_editions"] = entries
    links = "".join(
        f'<link rel="alternate" hreflang="{e["lang"]}" href="{e["url"]}" />\n'
        for e in entries
        if not e["current"]
    )
    context["metatags"] = context.get("metatags", "") + links


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("book_editions", DEFAULT_EDITIONS, "html", [list])
    app.add_config_value("book_titles", {}, "html", [dict])
    app.connect("config-inited", _config_inited)
    app.connect("html-page-context", _page_context)
    return {
        "version": "0.1",
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
