"""``tcspec list``: every catalogued datapath (architecture, evidence, vectors, proof counts)
or the candidate models."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tcspec.proofs.runner import (
    REPORT_JSON,
    equals_reference_results,
    equals_reference_rows,
    proof_counts,
    properties,
    property_rows,
)
from tcspec.ref.vectorfiles import arch_vector_counts, hardware_counts, vector_counts
from tcspec.spec.candidates import candidate_table
from tcspec.spec.catalog import CATALOG, Datapath, datapaths_of

FAMILY_LABELS = {"window": "float", "integer": "integer", "block": "block-scaled"}

HARDWARE_B200 = "hardware words (B200)"
REFERENCE_MODEL = "reference model"
PUBLISHED_MODEL = "published model only"
SPEC_ONLY = "specification only"
"""Evidence levels, strongest first: words observed on a GPU; the sf-tensor reference model
(reported to match B200 on 46 million cases); a published model (MMA-Sim) only; our own
specification's words only."""


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


def evidence(entry: Datapath, frozen: dict[str, int], reference: dict[str, int],
             arch: dict[str, int], hardware: dict[str, dict[str, int]]) -> str:
    """The strongest evidence behind ``entry``'s rules."""
    if entry.name in hardware:
        return f"hardware words ({', '.join(sorted(hardware[entry.name]))})"
    if entry.is_tcgen05:
        if entry.name in frozen or entry.hardware_validated:
            return HARDWARE_B200
        if entry.name in reference:
            return REFERENCE_MODEL
        return SPEC_ONLY
    return PUBLISHED_MODEL if entry.name in arch else SPEC_ONLY


def _family(entry: Datapath) -> str:
    desc = entry.descriptor
    if not entry.is_tcgen05:
        return desc.algorithm  # type: ignore[union-attr]
    return ("sparse " if desc.sparse else "") + FAMILY_LABELS[desc.family]


def rows_of(entries: list[Datapath]) -> list[dict[str, object]]:
    """One row per datapath: architecture, family, K, evidence, vector and proof counts."""
    frozen, reference = vector_counts()
    arch, hardware = arch_vector_counts(), hardware_counts()
    proofs = proof_counts()
    equal = equals_reference_results()
    rows = []
    for entry in entries:
        desc, name = entry.descriptor, entry.name
        if name in frozen:
            status = "validated: B200 words"
        elif name in reference:
            status = "reference vectors"
        elif name in arch:
            status = "MMA-Sim vectors"
        else:
            status = "unvalidated"
        if entry.is_tcgen05 and not desc.validated_shape:
            status = "unvalidated (no B200 word; modelled)"
        rows.append({
            "name": name, "arch": entry.arch, "instruction": entry.instruction,
            "family": _family(entry), "K": desc.k,
            "evidence": evidence(entry, frozen, reference, arch, hardware),
            "b200_words": frozen.get(name, 0), "reference_vectors": reference.get(name, 0),
            "arch_vectors": arch.get(name, 0),
            "hardware_words": sum(hardware.get(name, {}).values()), "status": status,
            "hardware_validated_family": entry.hardware_validated,
            "specified": entry.specified,
            "proofs": proofs.get(name, {"proved": 0, "unknown": 0, "refuted": 0}),
            "equals_reference": equal.get(name, "-"),
        })
    return rows


def _table_family(entry: Datapath) -> str:
    if entry.is_tcgen05:
        return f"tcgen05 {_family(entry)}"
    if entry.arch.startswith("cdna"):
        return f"AMD {entry.arch} {_family(entry)}"
    return f"NVIDIA sm_70-sm_120 {_family(entry)}"


def equals_reference_table(report: Path = REPORT_JSON) -> str:
    """The ``equals-reference`` rows of the committed report by family (markdown): datapaths,
    rows run, each verdict and the first-solver seconds (min-max), with an all-families line."""
    decided = equals_reference_rows(report)
    families: dict[str, list[str]] = {}
    for entry in CATALOG.values():
        families.setdefault(_table_family(entry), []).append(entry.name)
    lines = ["| family | datapaths | rows run | proved | refuted | unknown | seconds (min-max) |",
             "|---|---:|---:|---:|---:|---:|---|"]
    totals = [0, 0, 0, 0, 0]
    for family in sorted(families):
        names = families[family]
        run = [decided[n] for n in names if n in decided]
        counts = [len(names), len(run), *(sum(r["result"] == v for r in run)
                                          for v in ("proved", "refuted", "unknown"))]
        totals = [t + c for t, c in zip(totals, counts)]
        seconds = [float(r["seconds"]) for r in run]
        span = f"{min(seconds):.1f}-{max(seconds):.1f}" if seconds else "-"
        lines.append(f"| {family} | " + " | ".join(map(str, counts)) + f" | {span} |")
    lines.append("| **all** | " + " | ".join(f"**{t}**" for t in totals) + " | |")
    return "\n".join(lines) + "\n"


