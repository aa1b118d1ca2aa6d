"""Descriptor defaults and legality (spec/descriptor.py, SEMANTICS.md sections 2-6)."""

from __future__ import annotations

import pytest

from tcspec.spec.catalog import CATALOG, HARDWARE_VALIDATED, TCGEN05, descriptor_of, lookup
from tcspec.spec.descriptor import resolve


def test_defaults_are_spelled_out():
    d = resolve("tf32")
    assert (d.b_format, d.d_type, d.kind, d.k) == ("tf32", "f32", "tf32", 8)
    assert resolve("s8").d_type == "s32"
    assert resolve("fp8").a_format == "e4m3"
    assert resolve("fp4", "fp8", "f16").name == "mixed-e2m1-e4m3-f16"
    assert resolve("e2m1", scaling="ue4m3").scale_vec == 4
    assert resolve("e4m3", scaling="ue8m0").kind == "mxf8f6f4"
    assert resolve("e2m1", scaling="ue8m0", kind="mxf4nvf4").scale_vec == 2


@pytest.mark.parametrize("fields, message", [
    (dict(a_format="tf32", b_format="bf16"), "tf32 A requires tf32 B and F32 D, got.*bf16"),
    (dict(a_format="tf32", d_type="f16"), "tf32 A requires tf32 B and F32 D"),
    (dict(a_format="bf16", b_format="f16"), "kind::f16 needs matching"),
    (dict(a_format="bf16", d_type="f16"), "F16 D only for f16 x f16"),
    (dict(a_format="e4m3", saturate=True), "saturate applies only to integer"),
    (dict(a_format="e4m3", d_type="s32"), "needs integer formats"),
    (dict(a_format="u8", b_format="e4m3"), "kind::i8 needs integer A and B"),
    (dict(a_format="s8", d_type="f32"), "S32"),
    (dict(a_format="fp64"), "unknown a_format 'fp64'"),
    (dict(a_format="e4m3", b_format="f32"), "unknown b_format 'f32'"),
    (dict(a_format="e4m3", d_type="f64"), "unknown d_type"),
    (dict(a_format="e4m3", scaling="ue5m2"), "unknown scaling"),
    (dict(a_format="e4m3", kind="mxf9"), "unknown kind"),
    (dict(a_format="e4m3", kind="mxf4"), "block-scaled and needs scaling"),
    (dict(a_format="e4m3", scale_vec=2), "applies only to block-scaled"),
    (dict(a_format="tf32", kind="f16"), "does not match formats"),
    (dict(a_format="e4m3", scaling="ue4m3"), "UE4M3 scaling .* needs e2m1"),
    (dict(a_format="e2m1", scaling="ue4m3", scale_vec=2), "needs scale_vec=4"),
    (dict(a_format="e2m1", scaling="ue8m0"), "ambiguous"),
    (dict(a_format="e4m3", scaling="ue8m0", scale_vec=2), "scale_vec=1"),
    (dict(a_format="e4m3", scaling="ue8m0", kind="mxf4"), "needs e2m1 A and B"),
    (dict(a_format="e2m1", scaling="ue8m0", kind="mxf4", scale_vec=4), "scale_vec=2"),
    (dict(a_format="e2m1", scaling="ue8m0", kind="nvfp4"), "UE4M3"),
    (dict(a_format="e2m1", scaling="ue8m0", kind="mxf4nvf4", scale_vec=1), "2 or 4"),
    (dict(a_format="e4m3", scaling="ue8m0", d_type="f16"), "accumulate to F32"),
    (dict(a_format="tf32", scaling="ue8m0"), "block-scaled a_format must be"),
    (dict(a_format="s8", sparse=True), "sparse kind::i8"),
])
def test_illegal_descriptors_name_the_rule(fields, message):
    with pytest.raises(ValueError, match=message):
        resolve(**fields)


def test_f16_f16_to_f16_is_modelled_but_flagged_unvalidated():
    d = resolve("f16", d_type="f16")
    assert d.name == "mixed-f16-f16-f16" and not d.validated_shape
    assert resolve("f16").validated_shape


def test_catalog_holds_the_46_hardware_datapaths_by_canonical_name():
    assert len(HARDWARE_VALIDATED) == 46 == len(set(HARDWARE_VALIDATED))
    for name in HARDWARE_VALIDATED:
        assert CATALOG[name].descriptor.name == name
    for name, entry in CATALOG.items():
        assert entry.descriptor.name == name
    for entry in TCGEN05.values():
        assert entry.arch == "sm_100" and entry.instruction == "tcgen05"
        assert resolve(**entry.descriptor.fields(), sparse=entry.descriptor.sparse) == \
            entry.descriptor


def test_every_mixed_pair_is_catalogued():
    formats = ("e4m3", "e5m2", "e2m3", "e3m2", "e2m1")
    for a in formats:
        for b in formats:
            assert f"mixed-{a}-{b}-f16" in CATALOG
            if a != b:
                assert f"mixed-{a}-{b}-f32" in CATALOG


def test_lookup_accepts_short_aliases_and_refuses_unknown_names():
    assert lookup("tf32").name == "dense-tf32"
    assert lookup(" Dense-TF32 ").name == "dense-tf32"
    assert lookup("mx-e4m3").name == "dense-mx-e4m3"
    with pytest.raises(ValueError, match="unknown datapath 'dense-fp64'"):
        lookup("dense-fp64")
    assert descriptor_of({"a_format": "bf16"}).name == "dense-bf16"


def test_sparse_geometry():
    assert resolve("tf32", sparse=True).k == 16
    assert resolve("tf32", sparse=True).metadata_words == 1
    assert resolve("e4m3", sparse=True).metadata_words == 2
    d = resolve("e2m1", scaling="ue4m3", sparse=True)
    assert (d.k, d.scale_count, d.scale_block, d.metadata_words) == (128, 4, 16, 2)
