"""Moved to ``livingdict.page``; kept until every lesson imports it there."""

from .page import glue  # noqa: F401
