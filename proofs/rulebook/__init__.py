"""The rule book: a second, clean-room specification of tensor-core MMA arithmetic.

Written from ``docs/SEMANTICS.md`` alone, over the ``ops`` protocol of
``tcspec.spec.bitvec``. One module per family of the rule text (``window``:
section 2; ``integer``: 3; ``block``: 4; ``sparse``: 5; the other
architectures' families: 10, 11), shared modules for the format tables and
decoding (``fields``), conversion to destination words (``rounding``) and
names and layouts (``names``); ``registry`` dispatches a name to its family.
"""

from __future__ import annotations

from collections.abc import Mapping

from tcspec.spec.bitvec import BV, Ops

from .names import layout, names, output_width
from .registry import dispatch
from .result import Result

__all__ = ["Result", "layout", "names", "output_width", "reference_dot"]


def reference_dot(ops: Ops, name: str, words: Mapping[str, BV]) -> Result:
    """D of datapath ``name`` on the named input words (exactly the names of ``layout(name)``,
    with those widths; anything else is a ValueError naming the problem). An unknown name is
    a ValueError; a name whose family module is not written yet is a NotImplementedError."""
    return dispatch(ops, name, words)
