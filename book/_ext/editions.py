"""Sphinx extension: one book, an edition per language (``-D language=ja``).

The English edition is the site's root, each other edition a folder of it
(``book_editions: [[en, English, ""], [ja, 日本語, ja]]``: language, label,
folder). This extension gives every page a switch to the same page in the
other edition (``templates/lang-switch.html``, before the article-header
buttons of sphinx-book-theme) and ``<link rel="alternate" hreflang>``; what
the edition changes of the configuration (``edition_config``: its title,
myst-nb's fold buttons, which Sphinx does not translate); the glossary of
``book/terms.yml`` (``{book-glossary}``: each entry headed by the edition's
name, then the other; both names are terms), whose definitions the page's
catalog translates. And it closes gaps of Sphinx i18n with myst-nb and
sphinx-external-toc (a third: ``_own_document``):

1. Sphinx's ``Locale`` transform parses each translated message as a small
   document of its own, which myst-nb 1.4 hands to the MyST parser without
   the notebook's glue data (``document["nb_renderer"]``): every
   ``{glue:text}`` in a translation would warn and render nothing. The
   small document gets a stand-in renderer holding the notebook's glue
   data, which myst-nb wrote to ``<output_folder>/<docname>.glue.json``
   while reading the notebook a moment before.
2. sphinx-external-toc inserts the root page's toctrees (priority 100) after
   ``Locale`` (20) has translated the page: their captions, extracted into
   the page's catalog, were never applied. It inserts them at 5, before
   Sphinx preserves (10) and translates (20) a toctree's messages.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import yaml
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.util.docutils import SphinxDirective
from sphinx_external_toc.events import InsertToctrees

HERE = Path(__file__).parent
TERMS = HERE.parent / "terms.yml"


def edition(config: Config) -> str:
    """The build's language without its region: ``ja_JP`` → ``ja``."""
    return (config.language or "en").split("_")[0]


def edition_url(page: str, uri: str, here: str, there: str) -> str:
    """The relative URL, from ``page`` in the edition at folder ``here``,
    of the same page in the edition at ``there`` (folders of the site)."""
    up = page.count("/") + (len(here.strip("/").split("/")) if here else 0)
    return "../" * up + (there.strip("/") + "/" if there else "") + uri


def _config_inited(app: Sphinx, config: Config) -> None:
    for key, value in config.edition_config.get(edition(config), {}).items():
        setattr(config, key, value)  # after -D language=ja, before use
    config.templates_path.append(str(HERE / "templates"))
    options = config.html_theme_options
    end = options.get("article_header_end") or ["article-header-buttons.html"]
    if "lang-switch.html" not in end:
        options["article_header_end"] = ["lang-switch.html", *end]


def _page_context(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any
) -> None:
    editions = app.config.book_editions
    langs = [lang for lang, _, _ in editions]
    current = edition(app.config) if edition(app.config) in langs else langs[0]
    here = next(folder for lang, _, folder in editions if lang == current)
    uri = app.builder.get_target_uri(pagename)
    context["book_editions"] = []
    for lang, label, folder in editions:
        url = edition_url(pagename, uri, here, folder)
        entry = {"lang": lang, "label": label, "url": url}
        context["book_editions"].append(entry | {"current": lang == current})
        if lang != current:
            link = f'<link rel="alternate" hreflang="{lang}" href="{url}" />'
            context["metatags"] = context.get("metatags", "") + link + "\n"


def load_terms(path: Path = TERMS) -> list[dict[str, Any]]:
    """The term list, checked: every entry has ``en``, ``ja`` and a
    ``definition``; no name appears twice."""
    terms = yaml.safe_load(path.read_text(encoding="utf-8"))
    for t in terms:
        if missing := [k for k in ("en", "ja", "definition") if not t.get(k)]:
            raise ValueError(f"{path.name}: {t.get('en')!r} lacks {missing}")
    names = Counter(n for t in terms for n in (t["en"].lower(), t["ja"]))
    if twice := [name for name, n in names.items() if n > 1]:
        raise ValueError(f"{path.name}: {', '.join(twice)} listed twice")
    return terms


def glossary_source(terms: list[dict[str, Any]], language: str) -> list[str]:
    """The lines of a MyST ``{glossary}`` for one edition."""
    lines = ["```{glossary}"]
    for t in terms:
        names = [t["ja"], t["en"]] if language == "ja" else [t["en"], t["ja"]]
        body = " ".join(t["definition"].split())
        body += " *(The essay's own word.)*" if t.get("essay") else ""
        lines += [*names, f"  {body}", ""]
    return [*lines, "```"]


class BookGlossary(SphinxDirective):
    """``{book-glossary}``: the glossary of ``book/terms.yml``."""

    def run(self) -> list[nodes.Node]:
        self.env.note_dependency(str(TERMS))
        source = glossary_source(load_terms(), edition(self.config))
        box = nodes.container(classes=["book-glossary"])
        lines = StringList(source, str(TERMS))
        self.state.nested_parse(lines, self.content_offset, box)
        return box.children


def _patch_parser() -> None:
    """Gap 1: glue data for the small documents of translated messages."""
    from myst_nb.ext.glue.crossref import read_glue_cache
    from myst_nb.sphinx_ import Parser

    original = Parser.parse

    def parse(self: Any, inputstring: str, document: Any) -> None:
        env = document.settings.env
        if document.current_source.endswith("<translated>"):
            config = env.mystnb_config
            glue = read_glue_cache(config.output_folder, env.docname)
            client = SimpleNamespace(glue_data=glue)
            inner = SimpleNamespace(nb_client=client, nb_config=config)
            renderer = SimpleNamespace(renderer=inner, config=config)
            document["nb_renderer"] = renderer
        return original(self, inputstring, document)

    Parser.parse = parse


def _own_document(app: Sphinx, doctree: nodes.document) -> None:
    """Gap 3: nodes that ``Locale`` moved in from a translated message's
    small document still point to it, and through its settings to the
    build environment, which each translated page then pickled (3.6 MB
    against 0.14 MB; every read of a page unpickled it)."""
    for node in doctree.findall():
        if node._document not in (None, doctree):
            node._document = doctree


def setup(app: Sphinx) -> None:
    default = [["en", "English", ""], ["ja", "日本語", "ja"]]
    app.add_config_value("book_editions", default, "html", [list])
    app.add_config_value("edition_config", {}, "env", [dict])
    app.connect("config-inited", _config_inited)
    app.connect("html-page-context", _page_context)
    app.add_directive("book-glossary", BookGlossary)
    InsertToctrees.default_priority = 5  # gap 2
    app.connect("doctree-read", _own_document)
    _patch_parser()
