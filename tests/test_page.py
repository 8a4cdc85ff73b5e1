"""page: the source a lesson shows, and glue outside the book build."""

import pytest

from livingdict import lookup, networks, page


def test_source_shows_the_code_and_where_it_lives():
    text = page.source(lookup.lookup, lookup.soft_keys)
    assert text.startswith("From `livingdict/lookup.py`:\n\n```python\n")
    assert "def lookup(" in text and "def soft_keys(" in text
    assert text.rstrip().endswith("```")
    exec(text.split("```python\n")[1].split("```")[0], vars(lookup).copy())


def test_source_names_the_file_of_a_decorated_function():
    # networks.collapse is wrapped by @torch.no_grad(): the file shown is
    # the package's, not torch's _contextlib.py
    text = page.source(networks.collapse)
    assert text.startswith("From `livingdict/networks.py`:")
    assert "def collapse(" in text


def test_source_rejects_what_has_no_source():
    with pytest.raises(ValueError, match="no source"):
        page.source(len)
    with pytest.raises(ValueError, match="at least one"):
        page.source()


def test_glue_writes_what_myst_nb_writes(monkeypatch):
    """The bundle and metadata equal those of the pinned myst-nb's glue."""
    import IPython.display
    import numpy as np
    from myst_nb.ext import glue as myst_glue

    shown = []

    def capture(*objs, **kwargs):
        shown.append((objs, kwargs))

    monkeypatch.setattr(IPython.display, "display", capture)
    monkeypatch.setattr(myst_glue, "ipy_display", capture)
    assert page.glue("t_x", np.float64(0.25)) == 0.25
    myst_glue.glue("t_x", 0.25, display=False)
    assert shown[0] == shown[1]
    assert page.GLUE_PREFIX == myst_glue.GLUE_PREFIX
    assert isinstance(page.glue("t_y", np.float32(1.0)), float)


@pytest.mark.parametrize("name", ["", "two words", 3, None])
def test_glue_refuses_a_name_the_prose_cannot_quote(name):
    with pytest.raises(ValueError, match="glue: the name"):
        page.glue(name, 1.0)
