"""FMA chains, CDNA3 fused dots and the fnuz formats (SEMANTICS.md section 11).

Every FMA-chain and CDNA3 line of ``ref/vectors/arch/`` (MMA-Sim c785138 model outputs,
NaN compared by class: the model returns the host's NaN) passes on the scalar lowering;
a sample runs on the traced-and-compiled, NumPy and Z3 lowerings (all of them behind
``full``). The hand-derived lines of ``ours__cdna3-rules.jsonl`` pin the rules MMA-Sim's
text leaves open, each beside the word a different reading gives.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import random
import struct
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcspec.ref import oracle
from tcspec.ref.batch import NumpyOps
from tcspec.ref.compiled import python_source
from tcspec.ref.run import run_scalar
from tcspec.smt.trace import TraceOps
from tcspec.spec import cdna3
from tcspec.spec import fma_chain as fma_chain_module
from tcspec.spec.accumulate import exact_product
from tcspec.spec.catalog import CATALOG
from tcspec.spec.exact import operand_range, place_exactly, product_range, round_exact
from tcspec.spec.fma_chain import fma_chain, fma_finite, fma_word
from tcspec.spec.formats import FORMATS, FloatFormat, decode_float
from tcspec.spec.scalar import SCALAR

ARCH_DIR = Path(__file__).resolve().parents[2] / "ref" / "vectors" / "arch"
OURS = ARCH_DIR / "ours__cdna3-rules.jsonl"
F32, F64 = FORMATS["f32"], FORMATS["f64"]


def _lines(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        return [json.loads(line) for line in f]


def _is_fma(record: dict) -> bool:
    return record["a_format"] in ("f32", "f64")


FILES = sorted(p.name for p in ARCH_DIR.glob("*.jsonl.gz")
               if p.name.startswith("cdna") or ".f64." in p.name)
FMA_FILES = [n for n in FILES if _is_fma(_lines(ARCH_DIR / n)[0])]
CDNA3_FILES = [n for n in FILES if n not in FMA_FILES]


def _fmt(record: dict) -> FloatFormat:
    fmt = FORMATS[record["d_format"]]
    assert isinstance(fmt, FloatFormat)
    return fmt


def _is_nan(word: int, fmt: FloatFormat) -> bool:
    exponent = (word >> fmt.frac_bits) & fmt.exp_max_field
    return exponent == fmt.exp_max_field and word & ((1 << fmt.frac_bits) - 1) != 0


def _matches(got: int, record: dict) -> bool:
    """Equal words, or both NaN (the model's NaN is the host's, section 11)."""
    if record["expected_class"] == "nan":
        return _is_nan(got, _fmt(record))
    return got == record["expected"]


def _dot(ops, record: dict, a, b, c, params=None):
    if _is_fma(record):
        return fma_chain(ops, _fmt(record), a, b, c)
    return cdna3.cdna3_dot(ops, record["a_format"], record["b_format"], a, b, c, params)


def _scalar(record: dict, params=None) -> int:
    width = _fmt(record).container_bits
    words = [[SCALAR.const(w, width) for w in record[k]] for k in ("a", "b")]
    return SCALAR.value(_dot(SCALAR, record, *words, SCALAR.const(record["c"], width), params))


def test_the_copied_files_are_the_cdna_and_fp64_combinations():
    assert len(FMA_FILES) == 27 and len(CDNA3_FILES) == 20
    assert {_lines(ARCH_DIR / n)[0]["arch"] for n in FILES} == {
        "cdna1", "cdna2", "cdna3", "sm_80", "sm_89", "sm_90", "sm_100", "sm_120"}


@pytest.mark.parametrize("name", FILES)
def test_every_line_passes_on_the_scalar_lowering(name):
    records = _lines(ARCH_DIR / name)
    assert len(records) == 100
    bad = [(r["case_index"], r["mode"], hex(_scalar(r)), r["expected_hex"])
           for r in records if not _matches(_scalar(r), r)]
    assert not bad, bad[:5]


def test_nan_lines_return_the_one_canonical_word():
    """The spec's NaN is canonical (all exponent and fraction bits set) where MMA-Sim's varies."""
    seen = set()
    for name in FILES:
        for r in _lines(ARCH_DIR / name):
            if r["expected_class"] == "nan":
                got, fmt = _scalar(r), _fmt(r)
                assert got == (1 << (fmt.exp_bits + fmt.frac_bits)) - 1, (name, hex(got))
                seen.add(r["expected"])
    assert len(seen) > 3


def _sample(names: list[str], per_file: int) -> list[dict]:
    rng = random.Random(20)
    return [r for n in names for r in rng.sample(_lines(ARCH_DIR / n), per_file)]


def _symbolic(ops_factory, record: dict):
    """(ops, input variables, result) of ``record``'s datapath on fresh variables."""
    ops = ops_factory()
    width = _fmt(record).container_bits
    a = [ops.variable(f"a{i}", width) for i in range(record["k"])]
    b = [ops.variable(f"b{i}", width) for i in range(record["k"])]
    c = ops.variable("c", width)
    return ops, [*a, *b, c], _dot(ops, record, a, b, c)


