"""proofs/reference.py: the SEMANTICS-only decoder and error bound, on concrete words."""

from __future__ import annotations

import random

import pytest

from tcspec.proofs import reference
from tcspec.spec.catalog import DotInputs, build_dot, descriptor_of
from tcspec.spec.formats import FORMATS, decode_float
from tcspec.spec.scalar import SCALAR


@pytest.mark.parametrize("fmt", sorted(set(reference.LAYOUTS) - {"e8m13"}))
def test_the_decoder_agrees_with_the_spec_on_every_word_or_a_sample(fmt: str) -> None:
    spec_format = FORMATS[fmt]
    rng = random.Random(fmt)
    bits = reference.LAYOUTS[fmt].bits
    width = max(32, bits)
    words = range(1 << bits) if bits <= 16 else [rng.getrandbits(width) for _ in range(3000)]
    assert reference.sign_bit(fmt) == spec_format.container_bits - 1
    for word in words:
        ours = reference.decode(SCALAR, fmt, SCALAR.const(word, width))
        theirs = decode_float(SCALAR, spec_format, SCALAR.const(word, width))
        assert bool(ours.nan.node) == bool(theirs.is_nan.node), hex(word)
        assert bool(ours.inf.node) == bool(theirs.is_inf.node), hex(word)
        if not (ours.nan.node or ours.inf.node):
            assert ours.mag.node == theirs.mag.node, hex(word)
            assert bool(ours.negative.node) == bool(theirs.negative.node), hex(word)


@pytest.mark.parametrize("fmt", sorted(reference.SCALE_LAYOUTS))
def test_the_scale_decoder_agrees_with_the_spec_on_every_byte(fmt: str) -> None:
    for byte in range(256):
        ours = reference.decode_scale(SCALAR, fmt, SCALAR.const(byte, 8))
        theirs = decode_float(SCALAR, FORMATS[fmt], SCALAR.const(byte, 8))
        assert bool(ours.nan.node) == bool(theirs.is_nan.node), hex(byte)
        assert bool(ours.nonzero.node) == (not theirs.is_zero.node), hex(byte)
        if not ours.nan.node and ours.nonzero.node:
            assert ours.mag.node == theirs.mag.node, hex(byte)
            assert _signed(ours.raw) == _signed(theirs.raw), hex(byte)


def _signed(x) -> int:
    return x.node - (1 << x.width) if x.node >> (x.width - 1) else x.node


@pytest.mark.parametrize("name", ["dense-tf32", "dense-e4m3"])
def test_the_error_bound_holds_on_random_words_and_fails_on_a_wrong_d(name: str) -> None:
    desc = descriptor_of(name)
    rng = random.Random(name)
    checked = 0
    for _ in range(300):
        words = [SCALAR.const(rng.getrandbits(32), 32) for _ in range(2 * desc.k + 1)]
        a, b, c = words[:desc.k], words[desc.k:2 * desc.k], words[-1]
        d = build_dot(SCALAR, desc, DotInputs(a, b, c))
        violated, _ = reference.error_bound_violation(SCALAR, desc.a_format, desc.b_format,
                                                      a, b, c, d)
        assert not violated.node
        wrong, _ = reference.error_bound_violation(SCALAR, desc.a_format, desc.b_format, a, b,
                                                   c, SCALAR.const(0x7F000000, 32))
        checked += bool(wrong.node)
    assert checked > 0


def test_the_e8m13_accumulator_decodes_f32_words_with_13_fraction_bits() -> None:
    """ARCHITECTURES.md 1.4: an e8m13 D is an F32 word whose low 10 bits are zero; read as
    13 fraction bits its value is the F32 word's."""
    for word in (0x3F800000, 0xBFFFFC00, 0x00000400, 0x00400000, 0x7F7FFC00):
        ours = reference.decode(SCALAR, "e8m13", SCALAR.const(word, 32))
        theirs = decode_float(SCALAR, FORMATS["f32"], SCALAR.const(word, 32))
        assert int(ours.mag.node) << 10 == int(theirs.mag.node), hex(word)
        assert ours.frac_bits == 13
