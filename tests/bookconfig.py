"""What the tests need to know about the book's configuration (one place: _config.yml).

The repository URL and branch are set once, in ``_config.yml`` (``repository:``); the
launch buttons are derived from them by the theme, and every notebook's Colab cell must
name the same URL (``tools.static_checks``; ``python -m tools.set_repo_url`` rewrites
the cells after a fork changes the URL). The lessons are ``livingdict.claims.notebooks``.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlparse

import yaml

from livingdict import claims
from tools import set_repo_url

ROOT = Path(__file__).resolve().parents[1]


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
    """The first code cell of every lesson, for this book's repository URL."""
    return set_repo_url.colab_cell(repo_url())


def built_html() -> Path:
    """The built book to test: ``$LIVINGDICT_HTML`` or ``<repo>/_build/html``."""
    return Path(
        os.environ.get("LIVINGDICT_HTML", ROOT / "_build" / "html")
    ).resolve()


def notebooks() -> list[Path]:
    return claims.notebooks(ROOT)
