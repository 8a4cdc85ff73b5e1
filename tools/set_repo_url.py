"""Point the book at a fork: ``python -m tools.set_repo_url URL [--branch B]``.

Rewrites ``repository.url`` (and ``branch``) in ``_config.yml``, which the
launch buttons read, then the Colab cell (the first code cell) of every
lesson, which names the URL itself: Colab opens a notebook without the rest
of the repository. ``make static`` fails while the two disagree.
"""

import argparse
import re
from pathlib import Path

from livingdict import claims

ROOT = Path(__file__).resolve().parents[1]
URL = re.compile(r"^https://github\.com/[\w.-]+/[\w.-]+$")
#: The first code cell of every lesson (IPython expands ``$REPO``).
COLAB_CELL = """# Colab only: install the book's helper package (does nothing elsewhere).
import sys

REPO = "{url}"
if "google.colab" in sys.modules:
    %pip install -q --no-deps "livingdict @ git+$REPO" mnist1d"""


def colab_cell(url: str) -> str:
    """The Colab cell that installs the book's package from ``url``."""
    return COLAB_CELL.format(url=url.rstrip("/"))


def set_config(text: str, url: str, branch: str | None = None) -> str:
    """``_config.yml`` with its ``repository:`` url (and branch) replaced,
    every other line as it was."""
    if not URL.match(url):
        raise ValueError(
            f"expected https://github.com/<owner>/<name>, got {url!r}"
        )
    block = re.search(r"(?m)^repository:\n((?:[ \t]+.*\n|\s*\n)+)", text)
    if block is None:
        raise ValueError("_config.yml has no repository: block")
    body = block[1]
    for key, value in (("url", url), ("branch", branch)):
        if value:
            body = re.sub(rf"(?m)^(\s+{key}:\s*).*$", rf"\g<1>{value}", body)
    return text[: block.start(1)] + body + text[block.end(1) :]


def set_colab_cell(source: str, url: str) -> str:
    """The Colab cell for ``url`` in place of ``source``, which must be a
    Colab cell (of any URL or earlier layout), never a lesson's code."""
    if source.splitlines()[:1] != COLAB_CELL.splitlines()[:1]:
        raise ValueError(f"not a Colab cell:\n{source}")
    return colab_cell(url)


def main(argv: list[str] | None = None) -> None:
    import nbformat

    parser = argparse.ArgumentParser(prog="python -m tools.set_repo_url")
    parser.add_argument("url")
    parser.add_argument("--branch")
    args = parser.parse_args(argv)
    url = args.url.rstrip("/").removesuffix(".git")
    config = ROOT / "_config.yml"
    config.write_text(set_config(config.read_text("utf-8"), url, args.branch))
    for path in claims.notebooks(ROOT):
        nb = nbformat.read(path, as_version=4)
        cell = next(c for c in nb.cells if c.cell_type == "code")
        cell.source = set_colab_cell(cell.source, url)
        nbformat.write(nb, path)
        print(f"{path.relative_to(ROOT)}: Colab cell installs from {url}")
    print(f"_config.yml: repository.url = {url}")


if __name__ == "__main__":
    main()