def _words(record: dict) -> list[int]:
    return [*record["a"], *record["b"], record["c"]]


def _check_compiled(records: list[dict]) -> None:
    programs: dict[str, object] = {}
    for r in records:
        key = f"{r['instruction']}-{r['a_format']}-{r['b_format']}-{r['k']}"
        if key not in programs:
            _, inputs, result = _symbolic(TraceOps, r)
            namespace: dict[str, object] = {}
            exec(python_source([v.node for v in inputs], result.node), namespace)
            programs[key] = namespace["dot"]
        got = programs[key](*_words(r))  # type: ignore[operator]
        assert _matches(got, r), (key, r["case_index"], hex(got), r["expected_hex"])


def _check_numpy(records: list[dict]) -> None:
    groups: dict[str, list[dict]] = {}
    for r in records:
        groups.setdefault(f"{r['instruction']}-{r['a_format']}-{r['k']}", []).append(r)
    for group in groups.values():
        ops = NumpyOps()
        width = _fmt(group[0]).container_bits
        columns = [ops.input(np.array([_words(r)[i] for r in group], dtype=object), width)
                   for i in range(2 * group[0]["k"] + 1)]
        k = group[0]["k"]
        out = _dot(ops, group[0], columns[:k], columns[k:2 * k], columns[2 * k]).node
        out = np.broadcast_to(out, (len(group),))
        for r, got in zip(group, out):
            assert _matches(int(got), r), (r["instruction"], r["case_index"], hex(int(got)))


def _check_z3(records: list[dict]) -> None:
    import z3

    from tcspec.smt.z3_backend import Z3Ops, concrete_value

    for r in records:
        _, inputs, result = _symbolic(Z3Ops, r)
        pairs = [(v.node, z3.BitVecVal(w, v.width)) for v, w in zip(inputs, _words(r))]
        got = concrete_value(z3.simplify(z3.substitute(result.node, *pairs)))
        assert _matches(got, r), (r["instruction"], r["case_index"], hex(got))


def test_a_sample_passes_on_the_compiled_numpy_and_z3_lowerings():
    cdna = _sample(CDNA3_FILES, 2)
    fma = _sample(["cdna3__mfma__f32_16x16x4_f32.jsonl.gz",
                   "sm_90__mma__m16n8k4.f64.f64.f64.f64.jsonl.gz"], 3)
    _check_compiled(cdna + fma)
    _check_numpy(cdna + fma)
    _check_z3(_sample(["cdna3__mfma__f32_16x16x32_fp8_bf8.jsonl.gz",
                       "cdna3__mfma__f32_32x32x4_xf32.jsonl.gz"], 2) + fma[:2])


