"""Sphinx extension: two gaps of Sphinx i18n with jupyter-book/myst-nb, closed.

1. ``{glue:text}`` inside translated notebook messages.
2. The part captions of ``_toc.yml``: sphinx-external-toc inserts the root page's
   toctrees in a transform of priority 100, after Sphinx's ``Locale`` transform (20)
   has translated the page; the gettext builder extracts the captions (they are in
   ``book/intro.pot``) but a translated build never applies them. A transform at
   priority 110 applies the page's catalog to every toctree caption (and explicit
   entry title) afterwards.
3. myst-nb's fold buttons ("Show code cell source") are configuration, not
   text Sphinx extracts; in a Japanese build they are set in Japanese.

1. In a translated build (``-D language=ja``) Sphinx's ``Locale`` transform parses each
msgstr as a small, separate document (``<source>:<line>:<translated>``), which myst-nb
1.4 hands to the plain MyST parser. The glue roles look their data up on the document
(``document["nb_renderer"]``), which that small document does not have, and myst-nb
has already dropped it from the notebook's own document when the transform runs; so
every ``{glue:text}`key``` in a translation warns "No key ... found in glue data for
this document" and renders nothing.

We give the small document a stand-in renderer whose ``nb_client.glue_data`` is the
notebook's glue data, which myst-nb wrote to ``<output_folder>/<docname>.glue.json``
while reading that same notebook (from the jupyter cache) a moment before. Only the
data is needed by ``{glue:text}``; ``{glue:md}`` also reads ``nb_config``.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from lang_switch import edition
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.locale import init as init_locale
from sphinx.transforms import SphinxTransform
from sphinx.util.i18n import docname_to_domain


def _glue_data(env) -> dict | None:
    folder = getattr(env.mystnb_config, "output_folder", "")
    if not folder:
        return None
    path = Path(folder).joinpath(*(env.docname + ".glue.json").split("/"))
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def _patch_parser() -> None:
    from myst_nb.sphinx_ import Parser

    if getattr(Parser.parse, "_book_i18n", False):
        return
    original = Parser.parse

    def parse(self, inputstring: str, document) -> None:
        translated = document.current_source.endswith("<translated>")
        if translated and "nb_renderer" not in document:
            env = document.settings.env
            glue = _glue_data(env)
            if glue is not None:
                client = SimpleNamespace(glue_data=glue)
                inner = SimpleNamespace(
                    nb_client=client, nb_config=env.mystnb_config
                )
                document["nb_renderer"] = SimpleNamespace(
                    renderer=inner, config=env.mystnb_config
                )
                try:
                    return original(self, inputstring, document)
                finally:
                    document.attributes.pop("nb_renderer", None)
        return original(self, inputstring, document)

    parse._book_i18n = True  # type: ignore[attr-defined]
    Parser.parse = parse


class TranslateInsertedToctrees(SphinxTransform):
    """Translate toctree captions and titles that were inserted after ``Locale`` ran."""

    default_priority = (
        110  # after sphinx_external_toc.events.InsertToctrees (100)
    )

    def apply(self, **kwargs: Any) -> None:
        language = self.config.language
        if not language or language == "en" or not self.config.locale_dirs:
            return
        toctrees = list(self.document.findall(addnodes.toctree))
        if not toctrees:
            return
        domain = docname_to_domain(
            self.env.docname, self.config.gettext_compact
        )
        dirs = [str(Path(self.env.srcdir, d)) for d in self.config.locale_dirs]
        catalog, has_catalog = init_locale(dirs, language, domain)
        if not has_catalog:
            return
        for node in toctrees:
            caption = node.get("rawcaption") or node.get("caption")
            if caption and catalog.gettext(caption) != caption:
                node["rawcaption"] = caption
                node["caption"] = catalog.gettext(caption)
            node["entries"] = [
                (catalog.gettext(title) if title else title, ref)
                for title, ref in node["entries"]
            ]


#: myst-nb's fold buttons in each edition's language ({type}: the English
#: word "source", "outputs" or "content", so the Japanese leaves it out)
CODE_PROMPTS = {"ja": ("コードを表示", "コードを隠す")}


def translate_code_prompts(app: Sphinx, config: Any) -> None:
    """Set ``nb_code_prompt_show``/``_hide`` for the build's language (runs
    after ``-D language=ja`` is applied, before myst-nb reads them)."""
    prompts = CODE_PROMPTS.get(edition(config))
    if prompts:
        config.nb_code_prompt_show, config.nb_code_prompt_hide = prompts


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_transform(TranslateInsertedToctrees)
    app.connect("config-inited", translate_code_prompts)
    _patch_parser()
    return {
        "version": "0.1",
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
