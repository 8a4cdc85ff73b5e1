"""The conditions a check tests: parsed from text (``"< 0.1"``, ``"a ± h"``,
``"in [a, b]"``), each with its kind (identity or experiment), applied to the
measured values with a margin."""

import math
import operator
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Self

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?"
_OPS = {"<": operator.lt, "<=": operator.le, "==": operator.eq}
_OPS |= {">": operator.gt, ">=": operator.ge}


@dataclass(frozen=True)
class Condition:
    """A condition a measured number must meet, parsed from ``expected`` text:
    ``"< t"``, ``"<= t"``, ``"> t"``, ``">= t"``, ``"== t"``, ``"a ± h"``
    (``|m − a| <= h``), ``"in [a, b]"`` (``a <= m <= b``), ``"true"`` /
    ``"false"`` (a yes/no finding). A list must meet it element by element.
    """

    text: str
    op: str
    lo: float
    hi: float = math.nan

    @classmethod
    def parse(cls, text: str) -> Self:
        s = str(text).strip()
        if s in ("true", "false"):
            return cls(s, "is", 1.0 if s == "true" else 0.0)
        if m := re.fullmatch(rf"(<=|>=|==|<|>)\s*({_NUMBER})", s):
            return cls(s, m[1], float(m[2]))
        if m := re.fullmatch(rf"({_NUMBER})\s*±\s*({_NUMBER})", s):
            return cls(s, "±", float(m[1]), float(m[2]))
        band = rf"in \[\s*({_NUMBER})\s*,\s*({_NUMBER})\s*\]"
        if m := re.fullmatch(band, s):
            return cls(s, "in", float(m[1]), float(m[2]))
        raise ValueError(
            f"expected condition {text!r} is not one of '< t', '<= t', '> t', "
            "'>= t', '== t', 'a ± h', 'in [a, b]', 'true', 'false'"
        )

    def holds(self, value: float | bool) -> bool:
        """Whether one measured value meets the condition."""
        if self.op == "is":
            return bool(value) == bool(self.lo)
        v = float(value)
        if self.op == "±":
            return abs(v - self.lo) <= self.hi
        if self.op == "in":
            return self.lo <= v <= self.hi
        return bool(_OPS[self.op](v, self.lo))

    def margin(self, value: float | bool) -> float:
        """How far inside (> 0) or outside (< 0) the condition a value lies,
        in units of ``|t|`` (or the band's half-width): 0.5 means the value
        could move half that before the check fails."""
        if self.op == "is":
            return 1.0 if self.holds(value) else -1.0
        v = float(value)
        if self.op == "±":
            return (self.hi - abs(v - self.lo)) / (self.hi or 1.0)
        if self.op == "in":
            half = (self.hi - self.lo) / 2 or 1.0
            return min(v - self.lo, self.hi - v) / half
        scale = abs(self.lo) or 1.0
        if self.op == "==":
            return -abs(v - self.lo) / scale
        gap = self.lo - v if self.op in ("<", "<=") else v - self.lo
        return gap / scale


#: The two kinds of condition. An *identity* is true by algebra whenever the
#: code is right (it guards the code); an *experiment* could come out either
#: way if the claim were false (it is the evidence).
KINDS = ("identity", "experiment")


@dataclass(frozen=True)
class Expect:
    """A condition's text with its kind: ``identity("< 1e-6")`` or
    ``experiment(">= 0.9")``."""

    text: str
    kind: str

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind {self.kind!r} is not one of {KINDS}")
        Condition.parse(self.text)


def identity(text: str) -> Expect:
    """A condition true by algebra whenever the code is right."""
    return Expect(str(text), "identity")


def experiment(text: str) -> Expect:
    """A condition that could fail if the claim were false."""
    return Expect(str(text), "experiment")


def _values(x: Any) -> list[Any]:
    x = x.tolist() if hasattr(x, "tolist") else x
    if isinstance(x, (list, tuple)):
        return [v for item in x for v in _values(item)]
    return [x]


def evaluate(
    measured: Mapping[str, Any], expected: Mapping[str, Expect]
) -> list[dict[str, Any]]:
    """Each condition of ``expected`` applied to its ``measured`` quantity:
    ``[{"name", "expected", "kind", "held", "margin", "worst"}, …]``: the
    margin is the worst element's, ``worst`` that element."""
    rows = []
    for name, spec in expected.items():
        if not isinstance(spec, Expect):
            raise TypeError(
                f"expected[{name!r}] is {spec!r} ({type(spec).__name__}): "
                "wrap it as claims.identity(...) or claims.experiment(...)"
            )
        if name not in measured:
            raise ValueError(f"expected names {name!r}, which measured lacks")
        cond = Condition.parse(spec.text)
        values = _values(measured[name])
        if not values:
            raise ValueError(f"measured {name!r} is empty")
        held = all(cond.holds(v) for v in values)
        worst = min(values, key=cond.margin)
        rows.append(
            dict(
                name=name,
                expected=cond.text,
                kind=spec.kind,
                held=held,
                margin=cond.margin(worst),
                worst=worst,
            )
        )
    return rows
