"""tools.set_repo_url: a fork changes the repository URL in one place."""

from __future__ import annotations

import bookconfig
import pytest
import yaml

from tools.set_repo_url import colab_cell, set_colab_cell, set_config


def test_set_config_changes_only_the_repository_block():
    text = (bookconfig.ROOT / "_config.yml").read_text()
    new = set_config(text, "https://github.com/me/fork", branch="dev")
    before, after = yaml.safe_load(text), yaml.safe_load(new)
    assert after["repository"]["url"] == "https://github.com/me/fork"
    assert after["repository"]["branch"] == "dev"
    assert {k: v for k, v in after.items() if k != "repository"} == {
        k: v for k, v in before.items() if k != "repository"
    }
    assert text.count("\n") == new.count("\n")  # comments and layout kept


def test_set_config_rejects_a_non_github_url():
    with pytest.raises(ValueError, match="github.com"):
        set_config("repository:\n  url: x\n", "https://example.org/a/b")


def test_set_colab_cell_rewrites_the_install_url():
    new = set_colab_cell(bookconfig.colab_cell(), "https://github.com/me/fork")
    assert new == colab_cell("https://github.com/me/fork")
    assert bookconfig.repo_url() not in new


def test_set_colab_cell_replaces_an_older_layout():
    old = colab_cell("https://github.com/a/b").replace("$REPO", "x")
    assert set_colab_cell(old, "https://github.com/a/b") == colab_cell(
        "https://github.com/a/b"
    )


def test_set_colab_cell_never_overwrites_lesson_code():
    with pytest.raises(ValueError, match="not a Colab cell"):
        set_colab_cell("import torch", "https://github.com/me/fork")
