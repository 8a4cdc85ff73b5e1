"""Moved to ``livingdict.networks``; kept until every lesson imports it there."""

from .networks import AttentionOnly, SelfAttention, Trace  # noqa: F401
