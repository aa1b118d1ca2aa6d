"""AMD CDNA datapaths and the FMA-chain rows (SEMANTICS.md section 10): filled in by the
``fma-chain`` and ``cdna3-rd`` algorithm families (branch i20amd).

Each entry is an :class:`spec.arch.ArchDescriptor`; :mod:`spec.algorithms` adds them to
the catalog.
"""

from __future__ import annotations

from tcspec.spec.arch import ArchDescriptor

DATAPATHS: list[ArchDescriptor] = []
