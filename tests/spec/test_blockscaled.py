"""Block-scaled datapaths (spec/blockscaled.py, SEMANTICS.md section 4).

Held to the independent rational formulation in ref/oracle.py, to the named
B200 words, and to the reference lines that are sensitive to one rule: each
rule parameter must be live (switching it off changes those lines).
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings

from tcspec import mma_dot
from tcspec.ref import oracle
from tcspec.ref.compiled import compiled_dot
from tcspec.ref.vectorfiles import REFERENCE_DIR, frozen_record, read_vectors
from tcspec.smt.formula import traced
from tcspec.smt.trace import walk
from tcspec.spec.algorithms import c_exempt
from tcspec.spec.blockscaled import (
    MXF4_RULES,
    MXF8F6F4_RULES,
    NVFP4_RULES,
    BlockRules,
    block_scaled_dot,
    rules_for,
)
from tcspec.spec.catalog import CATALOG, input_layout, is_specified
from tcspec.spec.formats import FORMATS
from tcspec.spec.scalar import SCALAR
from tcspec.strategies import dot_words

BLOCK_DATAPATHS = [n for n, e in CATALOG.items()
                   if e.descriptor.family == "block" and not e.descriptor.sparse]


def split_words(desc, words):
    k, s = desc.k, desc.scale_count
    return words[:k], words[k:2 * k], words[2 * k], words[2 * k + 1:2 * k + 1 + s], \
        words[2 * k + 1 + s:2 * k + 1 + 2 * s]


@pytest.mark.parametrize("category", ["raw", "finite", "edge"])
@pytest.mark.parametrize("name", BLOCK_DATAPATHS)
def test_specification_agrees_with_the_rational_oracle(name, category):
    desc = CATALOG[name].descriptor
    dot = compiled_dot(desc)

    @settings(max_examples=30, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(words=dot_words(desc, category))
    def check(words):
        a, b, c, sa, sb = split_words(desc, words)
        want = oracle.block_model(a, b, c, sa, sb, a_format=desc.a_format,
                                  b_format=desc.b_format, scaling=desc.scaling,
                                  family=oracle.block_family(desc.kind, desc.scaling),
                                  block=desc.scale_block)
        assert dot(*words) == want

    check()


def _run(desc, words, rules):
    a, b, c, sa, sb = split_words(desc, words)

    def const(values, width):
        return [SCALAR.const(v, width) for v in values]

    return SCALAR.value(block_scaled_dot(
        SCALAR, FORMATS[desc.a_format], FORMATS[desc.b_format], FORMATS[desc.scaling],
        const(a, 32), const(b, 32), SCALAR.const(c, 32), const(sa, 8), const(sb, 8),
        block=desc.scale_block, rules=rules))


@pytest.mark.parametrize("name", [
    "nvfp4-0", "nvfp4-1", "mxf8f6f4-e2m1", "mxf4-2x", "mxf4nvf4-2x", "mxf4nvf4-4x",
    "nvfp4-scale-nan", "nvfp4-k4-product-carry", "mxf8f6f4-scale-nan",
    "mxf8f6f4-e4m3-1x-negative-zero", "mxf4-e2m1-2x-negative-zero",
    "mxf4nvf4-e2m1-4x-negative-zero-ue4m3"])
def test_named_b200_words(name):
    record = frozen_record(name)
    assert compiled_dot(record.descriptor)(*record.words) == record.expected


def test_per_product_truncation_loses_the_k4_carry_b200_keeps():
    """SEMANTICS.md section 4: with groups of 1 the word comes out one unit too low."""
    record = frozen_record("nvfp4-k4-product-carry")
    assert _run(record.descriptor, record.words, NVFP4_RULES) == record.expected
    per_product = dataclasses.replace(NVFP4_RULES, product_group=1)
    assert _run(record.descriptor, record.words, per_product) == record.expected - 1


@pytest.mark.parametrize("name, rule, variant", [
    ("dense-mxf4", "floor174", dataclasses.replace(MXF4_RULES, subnormal_floor=None)),
    ("dense-mxf4nvf4-2x", "floor174", dataclasses.replace(MXF4_RULES, subnormal_floor=None)),
    ("dense-mxf4nvf4-4x", "floor174", dataclasses.replace(MXF4_RULES, subnormal_floor=None)),
    ("dense-mxf4", "group_c", dataclasses.replace(MXF4_RULES, group_c_merge=False)),
    ("dense-mxf4nvf4-4x", "group_c", dataclasses.replace(MXF4_RULES, group_c_merge=False)),
    ("dense-nvfp4", "split", dataclasses.replace(NVFP4_RULES, product_group=1)),
    ("dense-mxf4nvf4-4x-ue4m3", "split", dataclasses.replace(NVFP4_RULES, product_group=1)),
])
def test_rule_parameters_are_live_on_the_lines_that_pin_them(name, rule, variant: BlockRules):
    desc = CATALOG[name].descriptor
    lines = [r for r in read_vectors(REFERENCE_DIR / f"{name}.jsonl.gz")
             if not isinstance(r, Exception) and rule in getattr(r, "sensitive_to", [])]
    assert lines, f"no {rule} lines in {name}"
    base = rules_for(desc.kind, desc.scaling)
    for record in lines:
        assert _run(desc, record.words, base) == record.expected
    changed = sum(_run(desc, r.words, variant) != r.expected for r in lines)
    assert changed == len(lines)


def test_rule_tables():
    assert rules_for("mxf8f6f4", "ue8m0") is MXF8F6F4_RULES
    assert rules_for("mxf4", "ue8m0") is MXF4_RULES
    assert rules_for("mxf4nvf4", "ue8m0") is MXF4_RULES
    assert rules_for("mxf4nvf4", "ue4m3") is NVFP4_RULES
    assert rules_for("nvfp4", "ue4m3") is NVFP4_RULES


E2M1_ONE = 0x2


def test_a_nan_scale_is_nan_whatever_the_elements():
    zeros = [0] * 64
    assert mma_dot(zeros, zeros, 0, a_format="e2m1", scaling="ue4m3",
                   scale_a=[0x38, 0x38, 0x7F, 0x38], scale_b=[0x38] * 4) == 0x7FFFFFFF
    assert mma_dot(zeros, zeros, 0, a_format="e2m1", scaling="ue4m3",
                   scale_a=[0x38, 0x38, 0xFF, 0x38], scale_b=[0x38] * 4
                   ) == 0x7FFFFFFF, "bit 7 is ignored"
    assert mma_dot([0] * 32, [0] * 32, 0, a_format="e4m3", scaling="ue8m0",
                   scale_a=[0x7F], scale_b=[0xFF]) == 0x7FFFFFFF


def test_missing_scales_are_refused_unless_unit_and_extra_bytes_are_ignored():
    ones = [E2M1_ONE] * 64
    with pytest.raises(ValueError, match=r"scale_a and scale_b are missing.*unit_scales=True"):
        mma_dot(ones, ones, 0, a_format="e2m1", scaling="ue4m3")
    with pytest.raises(ValueError, match="scale_b is missing"):
        mma_dot(ones, ones, 0, a_format="e2m1", scaling="ue4m3", scale_a=[0x38] * 4)
    plain = mma_dot(ones, ones, 0, a_format="e2m1", scaling="ue4m3", unit_scales=True)
    assert plain == 0x42800000  # 64.0
    assert mma_dot(ones, ones, 0, a_format="e2m1", scaling="ue4m3", scale_a=[0x38] * 4,
                   scale_b=[0x38] * 4) == plain
    assert mma_dot(ones, ones, 0, a_format="e2m1", scaling="ue4m3",
                   scale_a=[0x38] * 4 + [0x7F], scale_b=[0x38] * 6) == plain
    with pytest.raises(ValueError, match=r"needs 4 \(one per 16-K block\)"):
        mma_dot(ones, ones, 0, a_format="e2m1", scaling="ue4m3", scale_a=[0x38] * 3)
    with pytest.raises(ValueError, match="scale byte"):
        mma_dot(ones, ones, 0, a_format="e2m1", scaling="ue4m3", scale_a=[0x38] * 3 + [256])


def test_all_zero_products_return_c_unchanged_and_zero_c_as_plus_zero():
    zeros = [0] * 64
    for c in (0x00000001, 0x80000001, 0x7F7FFFFF, 0x3F800000):
        assert mma_dot(zeros, zeros, c, a_format="e2m1", scaling="ue8m0", kind="mxf4",
                       unit_scales=True) == c
    assert mma_dot(zeros, zeros, 0x80000000, a_format="e2m1", scaling="ue4m3",
                   unit_scales=True) == 0


def test_every_intermediate_fits_the_native_numpy_width():
    """The widest bit-vector of any specified datapath is at most 64 bits, so the NumPy
    backend never needs its object fallback (which it would take, not overflow); the FP64
    FMA chains are the documented exception (SEMANTICS.md 11.1)."""
    for name, entry in CATALOG.items():
        if is_specified(entry.descriptor) and not c_exempt(entry.descriptor):
            widest = max(n.width or 0 for n in walk([traced(entry.descriptor).output]))
            assert widest <= 64, (name, widest)


def test_input_layout_has_one_scale_byte_per_block():
    desc = CATALOG["dense-nvfp4"].descriptor
    roles = [s.role for s in input_layout(desc)]
    assert roles.count("scale_a") == roles.count("scale_b") == 4
