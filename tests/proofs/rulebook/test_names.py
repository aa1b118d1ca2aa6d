"""names.py and the checked entry point: every name of NAMES.txt, layouts, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcspec.proofs.rulebook import layout, names, output_width, reference_dot
from tcspec.proofs.rulebook.names import parse
from tcspec.proofs.rulebook.registry import FAMILY_MODULES, family_function
from tcspec.spec.scalar import SCALAR

NAMES_TXT = Path(__file__).with_name("NAMES.txt")  # a copy of the brief's list
ALL = names()


def test_catalog_is_names_txt() -> None:
    assert len(ALL) == 282 and len(set(ALL)) == 282
    listed = [line.strip() for line in NAMES_TXT.read_text().splitlines() if line.strip()]
    assert listed == ALL


def _expected_k(name: str) -> int:
    rec = parse(name)
    if rec.kind is None:
        shape = rec.shape
        return int(shape.split("k")[-1]) if shape.startswith("m") else int(
            shape.split("x")[2].split("_")[0])
    dense = {"tf32": 8, "bf16": 16, "f16": 16}.get(rec.a_format, 32)
    if rec.kind in ("mxf4", "mxf4nvf4", "nvfp4"):
        dense = 64
    return dense * (2 if name.startswith("sparse-") else 1)


@pytest.mark.parametrize("name", ALL)
def test_layout(name: str) -> None:
    rec = parse(name)
    lay = layout(name)
    k = _expected_k(name)
    wide = 64 if "-f64-" in name else 32
    assert lay[:k] == [(f"a{i}", wide) for i in range(k)]
    assert lay[k:2 * k] == [(f"b{i}", wide) for i in range(k)]
    assert lay[2 * k] == ("c", wide)
    rest = lay[2 * k + 1:]
    scales = [n for n, w in rest if n.startswith("scale_") and w == 8]
    metas = [n for n, w in rest if n.startswith("meta") and w == 32]
    assert len(scales) + len(metas) == len(rest)
    n = len(scales) // 2
    assert scales == [f"scale_a{i}" for i in range(n)] + [f"scale_b{i}" for i in range(n)]
    if "-block" in name:
        block = int(name.split("-block")[1].split("-")[0])
        assert n == k // block
    elif name.startswith(("dense-mx-", "sparse-mx-")):
        assert n == 1
    elif name.split("-", 1)[1] in ("mxf4", "mxf4nvf4-2x"):
        assert n == 2
    elif name.split("-", 1)[1] in ("nvfp4", "mxf4nvf4-4x", "mxf4nvf4-4x-ue4m3"):
        assert n == 4
    else:
        assert n == 0
    if rec.sparse:
        chunk = {"tf32": 2}.get(rec.a_format, 8 if rec.n_scales >= 2 else 4)
        assert metas == [f"meta{i}" for i in range(-(-(k // chunk) // 8))]
    else:
        assert metas == []
    width = output_width(name)
    if name.startswith("i8-") or name.endswith("-f32") or name.startswith(("dense-", "sparse-")):
        assert width == 32
    elif name.endswith("-f16"):
        assert width == 16
    else:
        assert width == int(name.split("-d")[-1].split("-")[0])


def test_a_few_named_layouts() -> None:
    assert len(layout("dense-tf32")) == 17
    assert len(layout("sparse-tf32")) == 16 + 16 + 1 + 1
    assert layout("sparse-nvfp4")[-2:] == [("meta0", 32), ("meta1", 32)]
    assert len(layout("sparse-nvfp4")) == 128 * 2 + 1 + 8 + 2
    assert len(layout("sm_70-mma-m8n8k4-f16-f16-c16-d32")) == 9
    assert output_width("sm_70-mma-m8n8k4-f16-f16-c16-d16") == 16
    assert layout("cdna3-mfma-4x4x4_4b-f64-f64-c64-d64")[0] == ("a0", 64)
    assert len(layout("cdna2-mfma-32x32x4_1k-bf16-bf16-c32-d32")) == 9
    assert output_width("sm_90-mma-m16n8k16-f64-f64-c64-d64") == 64


def test_every_family_has_modules() -> None:
    assert {parse(n).family for n in ALL} <= set(FAMILY_MODULES)


def _words(name: str) -> dict:
    return {n: SCALAR.const(0, w) for n, w in layout(name)}


@pytest.mark.parametrize("bad", ["dense-f64", "dense-mx-e4m3-e4m3", "mixed-e4m3-e4m3-f32",
                                 "sparse-mx-e4m3-e5m2", "sm_70-mma-m8n8k4-f16-f16-c32-d16", "",
                                 "i8-u8-u8"])
def test_unknown_name(bad: str) -> None:
    with pytest.raises(ValueError, match="unknown datapath name"):
        reference_dot(SCALAR, bad, {})
    with pytest.raises(ValueError, match="unknown datapath name"):
        layout(bad)
    with pytest.raises(ValueError, match="unknown datapath name"):
        output_width(bad)


def test_missing_word() -> None:
    words = _words("dense-tf32")
    del words["b3"]
    with pytest.raises(ValueError, match=r"missing input word.*b3"):
        reference_dot(SCALAR, "dense-tf32", words)


def test_extra_word() -> None:
    words = _words("dense-tf32")
    words["a8"] = SCALAR.const(0, 32)
    with pytest.raises(ValueError, match=r"unexpected input word.*a8"):
        reference_dot(SCALAR, "dense-tf32", words)


def test_wrong_width() -> None:
    words = _words("mixed-e4m3-e2m1-f16")
    words["c"] = SCALAR.const(0, 16)
    with pytest.raises(ValueError, match="word c must be 32 bits, got 16"):
        reference_dot(SCALAR, "mixed-e4m3-e2m1-f16", words)


def test_not_a_bv() -> None:
    words = _words("i8-u8-u8-wrap")
    words["a0"] = 5
    with pytest.raises(ValueError, match="word a0 must be a BV"):
        reference_dot(SCALAR, "i8-u8-u8-wrap", words)
    with pytest.raises(ValueError, match="mapping"):
        reference_dot(SCALAR, "i8-u8-u8-wrap", [1, 2])


def test_missing_family_module_is_not_implemented() -> None:
    """A family whose module is absent says which (this holds only until it is written)."""
    for name in ALL:
        try:
            family_function(parse(name))
        except NotImplementedError as exc:
            assert name in str(exc) and parse(name).family in str(exc)
