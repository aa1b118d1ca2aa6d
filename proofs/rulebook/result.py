"""The result of one datapath evaluation (the brief's ``Result``)."""

from __future__ import annotations

from dataclasses import dataclass

from tcspec.spec.bitvec import BV, Bool


@dataclass(frozen=True)
class Result:
    """``word``: the D word, ``output_width(name)`` bits. ``defined``: the inputs are ones
    the rule text gives a result for (false only for an illegal sparse selector, section 5)."""

    word: BV
    defined: Bool
