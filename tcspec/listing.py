"""``tcspec list``: every catalogued datapath (vectors, proof counts) or the candidate models."""

from __future__ import annotations

import argparse
import json

from tcspec.proofs.runner import proof_counts
from tcspec.ref.vectorfiles import vector_counts
from tcspec.spec.candidates import candidate_table
from tcspec.spec.catalog import CATALOG

FAMILY_LABELS = {"window": "float", "integer": "integer", "block": "block-scaled"}


def _list_candidates(as_json: bool) -> int:
    rows = candidate_table()
    if as_json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"{'candidate':18} applies to\n{'':18} (what it is)")
    for row in rows:
        print(f"{row['name']:18} {row['applies_to']}\n{'':18} ({row['summary']})")
    print(f"\n{len(rows)} models; `window` is an alias of `hardware` on the unscaled datapaths. "
          "Sparse datapaths run a candidate on their active lanes.")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    """``tcspec list``: the catalogue with vector and proof counts, or ``--candidates``."""
    if args.candidates:
        return _list_candidates(args.json)
    frozen, reference = vector_counts()
    proofs = proof_counts()
    rows = []
    for name, entry in CATALOG.items():
        desc = entry.descriptor
        if name in frozen:
            status = "validated: B200 words"
        elif name in reference:
            status = "reference vectors"
        else:
            status = "unvalidated"
        if not desc.validated_shape:
            status = "unvalidated (no B200 word; modelled)"
        rows.append({
            "name": name,
            "family": ("sparse " if desc.sparse else "") + FAMILY_LABELS[desc.family],
            "K": desc.k, "b200_words": frozen.get(name, 0),
            "reference_vectors": reference.get(name, 0), "status": status,
            "hardware_validated_family": entry.hardware_validated,
            "specified": entry.specified,
            "proofs": proofs.get(name, {"proved": 0, "unknown": 0, "refuted": 0}),
        })
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"{'datapath':28} {'family':19} {'K':>4} {'B200':>5} {'ref':>5}  "
          f"{'status':38} proofs (proved/unknown)")
    for row in rows:
        counts = row["proofs"]
        shown = f"{counts['proved']}/{counts['unknown']}" if any(counts.values()) else "-"
        if counts["refuted"]:
            shown += f" ({counts['refuted']} refuted)"
        print(f"{row['name']:28} {row['family']:19} {row['K']:>4} {row['b200_words']:>5} "
              f"{row['reference_vectors']:>5}  {row['status']:38} {shown}")
    specified = sum(r["specified"] for r in rows)
    print(f"\n{len(rows)} datapaths catalogued, {specified} specified in this build; "
          f"{sum(r['hardware_validated_family'] for r in rows)} are the B200-validated "
          "datapaths of SEMANTICS.md section 6. Proof counts come from proofs/REPORT.json "
          "(`tcspec prove`).")
    return 0
