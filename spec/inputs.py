"""The bit-vector inputs of one dot product (re-exported by :mod:`spec.catalog`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tcspec.spec.bitvec import BV


@dataclass(frozen=True)
class DotInputs:
    """The bit-vector inputs of one dot product, in logical-K order."""

    a: Sequence[BV]
    b: Sequence[BV]
    c: BV
    scale_a: Sequence[BV] = ()
    scale_b: Sequence[BV] = ()
    metadata: Sequence[BV] = ()
