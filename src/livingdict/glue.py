"""Numbers in the prose come from the code: ``glue(name, value)``.

In the book build this is myst-nb's ``glue`` (the page then quotes the value with
``{glue:text}`name:.3f```); where myst-nb is absent (Colab) the value is only
returned, so a lesson runs unchanged everywhere.
"""

from __future__ import annotations

from typing import Any


def glue(name: str, value: Any, display: bool = False) -> Any:
    """Register ``value`` under ``name`` for the page's prose and return it."""
    if hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
        value = value.item()
    try:
        from myst_nb import glue as _glue
    except ImportError:  # pragma: no cover - Colab without myst-nb
        return value
    _glue(name, value, display=display)
    return value