@pytest.mark.full
def test_every_line_passes_on_the_compiled_numpy_and_z3_lowerings():
    records = [r for n in FILES for r in _lines(ARCH_DIR / n)]
    _check_compiled(records)
    _check_numpy(records)
    _check_z3(_sample(FILES, 5))


# ----------------------------------------------------------------- hand-derived rule lines

OURS_LINES = _lines(OURS)


@pytest.mark.parametrize("record", OURS_LINES, ids=[r["name"] for r in OURS_LINES])
def test_rule_lines_pin_their_rule(record):
    """The spec gives the derived word, and each reading the parameters can express gives
    the other word the line names (so the line tells the readings apart)."""
    assert record["provenance"] == "ours"
    assert _matches(_scalar(record), record)
    params = cdna3.cdna3_params(record["a_format"], record["b_format"], record["k"])
    for alternative in record["alternatives"]:
        assert alternative["expected"] != record["expected"]
        if alternative["params"]:
            other = dataclasses.replace(params, **alternative["params"])
            got = _scalar(record, other)
            assert got == alternative["expected"], (alternative["reading"], hex(got))


def test_rule_lines_cover_the_open_rules():
    names = {r["name"] for r in OURS_LINES}
    assert {"fp8-round-down-order", "fp8-e4m3fnuz-subnormal-exponent",
            "bf8-e5m2fnuz-subnormal-exponent", "xf32-infinity-per-group",
            "xf32-overflow-between-groups"} <= names


# ------------------------------------------------------------------------ FMA vs Fractions


def _value(word: int, fmt: FloatFormat):
    d = decode_float(SCALAR, fmt, SCALAR.const(word, max(32, fmt.container_bits)))
    if SCALAR.truth(d.is_nan):
        return oracle.NAN
    negative = SCALAR.truth(d.negative)
    if SCALAR.truth(d.is_inf):
        return oracle.NEG_INF if negative else oracle.POS_INF
    magnitude = Fraction(SCALAR.value(d.mag)) * Fraction(2) ** (SCALAR.signed_value(d.raw)
                                                                 - fmt.frac_bits)
    return -magnitude if negative else magnitude


def _round_rne(value: Fraction, fmt: FloatFormat) -> int:
    """The IEEE RNE word of a nonzero exact ``value`` (an independent rounding)."""
    sign = (1 << (fmt.container_bits - 1)) if value < 0 else 0
    x = abs(value)
    e = x.numerator.bit_length() - x.denominator.bit_length()
    while Fraction(2) ** e > x:
        e -= 1
    while Fraction(2) ** (e + 1) <= x:
        e += 1
    e = max(e, fmt.emin)
    scaled = x / Fraction(2) ** (e - fmt.frac_bits)
    n, rest = divmod(scaled.numerator, scaled.denominator)
    if 2 * rest > scaled.denominator or (2 * rest == scaled.denominator and n % 2):
        n += 1
    word = ((e - fmt.emin) << fmt.frac_bits) + n if n else 0
    infinity = fmt.exp_max_field << fmt.frac_bits
    return sign | min(word, infinity)


def _fma_reference(a: int, b: int, c: int, fmt: FloatFormat) -> int | str:
    """IEEE 754 fusedMultiplyAdd, RNE, by exact rationals ("nan" for any NaN)."""
    x, y, z = (_value(w, fmt) for w in (a, b, c))
    sign = 1 << (fmt.container_bits - 1)
    inf = fmt.exp_max_field << fmt.frac_bits
    if oracle.NAN in (x, y, z):
        return "nan"
    if (x in (0, ) and isinstance(y, str)) or (y == 0 and isinstance(x, str)):
        return "nan"
    if isinstance(x, str) or isinstance(y, str):
        negative = (x == oracle.NEG_INF or (not isinstance(x, str) and x < 0)) != \
            (y == oracle.NEG_INF or (not isinstance(y, str) and y < 0))
        if isinstance(z, str) and (z == oracle.NEG_INF) != negative:
            return "nan"
        return inf | (sign if negative else 0)
    if isinstance(z, str):
        return inf | (sign if z == oracle.NEG_INF else 0)
    total = x * y + z
    if total == 0:
        p_negative = (a ^ b) & sign
        both_negative_zero = x * y == 0 and z == 0 and p_negative and c & sign
        return sign if both_negative_zero else 0
    word = _round_rne(total, fmt)
    return word if word & ~sign else (sign if total < 0 else 0)


