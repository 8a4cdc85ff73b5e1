"""A figure's words in the reader's language.

Every figure a lesson shows is drawn twice when the book is built: once as
the lesson wrote it, and once with each of its words (titles, axis labels,
legends, annotations, word tick labels) replaced by its Japanese in the
lesson's catalog, ``locale/ja/LC_MESSAGES/<lesson>.po`` — the catalog the
Japanese edition's prose comes from, so each string has one source. The
lesson's code does not change: the second drawing happens where the
notebook displays the figure.

A string's message id is its text with every number made a placeholder, so
that a glued number does not make a new message::

    msgid("ReLU leads by 12.3 points") == "ReLU leads by {0} points"
    fill("ReLUが{0}ポイント上回る", ["12.3"]) == "ReLUが12.3ポイント上回る"

(a line break is written ``\\n``: a catalog's message is one line).

(The kernel knows its folder, not its notebook: it reads the catalogs of
the lesson's folder, see ``folder_messages``.) The Japanese drawing is kept
in the figure's output metadata (``livingdict``
under ``image/png``): the PNG, the messages it used with their translations,
and what went wrong (words without a translation, English words left, text
outside the figure). Only when ``$LIVINGDICT_FIGURES`` is ``ja`` (the book's
build sets it), so a reader's notebook pays nothing.
"""

from __future__ import annotations

import base64
import os
import re
import warnings
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure
from matplotlib.text import Text

_NUMBER = re.compile(
    r"(?<![\w.{])[-−+]?\d+(?:[.,]\d+)*(?:e[-+]?\d+)?(?![\w}])"
)
_MATH = re.compile(r"\$[^$]*\$")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]{2,}")
#: Latin words a Japanese figure may keep: names, code and symbols.
KEEP = frozenset(
    """ReLU tanh softmax MNIST MLP MLPs FFN FFNs XOR dict GPT BPE PyTorch
    torch Hopfield Dobrushin Kaczmarz Gaussian Attention QKᵀ sin cos exp log
    max min argmax rms RMS ReLUs lookup Telgarsky Cho Saul Geva act relu out
    float Baum""".split()
)
#: The font of the Japanese drawings (IPAexGothic, from matplotlib-fontja:
#: the same file on every machine, so every build draws the same pixels).
FONT = "IPAexGothic"


def msgid(text: str) -> tuple[str, list[str]]:
    """``(message id, numbers)``: ``text`` with its numbers as ``{0}``,
    ``{1}``, … and the numbers in order."""
    numbers: list[str] = []

    def hole(m: re.Match[str]) -> str:
        numbers.append(m.group(0))
        return f"{{{len(numbers) - 1}}}"

    # a catalog's message is one line: a line break is written \\n
    text = text.replace("\n", "\\n")
    parts = re.split(r"(\$[^$]*\$)", text)  # numbers in math stay math
    out = "".join(
        p if i % 2 else _NUMBER.sub(hole, p) for i, p in enumerate(parts)
    )
    return out, numbers


def fill(translation: str, numbers: list[str]) -> str:
    """The translation with its placeholders filled; ``ValueError`` when it
    lacks or invents one."""
    want = {f"{{{i}}}" for i in range(len(numbers))}
    got = set(re.findall(r"\{\d+\}", translation))
    if got != want:
        raise ValueError(
            f"translation {translation!r} has placeholders {sorted(got)}, "
            f"its message {sorted(want)}"
        )
    for i, n in enumerate(numbers):
        translation = translation.replace(f"{{{i}}}", n)
    return translation.replace("\\n", "\n")


def has_words(text: str) -> bool:
    """Whether a string has words to translate (not only numbers, symbols,
    math or kept names)."""
    return bool(
        english(text) or re.search(r"[A-Za-z]{2,}", _MATH.sub("", text))
    )


def english(text: str) -> list[str]:
    """The English words of ``text`` that a Japanese figure may not keep
    (outside math, not in ``KEEP``, not a variable name)."""
    words = _WORD.findall(_MATH.sub(" ", text))
    return [w for w in words if w not in KEEP and not w.isupper()]


def _axes(fig: Figure) -> list[Any]:
    return [a for ax in fig.axes for a in (ax.xaxis, ax.yaxis)]


def _tick_labels(fig: Figure) -> set[int]:
    ids = set()
    for axis in _axes(fig):
        for tick in [*axis.majorTicks, *axis.minorTicks]:
            ids.update((id(tick.label1), id(tick.label2)))
    return ids


