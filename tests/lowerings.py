"""The conformance matrix's lowerings and the datapaths it covers.

Adding a datapath to the catalog adds it to every matrix that iterates over
:data:`SPECIFIED`; adding a lowering to :data:`tcspec.conformance.LOWERINGS`
adds it to every comparison.
"""

from __future__ import annotations

from tcspec import conformance
from tcspec.spec.catalog import CATALOG, is_specified

SPECIFIED = [name for name, entry in CATALOG.items() if is_specified(entry.descriptor)]

BUILT = ("kernel", "kernel-rows")
"""Lowerings compiled per datapath: tests/ref/test_kernels.py and test_strided.py hold them to
the others."""
LOWERINGS = {name: lower for name, lower in conformance.LOWERINGS.items() if name not in BUILT}


def compare(desc, cases):
    return conformance.compare(desc, cases, LOWERINGS)


__all__ = ["LOWERINGS", "SPECIFIED", "compare"]
