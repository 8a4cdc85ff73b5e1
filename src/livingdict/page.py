"""What a lesson puts on its page besides figures: numbers the prose quotes
(``glue``) and the source of package code, which keeps one home (``show``).
"""

import inspect
from pathlib import Path
from typing import Any

#: Where myst-nb looks for glued values (``myst_nb.ext.glue.GLUE_PREFIX``).
GLUE_PREFIX = "application/papermill.record/"


def glue(name: str, value: Any) -> Any:
    """Register ``value`` under ``name`` for the page's prose (which writes
    ``{glue:text}`name:.3f```); return it. The display bundle is myst-nb's
    ``glue(name, value, display=False)``, written without importing myst-nb
    (about two seconds per lesson)."""
    from IPython.core.formatters import format_display_data
    from IPython.display import display

    if not isinstance(name, str) or not name or any(c.isspace() for c in name):
        raise ValueError(
            f"glue: the name must be a word the prose can quote, got {name!r}"
        )
    if hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
        value = value.item()
    bundle, metadata = format_display_data(value)
    metadata["scrapbook"] = {"name": name, "mime_prefix": GLUE_PREFIX}
    glued = {GLUE_PREFIX + k: v for k, v in bundle.items()}
    display(glued, raw=True, metadata=metadata)
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
            path = Path(inspect.getfile(inspect.unwrap(obj)))
        except (TypeError, OSError) as err:
            raise ValueError(f"source: no source for {obj!r}") from err
        folder = "livingdict/" if "livingdict" in path.parts else ""
        name = folder + path.name
        if name not in files:
            files.append(name)
    head = "From " + ", ".join(f"`{f}`" for f in files) + ":"
    return head + "\n\n```python\n" + "\n\n\n".join(blocks) + "\n```\n"


def show(*objs: Any) -> None:
    """Display ``source(*objs)`` as Markdown: a code block on the page."""
    from IPython.display import Markdown, display

    display(Markdown(source(*objs)))
