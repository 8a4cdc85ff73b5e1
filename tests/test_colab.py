"""Colab: every notebook installs the book's package first, from the URL in _config.yml.

The repository URL is set once, in ``_config.yml``; the launch buttons derive from it.
That each lesson's first code cell is ``bookconfig.colab_cell()`` and tagged
``remove-cell`` is a static check (``tools.static_checks.check_colab``, tested in
``tests/test_tools_static.py``); ``python -m tools.set_repo_url URL`` rewrites both
after a fork.
"""

from __future__ import annotations

import bookconfig


def test_the_colab_cell_is_guarded_and_names_the_repository():
    cell = bookconfig.colab_cell()
    guard, install = cell.splitlines()[-2:]
    assert guard == 'if "google.colab" in sys.modules:'
    assert install.startswith("    %pip install") and "git+$REPO" in install
    assert f'REPO = "{bookconfig.repo_url()}"' in cell
    assert max(len(line) for line in cell.splitlines()) <= 79


def test_launch_urls_come_from_the_repository_url():
    slug = bookconfig.github_slug()
    doc = "notebooks/00_introduction/01_three_guises"
    assert bookconfig.binder_url(doc) == (
        f"https://mybinder.org/v2/gh/{slug}/{bookconfig.branch()}?urlpath=lab/tree/{doc}.ipynb"
    )
    assert bookconfig.colab_url(doc) == (
        f"https://colab.research.google.com/github/{slug}/blob/{bookconfig.branch()}/{doc}.ipynb"
    )
