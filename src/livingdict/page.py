"""What a lesson puts on its page besides figures: glued numbers and code.

* ``glue(name, value)`` — a number the prose quotes, taken from the run. In the
  book build it is myst-nb's ``glue`` (the page writes
  ``{glue:text}`name:.3f```); elsewhere (Colab) the value is only returned.
* ``show(func, ...)`` — the source of package code, shown on the page as a
  code block, so that the mechanism a lesson teaches is read where it is used
  while the code keeps one home (and its unit tests) in ``livingdict``.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any


def glue(name: str, value: Any, display: bool = False) -> Any:
    """Register ``value`` under ``name`` for the page's prose; return it."""
    if hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
        value = value.item()
    try:
        from myst_nb import glue as _glue
    except ImportError:  # pragma: no cover - Colab without myst-nb
        return value
    _glue(name, value, display=display)
    return value


def source(*objs: Any) -> str:
    """The source of each function or class, as one Markdown code block,
    headed by the file it lives in."""
    if not objs:
        raise ValueError("source needs at least one function or class")
    blocks, files = [], []
    for obj in objs:
        try:
            blocks.append(inspect.getsource(obj).rstrip())
            path = Path(inspect.getfile(obj))
        except (TypeError, OSError) as err:
            raise ValueError(f"source: no source for {obj!r}") from err
        name = (
            f"livingdict/{path.name}"
            if "livingdict" in path.parts
            else path.name
        )
        if name not in files:
            files.append(name)
    head = "From " + ", ".join(f"`{f}`" for f in files) + ":"
    return head + "\n\n```python\n" + "\n\n\n".join(blocks) + "\n```\n"


def show(*objs: Any) -> None:
    """Display ``source(*objs)`` as Markdown: a code block on the page."""
    from IPython.display import Markdown, display

    display(Markdown(source(*objs)))