def _special_heavy(bits: int):
    fmt_max = (1 << bits) - 1
    return st.one_of(st.integers(0, fmt_max), st.sampled_from(
        [0, 1 << (bits - 1), 1, fmt_max >> 1, (fmt_max >> 1) ^ 1]))


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_one_fma_step_is_the_correctly_rounded_ieee_fma(data):
    fmt = data.draw(st.sampled_from([F32, F64]))
    bits, frac = fmt.container_bits, fmt.frac_bits
    bias = fmt.bias
    word = st.builds(lambda s, e, f: (s << (bits - 1)) | (e << frac) | f, st.integers(0, 1),
                     st.integers(0, fmt.exp_max_field), st.integers(0, (1 << frac) - 1))
    a = data.draw(st.one_of(word, _special_heavy(bits)))
    b = data.draw(st.one_of(word, _special_heavy(bits)))
    # C near the product often, so that cancellation and the sticky bit are exercised
    near = st.builds(lambda s, d, f: (s << (bits - 1)) | (max(0, min(
        fmt.exp_max_field - 1, ((a >> frac) & fmt.exp_max_field) + ((b >> frac) & fmt.exp_max_field)
        - bias + d)) << frac) | f, st.integers(0, 1), st.integers(-60, 60),
        st.integers(0, (1 << frac) - 1))
    c = data.draw(st.one_of(word, near, _special_heavy(bits)))
    got = SCALAR.value(fma_word(SCALAR, fmt, *(SCALAR.const(w, bits) for w in (a, b, c))))
    want = _fma_reference(a, b, c, fmt)
    if want == "nan":
        assert _is_nan(got, fmt)
    else:
        assert got == want, (fmt.name, hex(a), hex(b), hex(c), hex(got), hex(want))


def test_fma_signed_zeros_follow_ieee():
    neg = 1 << 31
    one, zero = 0x3F800000, 0

    def step(a, b, c):
        return SCALAR.value(fma_word(SCALAR, F32, *(SCALAR.const(w, 32) for w in (a, b, c))))
    assert step(neg | one, zero, neg) == neg              # -0 + -0 = -0
    assert step(one, zero, neg) == zero                   # +0 + -0 = +0
    assert step(one, one, neg | one) == zero              # exact cancellation: +0
    assert step(neg | 1, 1, zero) == neg                  # tiny negative product rounds to -0
    assert step(0x7F7FFFFF, 0x40000000, zero) == 0x7F800000  # overflow: +Inf


def test_fma_sticky_bit_breaks_a_tie():
    """24929 * 673 = 2^24 + 1, a tie at 24 bits; a C far below the register's last unit
    (2^-100) still lifts it above the tie: 2^24 + 2, not the even 2^24."""
    a, b, tiny = (struct.unpack(">I", struct.pack(">f", x))[0] for x in (24929.0, 673.0, 2.0**-100))
    step = fma_word(SCALAR, F32, *(SCALAR.const(w, 32) for w in (a, b, tiny)))
    assert SCALAR.value(step) == 0x4B800001
    step = fma_word(SCALAR, F32, *(SCALAR.const(w, 32) for w in (a, b, tiny | 1 << 31)))
    assert SCALAR.value(step) == 0x4B800000