ENGINE_FAMILIES = ("sign-symmetry", "ignores-unread-bits", "permutation", "sparse-masking")
"""The properties declared on the equivalence engine (``proofs/families``)."""


def _group(entry: Datapath) -> str:
    if entry.is_tcgen05:
        return "tcgen05"
    return "AMD cdna1-3" if entry.arch.startswith("cdna") else "NVIDIA sm_70-sm_120"


CHAIN_FAMILIES = ("error-bound", "error-bound-witness", "single-lane-is-rz-product",
                  "c-monotonicity-fails", "k-group-carry", "k-group-carry-ends",
                  "group-vs-per-product", "permutation-across-groups", "sparse-non-interference")
"""Properties proved by arithmetic chains or decided by one query, stated on every datapath
they apply to (:func:`tcspec.proofs.core.every_datapath`)."""


def families_table(report: Path = REPORT_JSON, names: tuple[str, ...] = ENGINE_FAMILIES) -> str:
    """The rows of the committed report for the properties ``names`` (default: the
    engine-declared ones), by property and architecture group (markdown): datapaths the
    property applies to, rows run, each verdict (witnesses with the proved) and the
    first-solver seconds (min-max)."""
    props = properties()
    lines = ["| property | datapaths | applies | rows run | proved or witness | refuted | unknown "
             "| seconds (min-max) |", "|---|---|---:|---:|---:|---:|---:|---|"]
    for name in names:
        decided = property_rows(name, report)
        groups: dict[str, list[str]] = {}
        for entry in CATALOG.values():
            if props[name].applies(entry.descriptor):
                groups.setdefault(_group(entry), []).append(entry.name)
        for group in sorted(groups):
            members = groups[group]
            run = [decided[n] for n in members if n in decided]
            counts = [len(members), len(run), *(sum(r["result"] in v for r in run)
                                              for v in (("proved", "witness"), ("refuted",),
                                                        ("unknown",)))]
            seconds = [float(r["seconds"]) for r in run]
            span = f"{min(seconds):.1f}-{max(seconds):.1f}" if seconds else "-"
            lines.append(f"| {name} | {group} | " + " | ".join(map(str, counts))
                         + f" | {span} |")
    return "\n".join(lines) + "\n"


def cmd_list(args: argparse.Namespace) -> int:
    """``tcspec list``: the catalogue with evidence, vector and proof counts (``--arch``: one
    architecture), or ``--candidates``."""
    if args.candidates:
        return _list_candidates(args.json)
    entries = datapaths_of(args.arch) if getattr(args, "arch", None) else list(CATALOG.values())
    rows = rows_of(entries)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    width = max(28, *(len(str(r["name"])) for r in rows))
    print(f"{'datapath':{width}} {'arch':6} {'family':19} {'K':>3} {'B200':>4} {'ref':>4} "
          f"{'arch':>4}  {'evidence':22} {'status':38} {'= rule book':11} proofs (proved/unknown)")
    for row in rows:
        counts = row["proofs"]
        shown = f"{counts['proved']}/{counts['unknown']}" if any(counts.values()) else "-"
        if counts["refuted"]:
            shown += f" ({counts['refuted']} refuted)"
        print(f"{row['name']:{width}} {row['arch']:6} {row['family']:19} {row['K']:>3} "
              f"{row['b200_words']:>4} {row['reference_vectors']:>4} {row['arch_vectors']:>4}  "
              f"{row['evidence']:22} {row['status']:38} {row['equals_reference']:11} {shown}")
    specified = sum(bool(r["specified"]) for r in rows)
    where = f" on {args.arch}" if getattr(args, "arch", None) else ""
    print(f"\n{len(rows)} datapaths catalogued{where}, {specified} specified in this build; "
          f"{sum(bool(r['hardware_validated_family']) for r in rows)} are the B200-validated "
          "datapaths of SEMANTICS.md section 6. Evidence: hardware words > reference model > "
          "published model only (MMA-Sim) > specification only. '= rule book' is the "
          "equals-reference row (D equal to the independent second specification for every "
          "input); it and the proof counts come from proofs/REPORT.json (`tcspec prove`).")
    return 0
