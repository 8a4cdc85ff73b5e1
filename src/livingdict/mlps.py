"""Moved to ``livingdict.networks``; kept until every lesson imports it there."""

from .networks import (  # noqa: F401
    ACTIVATIONS,
    Abs,
    Ensemble,
    Square,
    collapse,
    init_scale,
    mlp,
    n_params,
    width_for_params,
)