def _fma_register_mismatches(fmt: FloatFormat, a_words) -> int:
    """How many finite triples (a in ``a_words``, every b and c) the register's word differs
    on from the exact sum rounded once (:func:`spec.exact.round_exact`), on NumPy lanes."""
    n = 1 << fmt.container_bits
    words = np.arange(n, dtype=np.uint64)
    bad = 0
    for a in a_words:
        ops = NumpyOps()
        x, y, z = (decode_float(ops, fmt, ops.input(v, fmt.container_bits)) for v in (
            np.full(n * n, a, dtype=np.uint64), np.repeat(words, n), np.tile(words, n)))
        word, _ = fma_finite(ops, fmt, x, y, z)
        exact = place_exactly(ops, [exact_product(ops, x.term, y.term), z.term],
                              [product_range(fmt, fmt), operand_range(fmt)])
        finite = ops.and_(*(ops.not_(ops.or_(d.is_nan, d.is_inf)) for d in (x, y, z)))
        differs = ops.and_(finite, ops.ne(word, round_exact(ops, exact, fmt, "rne")))
        bad += int(np.broadcast_to(differs.node, (n * n,)).sum())
    return bad


E5M2_SAMPLE = range(3, 256, 16)


def test_fma_register_rounds_like_the_exact_sum_on_e5m2_triples():
    """The register argument of section 11.1 is generic in the precision: on the IEEE e5m2
    row (3-bit significands, the full exponent range) the register's word is the exact sum
    rounded once; without the sticky half unit, or with ``W = p + 1``, it is not."""
    e5m2 = FORMATS["e5m2"]
    assert isinstance(e5m2, FloatFormat)
    assert _fma_register_mismatches(e5m2, E5M2_SAMPLE) == 0


def test_fma_register_breakers_are_caught(monkeypatch):
    e5m2 = FORMATS["e5m2"]
    assert isinstance(e5m2, FloatFormat)
    aligned = fma_chain_module._aligned
    monkeypatch.setattr(fma_chain_module, "_aligned",
                        lambda ops, *args: (aligned(ops, *args)[0], ops.false()))
    assert _fma_register_mismatches(e5m2, E5M2_SAMPLE) > 0
    monkeypatch.undo()
    monkeypatch.setattr(fma_chain_module, "fma_register_bits", lambda fmt: 2 * fmt.sig_bits + 1)
    assert _fma_register_mismatches(e5m2, [1, 96, 129, 240]) > 0


@pytest.mark.full
def test_fma_register_rounds_like_the_exact_sum_on_every_e5m2_triple():
    """All 2^24 triples (about 30 s)."""
    e5m2 = FORMATS["e5m2"]
    assert isinstance(e5m2, FloatFormat)
    assert _fma_register_mismatches(e5m2, range(256)) == 0


def test_fma_chain_rounds_after_every_product():
    """1 + 2^-24 + 2^-24: each step rounds to nearest even, so the chain stays at 1."""
    one, half_ulp = 0x3F800000, 0x33800000
    words = [SCALAR.const(w, 32) for w in (half_ulp, half_ulp)]
    d = fma_chain(SCALAR, F32, words, [SCALAR.const(one, 32)] * 2, SCALAR.const(one, 32))
    assert SCALAR.value(d) == one


# ------------------------------------------------------------------------ fnuz formats


def _fnuz_value(name: str, byte: int):
    """An independent reading of the fnuz layouts (SEMANTICS.md 11.3)."""
    exp_bits, frac_bits, bias = {"e4m3fnuz": (4, 3, 8), "e5m2fnuz": (5, 2, 16)}[name]
    if byte == 0x80:
        return oracle.NAN
    sign = -1 if byte & 0x80 else 1
    field, frac = (byte >> frac_bits) & ((1 << exp_bits) - 1), byte & ((1 << frac_bits) - 1)
    if field == 0:
        return sign * Fraction(frac, 1 << frac_bits) * Fraction(2) ** (1 - bias)
    return sign * (1 + Fraction(frac, 1 << frac_bits)) * Fraction(2) ** (field - bias)


@pytest.mark.parametrize("name", ["e4m3fnuz", "e5m2fnuz"])
def test_every_fnuz_byte_decodes_like_the_layout(name):
    fmt = FORMATS[name]
    assert isinstance(fmt, FloatFormat)
    for byte in range(256):
        word = byte | 0xA5A5A500
        assert _value(word, fmt) == _fnuz_value(name, byte), (name, hex(byte))


