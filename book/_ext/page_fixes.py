"""Sphinx extension: two fixes the browser test (tests/browser) found in every page.

1. Sphinx 7.4 writes each inline script that an extension adds with
   ``app.add_js_file(None, body=...)`` twice (once from the registry, once from the
   builder), so sphinx-thebe's ``const THEBE_JS_URL = ...`` is declared twice and the
   browser raises "Identifier 'THEBE_JS_URL' has already been declared" on every page.
   We drop exact duplicates from each page's script list.
2. pydata-sphinx-theme logs "Got invalid theme mode" on a reader's first visit unless
   the page context's ``default_mode`` is set (``html_context``, which jupyter-book's
   ``_config.yml`` cannot reach), so we default it to ``auto`` (follow the reader's
   system setting).

Loaded by ``claims_ledger`` (the one local extension ``_config.yml`` names).
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config


def _default_mode(app: Sphinx, config: Config) -> None:
    config.html_context.setdefault("default_mode", "auto")


def _script_key(script: Any) -> tuple:
    attributes = getattr(script, "attributes", {}) or {}
    return (getattr(script, "filename", str(script)) or "", tuple(sorted(attributes.items())))


def _dedupe_scripts(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    seen: set[tuple] = set()
    unique = []
    for script in scripts:
        key = _script_key(script)
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("config-inited", _default_mode)
    app.connect("html-page-context", _dedupe_scripts)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
