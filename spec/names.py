"""Suggestions for misspelled names (datapaths, models, formats): `` (did you mean X?)``."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(name: object, known: Iterable[str]) -> str:
    """`` (did you mean 'X'?)`` naming the closest of ``known`` to ``name``, or ``""``."""
    if not isinstance(name, str):
        return ""
    close = difflib.get_close_matches(name.strip().lower(), list(known), n=2, cutoff=0.6)
    if not close:
        return ""
    return " (did you mean " + " or ".join(repr(c) for c in close) + "?)"
