"""The conformance matrix's lowerings and the datapaths it covers.

Adding a datapath to the catalog adds it to every matrix that iterates over
:data:`SPECIFIED`; adding a lowering to :data:`ref.conformance.LOWERINGS`
adds it to every comparison.
"""

from __future__ import annotations

from ref.conformance import LOWERINGS, compare
from spec.catalog import CATALOG, is_specified

SPECIFIED = [name for name, entry in CATALOG.items() if is_specified(entry.descriptor)]

__all__ = ["LOWERINGS", "SPECIFIED", "compare"]
