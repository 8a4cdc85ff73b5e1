"""Sphinx extension: figures in the reader's language.

Each figure a lesson shows carries its Japanese drawing in its output's
metadata (``livingdict.figure_words``: drawn where the notebook displays the
figure, when the book is built). This extension

- in the **gettext** build, adds the figure's words to the lesson's messages
  (hidden paragraphs beside the image), so that ``make i18n-update`` puts
  them in the lesson's catalog like every other sentence of the page;
- in the **Japanese** build, shows the Japanese drawing instead of the
  English one (class ``figure-ja``), and warns — an error under ``-W`` —
  when a word has no translation, when an English word is left, when the
  Japanese text made the figure grow past its canvas, or when a translation
  changed after the figure was drawn (``make execute`` draws it again).
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)
#: How much larger a Japanese drawing may be than the English one: a title
#: or label longer than the canvas makes the tight-cropped image grow.
GROWTH = 1.05


def _messages(env: Any) -> dict[str, str]:
    """The translations the kernel drew the document's figures with: the
    catalogs of the lesson's folder (``figure_words.folder_messages``)."""
    from livingdict.figure_words import folder_messages

    return folder_messages(Path(env.srcdir, env.docname).parent)


def _image(self: Any, data: Any, original: Any) -> list[nodes.Element]:
    out = original(self, data)
    meta = (data.output_metadata.get(data.mime_type) or {}).get("livingdict")
    document = self.renderer.document
    env = getattr(document.settings, "env", None)
    if not meta or env is None or data.mime_type != "image/png":
        return out
    if env.app.builder.name == "gettext":
        words = nodes.container(classes=["figure-words"])
        for word in meta.get("words", []):
            para = nodes.paragraph(word, word)
            para.source, para.line = document["source"], data.line
            words += para
        return [*out, words]
    if (env.config.language or "en").split("_")[0] != "ja":
        return out
    where = f"{env.docname} (line {data.line})"
    from livingdict.figure_words import english, stale

    changed = stale(meta, _messages(env))
    problems = {
        "has no translation for": meta.get("missing", []),
        # judged again with the names the package keeps now
        "still draws English": [
            d for d in meta.get("english", []) if english(d)
        ],
        "was drawn before its translation changed:": changed,
        "was drawn with warnings:": meta.get("warnings", []),
    }
    for what, items in problems.items():
        if items:
            logger.warning(
                "Japanese figure of %s %s %s",
                where,
                what,
                "; ".join(map(repr, items)),
                location=(env.docname, data.line),
            )
    (w, h), (w_ja, h_ja) = (
        meta.get("size", (1, 1)),
        meta.get("size_ja", (1, 1)),
    )
    if w_ja > GROWTH * w or h_ja > GROWTH * h:
        logger.warning(
            "Japanese figure of %s: its text reaches past the canvas "
            "(%d × %d px, the English %d × %d)",
            where,
            w_ja,
            h_ja,
            w,
            h,
            location=(env.docname, data.line),
        )
    uri = None
    if meta.get("words"):  # a figure without words is the same drawing
        ja = base64.b64decode(meta["ja"])
        name = hashlib.sha256(ja).hexdigest() + ".png"
        uri = self.write_file([name], ja, overwrite=False, exists_ok=True)
    for node in out:
        if isinstance(node, nodes.image):
            node["uri"] = uri or node["uri"]
            node["classes"].append("figure-ja")
    return out


def setup(app: Sphinx) -> dict[str, Any]:
    from myst_nb.core.render import NbElementRenderer

    original = NbElementRenderer.render_image
    if not getattr(original, "_figure_words", False):

        def render_image(self: Any, data: Any) -> list[nodes.Element]:
            return _image(self, data, original)

        render_image._figure_words = True  # type: ignore[attr-defined]
        NbElementRenderer.render_image = render_image  # type: ignore[method-assign]
    return {"version": "1", "parallel_read_safe": True}