def test_fnuz_extremes():
    e4, e5 = FORMATS["e4m3fnuz"], FORMATS["e5m2fnuz"]
    assert isinstance(e4, FloatFormat) and isinstance(e5, FloatFormat)
    assert _value(0x7F, e4) == 240 and _value(0xFF, e4) == -240
    assert _value(0x7F, e5) == 57344 and _value(0x01, e5) == Fraction(1, 2**17)
    assert _value(0x01, e4) == Fraction(1, 2**10) and _value(0x00, e4) == 0
    assert e4.min_raw == -7 and e5.min_raw == -15
    for fmt in (e4, e5):
        d = decode_float(SCALAR, fmt, SCALAR.const(0x80, 8))
        assert SCALAR.truth(d.is_nan) and not SCALAR.truth(d.is_zero)
        assert not any(SCALAR.truth(decode_float(SCALAR, fmt, SCALAR.const(w, 8)).is_inf)
                       for w in range(256))


# ------------------------------------------------- chain identities (ARCHITECTURES.md 0)


def _run(name: str, a, b, c) -> int:
    desc = CATALOG[name].descriptor
    return run_scalar(desc, [*a, *b, c])


CHAINS = [("cdna3-mfma-16x16x16-f16-f16-c32-d32", "cdna3-mfma-32x32x8-f16-f16-c32-d32"),
          ("cdna3-mfma-16x16x16-bf16-bf16-c32-d32", "cdna3-mfma-32x32x8-bf16-bf16-c32-d32"),
          ("cdna3-mfma-16x16x8-xf32-xf32-c32-d32", "cdna3-mfma-32x32x4-xf32-xf32-c32-d32"),
          ("cdna3-mfma-16x16x32-e4m3fnuz-e5m2fnuz-c32-d32",
           "cdna3-mfma-32x32x16-e4m3fnuz-e5m2fnuz-c32-d32"),
          ("cdna3-mfma-16x16x4-f32-f32-c32-d32", "cdna3-mfma-32x32x2-f32-f32-c32-d32"),
          ("sm_90-mma-m16n8k8-f64-f64-c64-d64", "sm_90-mma-m16n8k4-f64-f64-c64-d64")]


@pytest.mark.parametrize("whole,half", CHAINS)
def test_an_instruction_is_two_chained_half_k_instructions(whole, half):
    """Groups (CDNA3) and FMA steps chain: D of the first half is C of the second."""
    desc = CATALOG[whole].descriptor
    bits, k = desc.operand_bits, desc.k
    rng = random.Random(whole)
    for _ in range(25):
        a = [rng.getrandbits(bits) for _ in range(k)]
        b = [rng.getrandbits(bits) for _ in range(k)]
        c = rng.getrandbits(bits)
        first = _run(half, a[:k // 2], b[:k // 2], c)
        assert _run(whole, a, b, c) == _run(half, a[k // 2:], b[k // 2:], first)


def test_the_cdna3_f16_group_size_is_observable():
    """32x32x8 (one group of 8) and 32x32x4_2b chained twice (groups of 4) differ on some
    inputs: rounding to F32 between groups is visible (ARCHITECTURES.md section 0: 81/100)."""
    rng = random.Random(8)
    differ = 0
    for _ in range(100):
        a = [0x3C00 | rng.getrandbits(10) for _ in range(8)]
        b = [(rng.getrandbits(1) << 15) | 0x3C00 | rng.getrandbits(10) for _ in range(8)]
        c = 0x3F800000 | rng.getrandbits(23)
        whole = _run("cdna3-mfma-32x32x8-f16-f16-c32-d32", a, b, c)
        first = _run("cdna3-mfma-32x32x4_2b-f16-f16-c32-d32", a[:4], b[:4], c)
        differ += whole != _run("cdna3-mfma-32x32x4_2b-f16-f16-c32-d32", a[4:], b[4:], first)
    assert differ > 0
