"""The registry of the book's claims, ``claims.yml`` beside this module: each
claim's id, chapter, statement, lesson, verdict and form (one source of truth
for the verdicts too)."""

from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

#: The registry beside this module.
REGISTRY_PATH = Path(__file__).with_name("claims.yml")

#: The verdicts a lesson can reach, from "the essay is right" to "it is wrong".
#: "conclusion holds, reason does not" is for a claim of the form "X, because
#: Y", where X is true and Y is not. "inconclusive": the experiment ran, but
#: its positive control failed too, so the lesson cannot tell the claim being
#: false from the test being unable to show it.
VERDICTS = (
    "holds",
    "holds with caveats",
    "conclusion holds, reason does not",
    "does not hold",
    "inconclusive",
)


#: The shapes of a claim's sentence (the registry's ``form``): a plain claim;
#: "X, because Y" (with ``x:`` and ``y:``); "X makes no difference", whose
#: check needs positive controls.
FORMS = ("claim", "because", "no difference")


@lru_cache(maxsize=8)
def _read(path: Path, mtime_ns: int) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _load(path: Path) -> dict[str, Any]:
    """The registry file's content, read again whenever the file changed."""
    path = Path(path)
    return _read(path, path.stat().st_mtime_ns)


def entries(path: Path = REGISTRY_PATH) -> list[dict[str, Any]]:
    """The registry's entries as written, duplicates included."""
    return _load(path)["claims"]


def registry(path: Path = REGISTRY_PATH) -> dict[str, dict[str, Any]]:
    """``{id: {id, chapter, claim, verdict, notebook}}``; an id registered
    twice is a ``ValueError``."""
    out: dict[str, dict[str, Any]] = {}
    for e in entries(path):
        if e["id"] in out:
            raise ValueError(f"{e['id']} is registered twice in {path}")
        out[e["id"]] = e
    return out


def chapters(path: Path = REGISTRY_PATH) -> dict[str, dict[str, str]]:
    """The chapters: ``{"0": {title, section}, …, "B": …}``."""
    return {str(k): v for k, v in _load(path)["chapters"].items()}
