"""Sparse masking: a sparse path is its dense sibling on the selected lanes (SEMANTICS.md 5).

Section 5 states it twice, and each half is stated here as it is written:

- unscaled formats: D equals the dense datapath **on the full logical K** with A and B
  zeroed at the disabled positions;
- block-scaled formats: the active values are **compacted in order** and the dense rules
  run on the compacted K with the same C and scale bytes (each scale block covering
  twice the logical K).

The selectors, their nibble order, the kept positions and the legal selectors are the
rule book's (:mod:`proofs.rulebook.sparse`, written from section 5 and importing nothing
of ``spec/``), so a nibble-order, field-order or legality bug in ``spec/sparse.py`` sits
on one side only. The hypothesis is the rule book's "every selector is legal". The
block-scaled dense side runs the specification's block arithmetic with section 4's rules
written in :mod:`proofs.constants` (windows, groups, scale block, C merge, subnormal
floor), never the spec's own table, so a group size or window broken in ``spec/`` moves
the sparse side only. Once the engine has proved the compacted lanes equal (small
selection queries), the two runs are one computation and merge by structure
(:attr:`~proofs.engine.EngineSettings.merge_first`).

The unscaled rows keep the chain of :mod:`proofs.sparse` (the engine does not find the
cut-points between a compacted lane and the two masked lanes it came from within the
budget: a product of a selected lane is no node of the masked run).
"""

from __future__ import annotations

import dataclasses

from tcspec.proofs import sparse as chain
from tcspec.proofs.constants import scale_block
from tcspec.proofs.core import Row, Settings
from tcspec.proofs.families.declare import (
    Family,
    Words,
    as_property,
    check,
    row_key,
    trace_runs,
)
from tcspec.proofs.rulebook import sparse as rulebook_sparse
from tcspec.proofs.rulebook.names import SPARSE, Datapath, parse
from tcspec.spec.bitvec import BV, Bool, Ops
from tcspec.spec.catalog import CATALOG
from tcspec.spec.descriptor import Descriptor
from tcspec.spec.inputs import DotInputs


def _lanes(rec: Datapath, words: Words) -> tuple[list[BV], list[BV], list[BV]]:
    return ([words[f"a{i}"] for i in range(rec.k)], [words[f"b{i}"] for i in range(rec.k)],
            [words[f"meta{i}"] for i in range(rec.meta_words)])


def legal(ops: Ops, rec: Datapath, words: Words) -> Bool:
    """Section 5: every chunk's selector is legal (the rule book's ``defined``)."""
    a, b, meta = _lanes(rec, words)
    return rulebook_sparse.compact(ops, rec, a, b, meta)[2]


def dense_sibling(ops: Ops, rec: Datapath, words: Words) -> BV:
    """The dense sibling's D (section 5): block-scaled, section 4's rules on the rule book's
    compacted lanes; unscaled, the dense datapath on the logical K with A and B zeroed where
    the metadata disables them (the chain's masked run, :func:`proofs.sparse.masked_dense`)."""
    desc = CATALOG[rec.name].descriptor
    a, b, meta = _lanes(rec, words)
    scales = parse(rec.dense_name or "").n_scales
    scale_a = [words[f"scale_a{i}"] for i in range(scales)]
    scale_b = [words[f"scale_b{i}"] for i in range(scales)]
    if desc.family != "block":
        mask = chain.active_mask(ops, desc, meta, rec.k)
        return chain.masked_dense(ops, desc, DotInputs(a, b, words["c"]), mask)
    kept_a, kept_b, _ = rulebook_sparse.compact(ops, rec, a, b, meta)
    return chain.block_dot(ops, desc, DotInputs(kept_a, kept_b, words["c"], scale_a, scale_b),
                           block=scale_block(desc), rules=chain.block_rules(desc))


def d_equal(ops: Ops, rec: Datapath, first: BV, second: BV) -> tuple[BV, BV]:
    return first, second


def applies(rec: Datapath) -> bool:
    return rec.family == SPARSE


SPARSE_MASKING = Family(
    "sparse-masking",
    "sparse equals its dense sibling on the lanes the metadata keeps (unscaled: the logical "
    "K with A and B zeroed at disabled positions; block-scaled: section 4's rules on the "
    "compacted lanes)",
    applies, lambda ops, rec, words: words, d_equal, hypothesis=legal,
    second_run=dense_sibling, merge_first=0.5,
    statement="under legal metadata, D equals the dense sibling's on the kept lanes")


def check_masking(desc: Descriptor, k: int, settings: Settings) -> Row:
    """A block-scaled row on the engine; an unscaled one by :func:`proofs.sparse.check_masking`."""
    if desc.family == "block":
        return check(SPARSE_MASKING, desc, k, settings)
    return chain.check_masking(desc, k, settings)


def _key(desc: Descriptor, k: int, settings: Settings) -> str:
    """An engine row's cache key (a chain row is always decided again)."""
    if desc.family != "block":
        return ""
    return row_key(SPARSE_MASKING, trace_runs(SPARSE_MASKING, desc), settings)


PROPERTIES = (dataclasses.replace(
    as_property(SPARSE_MASKING, ("spec.sparse", "spec.catalog", "spec.blockscaled")),
    check=check_masking, fast=(("sparse-tf32", 16),), instruction_k=False, key=_key),)
