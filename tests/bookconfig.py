"""What the tests need to know about the book's configuration (one place: _config.yml).

The repository URL and branch are set once, in ``_config.yml`` (``repository:``); the
launch buttons are derived from them by the theme, and every notebook's Colab cell must
name the same URL (``tests/test_colab.py``; ``python -m tools.set_repo_url`` rewrites
the cells after a fork changes the URL).
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlparse

import yaml

ROOT = Path(__file__).resolve().parents[1]

#: The first code cell of every notebook, with the repository URL filled in
#: (IPython expands ``$REPO`` in the magic; every line fits 79 characters).
COLAB_CELL = """# Colab only: install the book's helper package (does nothing elsewhere).
import sys

REPO = "{url}"
if "google.colab" in sys.modules:
    %pip install -q --no-deps "livingdict @ git+$REPO" mnist1d"""


@lru_cache(maxsize=1)
def config() -> dict:
    return yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))


def repo_url() -> str:
    return config()["repository"]["url"].rstrip("/")


def branch() -> str:
    return config()["repository"].get("branch", "main")


def github_slug() -> str:
    """``owner/name`` of the repository URL (which must be a GitHub URL)."""
    url = urlparse(repo_url())
    parts = url.path.strip("/").removesuffix(".git").split("/")
    if url.netloc != "github.com" or len(parts) != 2:
        raise ValueError(
            f"repository.url must be https://github.com/<owner>/<name>: {url}"
        )
    return "/".join(parts)


def _nb_path(docname: str) -> str:
    prefix = (config()["repository"].get("path_to_book") or "").strip("/")
    return "/".join(p for p in (prefix, docname + ".ipynb") if p)


def binder_url(docname: str) -> str:
    """The Binder launch URL of a notebook (JupyterLab interface)."""
    hub = config()["launch_buttons"]["binderhub_url"].rstrip("/")
    assert config()["launch_buttons"]["notebook_interface"] == "jupyterlab"
    return f"{hub}/v2/gh/{github_slug()}/{branch()}?urlpath=lab/tree/{_nb_path(docname)}"


def colab_url(docname: str) -> str:
    """The Colab launch URL of a notebook."""
    colab = config()["launch_buttons"]["colab_url"].rstrip("/")
    return (
        f"{colab}/github/{github_slug()}/blob/{branch()}/{_nb_path(docname)}"
    )


def colab_cell() -> str:
    return COLAB_CELL.format(url=repo_url())


def built_html() -> Path:
    """The built book to test: ``$LIVINGDICT_HTML`` or ``<repo>/_build/html``."""
    return Path(
        os.environ.get("LIVINGDICT_HTML", ROOT / "_build" / "html")
    ).resolve()


def notebooks() -> list[Path]:
    return sorted(
        p
        for p in (ROOT / "notebooks").rglob("*.ipynb")
        if ".ipynb_checkpoints" not in p.parts
    )