def texts(fig: Figure) -> list[Text]:
    """Every visible text of a figure that has words: titles, labels,
    legends, annotations (tick labels are the formatters', see
    ``word_ticks``)."""
    ticks = _tick_labels(fig)
    return [
        t
        for t in fig.findobj(Text)
        if id(t) not in ticks and t.get_visible() and has_words(t.get_text())
    ]


def _labels(axis: Any) -> dict[Any, str] | None:
    """The fixed tick labels of an axis, ``{position or index: label}``
    (``set_xticklabels`` stores them in a ``FixedFormatter`` or, since
    matplotlib 3.5, a dict inside a ``FuncFormatter``), else ``None``."""
    from matplotlib.ticker import FixedFormatter, FuncFormatter

    fmt = axis.get_major_formatter()
    if isinstance(fmt, FixedFormatter):
        return dict(enumerate(fmt.seq))
    func = (
        getattr(fmt, "func", None) if isinstance(fmt, FuncFormatter) else None
    )
    args = getattr(func, "args", ())
    if args and isinstance(args[0], dict):
        return args[0]
    return None


def _set_labels(axis: Any, labels: dict[Any, str]) -> None:
    from matplotlib.ticker import FixedFormatter

    fmt = axis.get_major_formatter()
    if isinstance(fmt, FixedFormatter):
        fmt.seq = [labels[i] for i in range(len(labels))]
    else:
        fmt.func.args[0].update(labels)


def word_ticks(fig: Figure) -> list[Any]:
    """The axes whose tick labels are words (fixed labels, not numbers)."""
    return [
        axis
        for axis in _axes(fig)
        if (labels := _labels(axis))
        and any(has_words(str(s)) for s in labels.values())
    ]


def words(fig: Figure) -> list[str]:
    """The message ids of a figure's words, each once, in drawing order."""
    drawn = [t.get_text() for t in texts(fig)]
    for axis in word_ticks(fig):
        drawn += [str(s) for s in (_labels(axis) or {}).values()]
    ids = [msgid(d)[0] for d in drawn if has_words(d)]
    return list(dict.fromkeys(ids))


def translated_png(
    fig: Figure,
    translate: Callable[[str], str],
    print_png: Callable[[Figure], bytes],
) -> tuple[bytes, dict[str, Any]]:
    """Draw ``fig`` with its words translated (``translate(msgid)`` returns
    the translation, or ``""`` when there is none) in the Japanese font;
    the figure is left as it was. Returns the PNG and a report:
    ``{"used": {msgid: translation}, "missing": [msgid], "english":
    [drawn text that keeps English words]}``."""
    _font()
    saved = [(t, t.get_text(), t.get_fontfamily()) for t in texts(fig)]
    ticks = [(a, dict(_labels(a) or {})) for a in word_ticks(fig)]
    used: dict[str, str] = {}
    missing: list[str] = []

    def swap(text: str) -> str:
        if not has_words(text):
            return text
        mid, numbers = msgid(text)
        tr = used[mid] = translate(mid)
        if not tr:
            missing.append(mid)
            return text
        return fill(tr, numbers)

    try:
        for t, text, family in saved:
            t.set_text(swap(text))
            t.set_fontfamily([FONT, *family, "DejaVu Sans"])
        for axis, labels in ticks:
            _set_labels(axis, {k: swap(str(v)) for k, v in labels.items()})
            _tick_fonts(axis, lambda family: [FONT, *family])
        # a glyph the font lacks is a defect of the drawing: reported (the
        # book's build fails on it), not printed to the page's stderr
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            png = print_png(fig)
        drawn = [t for t, _, _ in saved]
        drawn += [lab for axis, _ in ticks for lab in axis.get_ticklabels()]
        shown = [t.get_text() for t in drawn]
    finally:
        for t, text, family in saved:
            t.set_text(text)
            t.set_fontfamily(family)
        for axis, labels in ticks:
            _set_labels(axis, labels)
            _tick_fonts(axis, lambda family: [f for f in family if f != FONT])
    report = {
        "used": used,
        "missing": list(dict.fromkeys(missing)),
        "english": [d for d in shown if english(d)],
        "warnings": sorted({str(w.message) for w in caught}),
    }
    return png, report


def _tick_fonts(axis: Any, change: Callable[[list[str]], list[str]]) -> None:
    """Change the font family of every tick label of an axis (new ticks copy
    the first one's, so all of them, major and minor)."""
    for tick in [*axis.majorTicks, *axis.minorTicks]:
        for label in (tick.label1, tick.label2):
            label.set_fontfamily(change(list(label.get_fontfamily())))


def png_size(png: bytes) -> tuple[int, int]:
    """``(width, height)`` in pixels, from a PNG's header."""
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"not a PNG: starts with {png[:8]!r}")
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


