"""Property families as declarations on the engine (issue 31): each family's statement is
written from the rule text, and the engine decides it on whole datapaths."""

from __future__ import annotations

import dataclasses
from collections import deque

import pytest

from tcspec.proofs import sparse
from tcspec.proofs.core import Settings
from tcspec.proofs.families import declare, sparse_masking
from tcspec.proofs.families.lane_order import LANE_ORDER, group_orders, group_size
from tcspec.proofs.families.sign_symmetry import (
    SIGN_SYMMETRY,
    d_negates,
    negated_steps,
    negated_value,
)
from tcspec.proofs.families.unread_bits import UNREAD_BITS, read_mask
from tcspec.proofs.rulebook.names import parse
from tcspec.spec.catalog import CATALOG
from tcspec.spec.scalar import SCALAR

SETTINGS = Settings(timeout=60, second_solver=None)
GENEROUS = Settings(timeout=600, second_solver=None)
"""For a row whose verdict must not depend on the machine's load (14 s alone)."""


def _word(value: int, width: int = 32):
    return SCALAR.const(value, width)


def test_negating_a_value_flips_the_sign_bit_of_the_field_table():
    assert int(negated_value(SCALAR, _word(0x3C), "e4m3").node) == 0xBC
    assert int(negated_value(SCALAR, _word(0x5), "e2m1").node) == 0xD
    assert int(negated_value(SCALAR, _word(0x3F800000), "tf32").node) == 0xBF800000


def test_an_fnuz_zero_and_the_fnuz_nan_are_their_own_negation():
    assert int(negated_value(SCALAR, _word(0x00), "e4m3fnuz").node) == 0x00
    assert int(negated_value(SCALAR, _word(0x80), "e4m3fnuz").node) == 0x80
    assert int(negated_value(SCALAR, _word(0x01), "e4m3fnuz").node) == 0x81


@pytest.mark.parametrize("name, first, second, equal", [
    ("dense-tf32", 0x3F800000, 0xBF800000, True),
    ("dense-tf32", 0x00000000, 0x00000000, True),
    ("dense-tf32", 0x00000000, 0x80000000, False),  # NVIDIA: a zero D is +0 in both runs
    ("dense-tf32", 0x7FFFFFFF, 0x7FFFFFFF, True),
    ("cdna1-mfma-32x32x2-f32-f32-c32-d32", 0x00000000, 0x80000000, True),  # IEEE zeros
    ("cdna1-mfma-32x32x2-f32-f32-c32-d32", 0x3F800000, 0x3F800000, False),
])
def test_the_relation_of_the_two_d_words(name, first, second, equal):
    left, right = d_negates(SCALAR, parse(name), _word(first), _word(second))
    assert (int(left.node) == int(right.node)) is equal


def test_the_read_bits_are_section_1s():
    assert read_mask("tf32", 32) == 0xFFFFE000
    assert read_mask("bf16", 32) == 0xFFFF0000
    assert read_mask("e2m1", 32) == 0xF
    assert read_mask("f16", 32) == 0xFFFF
    assert read_mask("ue4m3", 8) == 0x7F
    assert read_mask("ue8m0", 8) == 0xFF
    assert read_mask("u8", 32) == 0xFF
    assert read_mask("f32", 32) == 0xFFFFFFFF


@pytest.mark.parametrize("name, size", [
    ("dense-tf32", 8), ("i8-u8-s8-wrap", 32), ("dense-mx-e4m3", 32), ("dense-nvfp4", 4),
    ("dense-mxf4", 16), ("sm_80-mma-m16n8k16-f16-f16-c32-d32", 8),
    ("sm_80-mma-m16n8k8-f16-f16-c32-d32", 8),
])
def test_accumulation_groups_are_the_rule_texts(name, size):
    assert group_size(parse(name)) == size


def test_ordered_families_have_no_lane_order_statement():
    stated = set(declare.applicable(LANE_ORDER))
    for name in CATALOG:
        if parse(name).family in ("fma-chain", "cdna3-rd", "pairwise-tree", "sparse"):
            assert name not in stated


def _closure_size(k: int, generators: list[list[int]]) -> int:
    start = tuple(range(k))
    seen = {start}
    queue = deque([start])
    while queue:
        order = queue.popleft()
        for g in generators:
            nxt = tuple(order[i] for i in g)
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return len(seen)


def test_the_second_runs_generate_every_order_inside_each_group():
    """sm_80 m16n8k16 f16: two steps of 8 lanes. Each generator moves lanes of one step
    only, and those of each step generate all of S_8 on it, so together they generate
    S_8 x S_8 and never move a lane to the other step."""
    rec = parse("sm_80-mma-m16n8k16-f16-f16-c32-d32")
    orders = group_orders(rec)
    steps = (range(0, 8), range(8, 16))
    for step in steps:
        moving = [o for o in orders if any(o[i] != i for i in step)]
        assert all(o[i] == i for o in moving for i in range(16) if i not in step)
        local = [[o[i] - step.start for i in step] for o in moving]
        assert _closure_size(8, local) == 40320
    assert len(orders) == 4


def test_every_family_states_its_applicable_rows_without_a_dash():
    assert len(declare.applicable(SIGN_SYMMETRY)) == 274
    assert len(declare.applicable(UNREAD_BITS)) >= 250
    assert len(declare.applicable(LANE_ORDER)) >= 190