@lru_cache(maxsize=1)
def _font() -> None:
    """Register IPAexGothic from matplotlib-fontja's folder, without
    importing the package: its import sets ``rcParams["font.family"]`` for
    every figure, the English ones too."""
    from importlib.util import find_spec

    from matplotlib import font_manager

    spec = find_spec("matplotlib_fontja")
    if spec is None or not spec.submodule_search_locations:
        raise ValueError("matplotlib-fontja is not installed (the book extra)")
    folder = Path(next(iter(spec.submodule_search_locations)))
    font_manager.fontManager.addfont(str(folder / "fonts" / "ipaexg.ttf"))


def catalog(po: Path) -> dict[str, str]:
    """``{msgid: msgstr}`` of a catalog's translated, non-fuzzy messages."""
    from babel.messages.pofile import read_po

    with Path(po).open("rb") as f:
        cat = read_po(f)
    return {
        m.id: m.string
        for m in cat
        if isinstance(m.id, str) and m.id and m.string and not m.fuzzy
    }


def folder_messages(folder: Path) -> dict[str, str]:
    """The translations for the figures of the lessons in ``folder``: every
    catalog of that folder (``locale/ja/LC_MESSAGES/<folder>/*.po``), the
    first in name order winning where two translate one message — a kernel
    knows its folder, not its notebook's name, and the build reads the same
    union, so both agree."""
    folder = Path(folder).resolve()
    for root in (folder, *folder.parents):
        base = root / "locale" / "ja" / "LC_MESSAGES"
        if base.is_dir():
            break
    else:
        return {}
    try:
        rel = folder.relative_to(root)
    except ValueError:
        return {}
    messages: dict[str, str] = {}
    for po in sorted((base / rel).glob("*.po"), reverse=True):
        messages.update(catalog(po))
    return messages


def install(shell: Any, messages: Mapping[str, str]) -> None:
    """Make ``shell`` (IPython) add the Japanese drawing to every figure it
    shows as PNG, translated with ``messages``."""
    from IPython.core.pylabtools import print_figure, retina_figure

    def png(fig: Figure) -> tuple[str, dict[str, Any]] | None:
        # the English drawing's font warnings go to the report, not stderr
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            shown = retina_figure(fig, base64=True)
        if shown is None:  # a figure without axes draws nothing
            return None
        data, md = shown
        ja, report = translated_png(
            fig,
            lambda m: messages.get(m, ""),
            lambda f: _retina_bytes(f, print_figure),
        )
        md = dict(md or {})
        # text wider than the canvas makes the tight-cropped image grow
        md["livingdict"] = {
            "words": words(fig),
            "ja": base64.b64encode(ja).decode("ascii"),
            "size": png_size(base64.b64decode(data)),
            "size_ja": png_size(ja),
            **report,
            "warnings_en": sorted({str(w.message) for w in caught}),
        }
        return data, md

    shell.display_formatter.formatters["image/png"].for_type(Figure, png)


def _retina_bytes(fig: Figure, print_figure: Callable[..., Any]) -> bytes:
    return bytes(print_figure(fig, fmt="retina"))


def enable() -> bool:
    """In a kernel, when ``$LIVINGDICT_FIGURES`` is ``ja``: draw each figure
    in Japanese too (``install``), with the catalogs of the kernel's folder
    (the lesson's). Returns whether it did."""
    if os.environ.get("LIVINGDICT_FIGURES", "") != "ja":
        return False
    # a glyph IPAexGothic lacks is recorded in the Japanese drawing's report
    # (the Japanese build fails on it); it is never printed on a page
    warnings.filterwarnings("ignore", message="Glyph .* missing from font")
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:
        return False
    install(shell, folder_messages(Path.cwd()))
    return True


def stale(report: Mapping[str, Any], messages: Mapping[str, str]) -> list[str]:
    """The messages of a drawn figure whose translation changed since it
    was drawn (the figure must be drawn again)."""
    used: Mapping[str, str] = report.get("used", {})
    return [m for m, tr in used.items() if messages.get(m, "") != tr]


def stale_notebook(nb: Mapping[str, Any], folder: Path) -> list[str]:
    """The messages of an executed notebook's figures whose translation in
    ``folder``'s catalogs changed since they were drawn (``make execute``
    runs such a lesson again)."""
    messages = folder_messages(folder)
    found: list[str] = []
    for cell in nb.get("cells", []):
        for out in cell.get("outputs", []):
            meta = (out.get("metadata") or {}).get("image/png") or {}
            if "livingdict" in meta:
                found += stale(meta["livingdict"], messages)
    return list(dict.fromkeys(found))