def test_unread_bits_are_proved_on_dense_tf32():
    row = declare.check(UNREAD_BITS, CATALOG["dense-tf32"].descriptor, 8, SETTINGS)
    assert row.result == "proved", row.detail


def test_sign_symmetry_is_proved_on_an_ampere_path():
    desc = CATALOG["sm_80-mma-m16n8k8-f16-f16-c16-d16"].descriptor
    row = declare.check(SIGN_SYMMETRY, desc, desc.k, SETTINGS)
    assert row.result == "proved", row.detail


def test_a_wrong_statement_is_refuted_with_replayed_words():
    """Flipping the exponent's top bit instead of the sign is no negation: refuted, and the
    words give two different D words on the scalar lowering."""
    def wrong(ops, rec, words):
        return {n: ops.bvxor(w, ops.const(1 << 30, w.width)) if n[0] in "ac" else w
                for n, w in words.items()}

    family = dataclasses.replace(SIGN_SYMMETRY, name="not-a-negation", transform=wrong)
    row = declare.check(family, CATALOG["dense-tf32"].descriptor, 8, SETTINGS)
    assert row.result == "refuted"
    words = {n: v for n, v in row.words.items() if (n[0] in "abc" and n[1:].isdigit()) or n == "c"}
    (left, right), = declare.replayer(family, CATALOG["dense-tf32"].descriptor)(words)
    assert left != right == row.words["d_second_run"]


def test_the_sign_family_declares_the_negated_step_word():
    """The hint the engine may propose between a split-K step's D words: the sign flipped,
    +0 and the canonical NaN kept (2.2, 2.5); a pairwise tree also offers the plain flip; an
    FMA chain offers the plain flip up to the sign of a zero (a loose relation, 11.1)."""
    hints = {h.name: h for h in negated_steps(parse("sm_80-mma-m16n8k16-f16-f16-c16-d16"))}
    negated = hints["negated-f16"]
    assert negated.width == 16 and negated.on_int(0x3C00) == 0xBC00
    assert negated.on_int(0xBC00) == 0x3C00 and negated.on_int(0x0000) == 0x0000
    assert negated.on_int(0x7FFF) == 0x7FFF and negated.on_int(0x7C00) == 0xFC00
    tree = {h.name for h in negated_steps(parse("cdna1-mfma-4x4x2-bf16-bf16-c32-d32"))}
    assert tree == {"negated-f32", "flipped-f32"}
    loose, = negated_steps(parse("sm_80-mma-m8n8k4-f64-f64-c64-d64"))
    assert loose.name == "negated-any-zero-f64" and loose.classes is not None
    one, minus_one, sign = 0x3FF0000000000000, 0xBFF0000000000000, 1 << 63
    assert loose.holds(one, minus_one) and not loose.holds(one, one)
    assert loose.holds(0, 0) and loose.holds(0, sign) and loose.holds(sign, 0)
    assert loose.free_values([sign, 0, minus_one]).tolist() == [1, 0, 1]


def test_the_masking_mask_keeps_what_section_5_names():
    """Selector 0x4 keeps positions 0 and 1 of a 2-of-4 chunk, 0xE positions 2 and 3; the
    1-of-2 selector 0xE the upper element; the FP4 pairs 0x9 (pairs 1 and 2) elements 2-5."""
    def kept(name, meta):
        rec = parse(name)
        mask = sparse.active_mask(SCALAR, CATALOG[name].descriptor, [_word(meta)] * rec.meta_words,
                                  rec.k)
        return [i for i, m in enumerate(mask[:rec.chunk]) if m.node]

    assert kept("sparse-bf16", 0x4) == [0, 1] and kept("sparse-bf16", 0xE) == [2, 3]
    assert kept("sparse-tf32", 0xE) == [1] and kept("sparse-tf32", 0x4) == [0]
    assert kept("sparse-nvfp4", 0x9) == [2, 3, 4, 5]


def test_block_sparse_masking_is_one_dag_once_the_lanes_are_merged():
    """sparse-mx-e2m1 against section 4's rules on the rule book's compacted lanes: the
    engine proves the selected lanes and merges the rest by structure (no case split)."""
    desc = CATALOG["sparse-mx-e2m1"].descriptor
    row = sparse_masking.check_masking(desc, desc.k, GENEROUS)
    assert row.result == "proved", row.detail
    assert row.method == declare.ENGINE and "0 cases" in row.detail


def test_a_block_rule_broken_in_spec_moves_the_sparse_side_only(monkeypatch):
    """The dense side's rules are proofs/constants' (section 4), not the spec's table: a C
    window of 24 in spec/blockscaled.py is refuted on sparse-mx-e4m3, words replayed."""
    from tcspec.spec import blockscaled

    monkeypatch.setattr(blockscaled, "MXF8F6F4_RULES", dataclasses.replace(
        blockscaled.MXF8F6F4_RULES, c_window=24))
    desc = CATALOG["sparse-mx-e4m3"].descriptor
    row = sparse_masking.check_masking(desc, desc.k, SETTINGS)
    assert row.result == "refuted"
    words = {n: v for n, v in row.words.items() if not n.startswith(("d_", "second"))}
    (left, right), = declare.replayer(sparse_masking.SPARSE_MASKING, desc)(words)
    assert left != right == row.words["d_second_run"]
