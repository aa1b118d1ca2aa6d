"""``tcspec explain``: the stages of one dot product, as recorded while the spec runs.

The specification calls ``ops.observe(stage, **values)`` at its stage
boundaries (a no-op on every other backend). :class:`RecordingOps` is the
scalar backend that keeps those values; this module only reads them and
lays them out (SEMANTICS.md sections 1-5 name the stages). Nothing here
re-implements a rule: the result word, every exponent, unit count and
rounding comes from the one run. Values are exact (Python ints and
Fractions, shown as hex-floats); decimals are for display only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any

from tcspec.spec.bitvec import BV, Bool
from tcspec.spec.candidates import HARDWARE, build_model, get_candidate
from tcspec.spec.catalog import input_layout, inputs_from
from tcspec.spec.descriptor import Descriptor
from tcspec.spec.formats import FORMATS, Decoded, IntFormat, Term, decode_int
from tcspec.spec.scalar import SCALAR, ScalarOps
from tcspec.spec.sparse import select_active
from tcspec.words import describe_word, hex_word


class RecordingOps(ScalarOps):
    """The scalar backend, keeping every ``observe`` call in order."""

    name = "scalar-recording"

    def __init__(self) -> None:
        self.records: list[tuple[str, dict[str, Any]]] = []

    def observe(self, stage: str, **values: Any) -> None:
        self.records.append((stage, values))


# ------------------------------------------------------------------ exact values


def hexfloat(x: Fraction | int) -> str:
    """An exact dyadic value as a C99 hex-float (``0x1.8p-3``); ``0`` for zero."""
    x = Fraction(x)
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    n, d = abs(x.numerator), x.denominator
    if d & (d - 1):
        return f"{sign}{n}/{d}"
    length = n.bit_length()
    exponent = length - 1 - (d.bit_length() - 1)
    bits = length - 1
    pad = -bits % 4
    digits = f"{(n - (1 << bits)) << pad:0{(bits + pad) // 4}x}".rstrip("0") if bits else ""
    return f"{sign}0x1{'.' + digits if digits else ''}p{exponent:+d}"


def approx(x: Fraction | int) -> str:
    """A 7-digit decimal reading of ``x`` (display only)."""
    x = Fraction(x)
    with localcontext() as context:
        context.prec = 7
        return f"{Decimal(x.numerator) / Decimal(x.denominator):.7g}"


def dyadic(negative: bool, mag: int, exponent: int) -> Fraction:
    value = Fraction(mag) * Fraction(2) ** exponent
    return -value if negative else value


def set_bits_below(mag: int, count: int) -> int:
    """How many one bits of ``mag`` sit in its lowest ``count`` positions."""
    return bin(mag & ((1 << count) - 1)).count("1") if count > 0 else 0


# ------------------------------------------------------------------ stages


@dataclass
class Stage:
    """One stage of the computation: notes, a table and its data (JSON-ready)."""

    name: str
    title: str
    notes: list[str] = field(default_factory=list)
    columns: list[tuple[str, str]] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)

    def data(self) -> dict[str, Any]:
        return {"stage": self.name, "title": self.title, "facts": self.facts,
                "rows": self.rows, "notes": self.notes}

    def text(self) -> list[str]:
        lines = [f"-- {self.title}"] + [f"   {note}" for note in self.notes]
        if self.rows:
            cells = [[h for h, _ in self.columns]]
            cells += [["" if row.get(key) is None else str(row.get(key))
                       for _, key in self.columns] for row in self.rows]
            widths = [max(len(r[i]) for r in cells) for i in range(len(self.columns))]
            for r in cells:
                lines.append("   " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        return lines


@dataclass
class AlignedTerm:
    """A term as the window sees it: exact value ``+-mag * 2^lsb`` and its unit count."""

    label: str
    negative: bool
    mag: int
    lsb: int
    units: int

    @property
    def value(self) -> Fraction:
        return dyadic(self.negative, self.mag, self.lsb)

    def lost_at(self, quantum: int) -> Fraction:
        """What alignment to units of ``2^quantum`` dropped (exact minus aligned)."""
        return self.value - self.units * Fraction(2) ** quantum


@dataclass
class Alignment:
    """What the bit-alignment picture shows (SEMANTICS.md sections 2.4-2.7, 4)."""

    terms: list[AlignedTerm]
    quantum: int
    window_top: int | None
    window_bits: int | None
    total_units: int = 0
    result_lsb: int | None = None
    result_kept: int | None = None
    result_text: str = ""


@dataclass
class Explanation:
    """Every recorded stage of one model on one input, and the result word."""

    datapath: str
    model: str
    descriptor: Descriptor
    words: list[int]
    stages: list[Stage]
    word: int
    alignment: Alignment | None

    def data(self) -> dict[str, Any]:
        return {"datapath": self.datapath, "model": self.model,
                "descriptor": self.descriptor.fields(),
                "inputs": _words_by_role(self.descriptor, self.words),
                "stages": [s.data() for s in self.stages], "result": self.word,
                "result_hex": hex_word(self.word, self.descriptor.d_type),
                "result_value": describe_word(self.word, self.descriptor.d_type)}

    def text(self) -> str:
        desc = self.descriptor
        lines = [f"{self.datapath}  K={desc.k}  ({desc.d_type.upper()} D)  model: {self.model}"]
        for stage in self.stages:
            lines += stage.text()
        lines.append(f"D = {hex_word(self.word, desc.d_type)}  "
                     f"({describe_word(self.word, desc.d_type)})")
        return "\n".join(lines)


class _Reader:
    """Turns recorded spec values (scalar BVs, Terms, Decoded) into exact numbers."""

    def __init__(self, rec: RecordingOps, desc: Descriptor, words: Sequence[int]) -> None:
        self.rec = rec
        self.desc = desc
        self.words_by_role = _words_by_role(desc, words)
        self.labels = [str(i) for i in range(desc.k)]
        self.stages: list[Stage] = []
        self.alignment: Alignment | None = None
        self.window: dict[str, Any] = {}
        self.merges: list[dict[str, Any]] = []
        self.converts = 0

    def u(self, x: BV) -> int:
        return self.rec.value(x)

    def s(self, x: BV) -> int:
        return self.rec.signed_value(x)

    def t(self, x: Bool) -> bool:
        return self.rec.truth(x)

    def term(self, term: Term) -> dict[str, Any]:
        negative, mag, raw = self.t(term.negative), self.u(term.mag), self.s(term.raw)
        value = dyadic(negative, mag, raw - term.frac_offset)
        return {"m": -mag if negative else mag, "raw": raw, "e": raw - term.frac_offset,
                "nonzero": self.t(term.nonzero), "value": hexfloat(value),
                "approx": approx(value), "_value": value}

    def decoded(self, d: Decoded) -> dict[str, Any]:
        mag, raw, negative = self.u(d.mag), self.s(d.raw), self.t(d.negative)
        if self.t(d.is_nan):
            kind = "NaN"
        elif self.t(d.is_inf):
            kind = "-Inf" if negative else "+Inf"
        elif self.t(d.is_zero):
            kind = "-0" if negative else "+0"
        elif d.fmt.subnormals and mag >> d.fmt.frac_bits == 0:
            kind = "subnormal"
        else:
            kind = "normal"
        finite = kind not in ("NaN", "+Inf", "-Inf")
        value = dyadic(negative, mag, raw - d.fmt.frac_bits) if finite else None
        return {"class": kind, "sign": "-" if negative else "+", "m": mag, "raw": raw,
                "value": hexfloat(value) if value is not None else kind}


def _words_by_role(desc: Descriptor, words: Sequence[int]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {}
    for spec, word in zip(input_layout(desc), words):
        groups.setdefault(spec.role, []).append(word)
    return groups


# ------------------------------------------------------------------ stage readers


def _sparse(r: _Reader, v: dict[str, Any]) -> None:
    rule, selectors = v["rule"], [r.u(s) for s in v["selectors"]]
    size = len(r.words_by_role["a"]) // len(selectors)
    logical = [SCALAR.const(i, 8) for i in range(size * len(selectors))]
    kept = [SCALAR.value(x) for x in select_active(
        SCALAR, rule, logical, [SCALAR.const(s, 4) for s in selectors])]
    r.labels = [str(i) for i in kept]
    per_chunk = len(kept) // len(selectors)
    rows = [{"chunk": j, "lanes": f"{size * j}..{size * j + size - 1}",
             "selector": f"0x{s:X}", "kept": ",".join(map(str, kept[j * per_chunk:
                                                                   (j + 1) * per_chunk]))}
            for j, s in enumerate(selectors)]
    r.stages.append(Stage(
        "sparse", "sparse selection (SEMANTICS.md 5)",
        [f"chunks of {size}; the metadata keeps logical lanes {', '.join(map(str, kept))}; "
         "the dense rules run on them in this order"],
        [("chunk", "chunk"), ("lanes", "lanes"), ("selector", "selector"), ("kept", "kept")],
        rows, {"kept_lanes": kept, "selectors": selectors}))


def _decode(r: _Reader, v: dict[str, Any]) -> None:
    words = r.words_by_role
    kept = [int(x) for x in r.labels]
    rows = []
    for j, (x, y) in enumerate(zip(v["a"], v["b"])):
        da, db = r.decoded(x), r.decoded(y)
        rows.append({"lane": r.labels[j], "a_word": f"0x{words['a'][kept[j]]:08X}",
                     "a_class": da["class"], "a_sign": da["sign"], "a_m": da["m"],
                     "a_raw": da["raw"], "a_value": da["value"],
                     "b_word": f"0x{words['b'][kept[j]]:08X}", "b_class": db["class"],
                     "b_sign": db["sign"], "b_m": db["m"], "b_raw": db["raw"],
                     "b_value": db["value"]})
    c = r.decoded(v["c"])
    notes = [f"C = 0x{words['c'][0]:08X}: {c['class']} sign {c['sign']} m={c['m']} "
             f"raw={c['raw']} value {c['value']}",
             "value = sign * m * 2^(raw - F); raw is the exponent the window aligns by"]
    facts: dict[str, Any] = {"c": c}
    if "scale_a" in v:
        scales = {}
        for role in ("scale_a", "scale_b"):
            decoded = [r.decoded(s) for s in v[role]]
            scales[role] = decoded
            notes.append(f"{role}: " + ", ".join(
                f"0x{w:02X}={d['value']}" for w, d in zip(words[role], decoded)))
        facts["scales"] = scales
    r.stages.append(Stage(
        "decode", "decode (SEMANTICS.md 1)", notes,
        [("lane", "lane"), ("A word", "a_word"), ("class", "a_class"), ("s", "a_sign"),
         ("m", "a_m"), ("raw", "a_raw"), ("A value", "a_value"), ("B word", "b_word"),
         ("class", "b_class"), ("s", "b_sign"), ("m", "b_m"), ("raw", "b_raw"),
         ("B value", "b_value")], rows, facts))


def _specials(r: _Reader, v: dict[str, Any]) -> None:
    sp = v["specials"]
    nan, inf, negative = r.t(sp.is_nan), r.t(sp.is_inf), r.t(sp.inf_negative)
    if nan:
        note = "canonical NaN: a NaN operand or scale, Inf x 0, or infinities of both signs"
    elif inf:
        note = f"{'-' if negative else '+'}Inf: an infinite operand product or C"
    else:
        note = "none: the finite result stands"
    r.stages.append(Stage("specials", "special values (SEMANTICS.md 2.2)", [note], facts={
        "nan": nan, "inf": inf, "inf_negative": negative}))


def _products(r: _Reader, v: dict[str, Any]) -> None:
    if "terms" in v:
        terms = [r.term(t) for t in v["terms"]]
        labels = [f"A{x}*B{x}" for x in r.labels] + ["C"]
        rows = [{"term": label, **{k: x for k, x in t.items() if k[0] != "_"}}
                for label, t in zip(labels, terms)]
        r.stages.append(Stage(
            "products", "exact products (SEMANTICS.md 2.3)",
            ["m = mA*mB, raw = rA+rB, e = raw - F: no rounding; C is the last term"],
            [("term", "term"), ("m", "m"), ("raw", "raw"), ("e", "e"), ("value", "value"),
             ("~", "approx")], rows))
        return
    block = v["block"]
    rows = []
    for j, (element, product) in enumerate(zip(v["elements"], v["products"])):
        el, pr = r.term(element), r.term(product)
        pair = r.term(v["scale_pairs"][j // block])
        rows.append({"lane": r.labels[j], "block": j // block, "element": el["value"],
                     "scale": pair["value"], "m": pr["m"], "raw": pr["raw"],
                     "scale_raw": pair["raw"], "value": pr["value"], "approx": pr["approx"]})
    r.stages.append(Stage(
        "products", "exact products with their scales (SEMANTICS.md 4)",
        [f"product = A*B * SA*SB of its block of {block}; raw = rA+rB+rSA+rSB"],
        [("lane", "lane"), ("block", "block"), ("A*B", "element"), ("SA*SB", "scale"),
         ("m", "m"), ("raw", "raw"), ("scale raw", "scale_raw"), ("value", "value"),
         ("~", "approx")], rows))


def _window(r: _Reader, v: dict[str, Any]) -> None:
    present, top, window = r.t(v["present"]), r.s(v["max_raw"]), r.s(v["exponent"])
    clamp = v["clamp"]
    r.window = {"present": present, "max_raw": top if present else None, "R": window,
                "clamp": clamp, "clamp_applied": clamp is not None and window != top}
    if not present:
        note = "no nonzero term: every term aligns to 0 units"
    else:
        note = f"R = max raw over nonzero terms = {top}"
    if clamp is not None:
        note += (f"; clamped up to {clamp} (tf32/bf16 rule)" if window != top
                 else f"; the {clamp} clamp does not bind")
    r.stages.append(Stage("window", "window exponent (SEMANTICS.md 2.4)", [note],
                          facts=dict(r.window)))


def _aligned(r: _Reader, label: str, negative: bool, mag: int, lsb: int, units: int,
             q: int) -> dict[str, Any]:
    exact = dyadic(negative, mag, lsb)
    lost = exact - units * Fraction(2) ** q
    return {"term": label, "exact": hexfloat(exact), "units": units,
            "aligned": hexfloat(units * Fraction(2) ** q), "lost": hexfloat(lost),
            "lost_bits": set_bits_below(mag, q - lsb), "_exact": exact}


ALIGN_COLUMNS = [("term", "term"), ("exact value", "exact"), ("units", "units"),
                 ("aligned value", "aligned"), ("lost", "lost"), ("bits lost", "lost_bits")]


def _align(r: _Reader, v: dict[str, Any]) -> None:
    q, bits = r.s(v["quantum"]), v["window"]
    how = ("rounded to nearest even" if v.get("rounding", "rz") == "rne"
           else "truncated toward zero")
    labels = [f"A{x}*B{x}" for x in r.labels] + ["C"]
    rows, terms = [], []
    for label, term, units in zip(labels, v["terms"], v["units"]):
        negative, mag = r.t(term.negative), r.u(term.mag)
        lsb = r.s(term.raw) - term.frac_offset
        rows.append(_aligned(r, label, negative, mag, lsb, r.s(units), q))
        terms.append(AlignedTerm(label, negative, mag, lsb, r.s(units)))
    r.alignment = Alignment(terms, q, r.window.get("R", q + bits), bits)
    r.stages.append(Stage(
        "align", "alignment to the window (SEMANTICS.md 2.5)",
        [f"quantum q = R - {bits} = {q}: each term becomes signed units of 2^{q}, "
         f"{how}; what is lost never comes back"],
        ALIGN_COLUMNS, [_public(row) for row in rows], {"quantum": q, "window_bits": bits}))


def _public(row: dict[str, Any]) -> dict[str, Any]:
    return {k: x for k, x in row.items() if not k.startswith("_")}


def _block_choice(r: _Reader, v: dict[str, Any]) -> None:
    rules = v["rules"]
    any_product, c_nonzero = r.t(v["any_product"]), r.t(v["c_nonzero"])
    top, scale_top, rc = r.s(v["max_raw"]), r.s(v["scale_max"]), r.s(v["c_raw"])
    qc, qp, dominant = r.s(v["c_quantum"]), r.s(v["product_quantum"]), r.t(v["c_dominant"])
    facts = {"P": top if any_product else None, "S": scale_top if any_product else None,
             "rC": rc if c_nonzero else None, "c_dominant": dominant, "c_quantum": qc,
             "product_quantum": qp}
    notes = [f"P = max product raw = {top if any_product else 'none (all products zero)'}; "
             f"S = max scale raw = {scale_top if any_product else '-'}; "
             f"rC = {rc if c_nonzero else 'none (C = 0)'}"]
    if dominant:
        notes.append(f"C-dominant (C != 0 and rC >= P): q = rC - {rules.c_window} = {qc}")
    else:
        floor = ""
        if rules.scale_window is not None:
            by_scale = qp != top - rules.product_window
            floor = (f", max with S - {rules.scale_window}: the scale-anchored floor "
                     f"{'binds' if by_scale else 'does not bind'}")
        notes.append(f"product path: q = P - {rules.product_window}{floor}: q = {qp}")
    r.window = {"R": rc if dominant else top}
    r.stages.append(Stage("block_choice", "C-dominant or product path (SEMANTICS.md 4)", notes,
                          facts=facts))


def _group(r: _Reader, group: Any) -> tuple[bool, int, int]:
    return r.t(group.negative), r.u(group.mag), r.s(group.exponent)


def _groups(r: _Reader, v: dict[str, Any]) -> None:
    dominant, q = r.t(v["c_dominant"]), r.s(v["quantum"])
    rules = v["rules"]
    size = rules.c_dominant_group if dominant else rules.product_group
    groups = v["c_groups"] if dominant else v["product_groups"]
    units = v["c_units"] if dominant else v["product_units"]
    merges = [] if dominant else r.merges
    rows, terms = [], []
    for i, (group, count) in enumerate(zip(groups, units)):
        negative, mag, lsb = _group(r, group)
        lanes = r.labels[i * size:(i + 1) * size]
        label = f"lanes {lanes[0]}..{lanes[-1]}" if size > 1 else f"A{lanes[0]}*B{lanes[0]}"
        row = _aligned(r, label, negative, mag, lsb, r.s(count), q)
        row["scale_raw"] = r.s(group.scale_raw)
        if merges:
            row["c_merge"] = "yes" if merges[i]["near_c"] else "no"
        rows.append(row)
        terms.append(AlignedTerm(label, negative, mag, lsb, r.s(count)))
    c = v["c_term"]
    c_negative, c_mag = r.t(c.negative), r.u(c.mag)
    c_lsb = r.s(c.raw) - c.frac_offset
    rows.append(_aligned(r, "C", c_negative, c_mag, c_lsb, r.s(units[-1]), q))
    terms.append(AlignedTerm("C", c_negative, c_mag, c_lsb, r.s(units[-1])))
    window = rules.c_window if dominant else rules.product_window
    r.alignment = Alignment(terms, q, r.window.get("R"), window)
    notes = [f"{'C-dominant' if dominant else 'product'} path: aligned groups of {size} "
             f"summed exactly, each sum truncated toward zero to units of 2^{q}"]
    columns = ALIGN_COLUMNS + [("scale raw", "scale_raw")]
    if merges:
        notes.append(f"C-merge: a group whose max raw <= rC truncates first to units of "
                     f"2^max(q, rC - {rules.c_window})")
        columns = columns + [("C-merge", "c_merge")]
    r.stages.append(Stage("groups", "exact group sums and alignment (SEMANTICS.md 4)", notes,
                          columns, [_public(row) for row in rows],
                          {"quantum": q, "group": size, "c_dominant": dominant}))


def _group_merge(r: _Reader, v: dict[str, Any]) -> None:
    r.merges.append({"near_c": r.t(v["near_c"]), "coarse_quantum": r.s(v["coarse_quantum"])})


def _floor(r: _Reader, v: dict[str, Any]) -> None:
    use = r.t(v["use_floor"])
    dropped = [i for i, (u, k) in enumerate(zip(v["units"], v["kept"])) if r.s(u) != r.s(k)]
    note = (f"the result is a nonzero subnormal: recomputed without groups {dropped} "
            f"(scale raw below S, fewer than 2^({v['floor']} - q) units)" if use
            else "not applied (the result is not a nonzero subnormal on the product path)")
    floored = r.stages.pop() if r.stages and r.stages[-1].name == "convert_floor" else None
    r.stages.append(Stage("floor", "subnormal group floor (SEMANTICS.md 4, model)", [note],
                          facts={"applied": use, "dropped_groups": dropped}))
    if use and floored is not None:
        r.stages.append(floored)
        if r.alignment is not None:
            r.alignment.result_lsb = floored.facts["lsb"]
            r.alignment.result_kept = floored.facts["kept"]


def _convert(r: _Reader, v: dict[str, Any]) -> None:
    r.converts += 1
    fmt, rounding = v["format"], v["rounding"]
    units, q = r.s(v["units"]), r.s(v["quantum"])
    total = units * Fraction(2) ** q
    floor_pass = r.converts > 1 and r.desc.family == "block"  # arch: chained steps
    prefix = "floored " if floor_pass else ""
    if not floor_pass:
        r.stages.append(Stage(
            "sum", "exact sum (SEMANTICS.md 2.6)",
            [f"{units} units of 2^{q} = {hexfloat(total)} (~{approx(total)})"],
            facts={"units": units, "quantum": q, "value": hexfloat(total)}))
        if r.alignment is not None:
            r.alignment.total_units = units
    word, kept, lsb = r.u(v["word"]), r.u(v["kept"]), r.s(v["lsb"])
    exponent, overflow = r.s(v["exponent"]), r.t(v["overflow"])
    rounded = Fraction(kept) * Fraction(2) ** lsb
    name = f"{fmt.name.upper()} {rounding.upper()}"
    notes = []
    if units == 0:
        notes.append("the sum is 0: +0")
    else:
        dropped = abs(total) - rounded
        way = ("they are zero: exact" if dropped == 0
               else f"truncated toward zero, losing {hexfloat(dropped)}" if rounding == "rz"
               else f"rounded down by {hexfloat(dropped)}" if dropped > 0
               else f"rounded up by {hexfloat(-dropped)}")
        subnormal = exponent < fmt.emin
        notes.append(f"E = bitlen(|units|) - 1 + q = {exponent}"
                     + (f" < {fmt.emin}: subnormal" if subnormal else "")
                     + f"; the result keeps bits down to 2^{lsb}, dropping "
                     f"{max(0, lsb - q)} lower bits of the sum: {way}")
        if overflow:
            notes.append(f"beyond the largest finite exponent {fmt.bias}: signed infinity")
        elif kept == 0:
            notes.append("nothing survives: +0")
    notes.append(f"{prefix}word {hex_word(word, 'f16' if fmt.name == 'f16' else 'f32')}")
    if r.alignment is not None and not floor_pass:
        r.alignment.result_lsb, r.alignment.result_kept = lsb, kept
    r.stages.append(Stage(
        "convert" if not floor_pass else "convert_floor",
        f"{prefix}conversion to {name} (SEMANTICS.md 2.7)", notes,
        facts={"units": units, "quantum": q, "E": exponent, "lsb": lsb, "kept": kept,
               "overflow": overflow, "word": word}))


def _result(r: _Reader, v: dict[str, Any]) -> None:
    sp, word, finite = v["specials"], r.u(v["word"]), r.u(v["finite"])
    d_type = "f16" if v["format"].name == "f16" else "f32"
    source = ("canonical NaN" if r.t(sp.is_nan) else "infinity" if r.t(sp.is_inf)
              else "the finite result")
    text = f"{hex_word(word, d_type)} ({describe_word(word, d_type)})"
    if r.alignment is not None:
        r.alignment.result_text = text
    r.stages.append(Stage("result", "result word (SEMANTICS.md 2.2)",
                          [f"the special-value rule keeps {source}: {text}"],
                          facts={"word": word, "finite": finite, "source": source}))


def _integer(r: _Reader, v: dict[str, Any]) -> None:
    desc = r.desc
    fa, fb = FORMATS[desc.a_format], FORMATS[desc.b_format]
    assert isinstance(fa, IntFormat) and isinstance(fb, IntFormat)
    words = r.words_by_role
    rows = []
    for j, product in enumerate(v["products"]):
        x = SCALAR.signed_value(decode_int(SCALAR, fa, SCALAR.const(words["a"][j], 32)))
        y = SCALAR.signed_value(decode_int(SCALAR, fb, SCALAR.const(words["b"][j], 32)))
        rows.append({"lane": j, "a": x, "b": y, "product": r.s(product)})
    total, c = r.s(v["total"]), r.s(v["c"])
    mode = "saturates to [-2^31, 2^31-1]" if v["saturate"] else "wraps mod 2^32"
    r.stages.append(Stage(
        "integer", "exact integer sum (SEMANTICS.md 3)",
        [f"C = {c}; exact sum of C and every product = {total}; the result {mode}"],
        [("lane", "lane"), ("A", "a"), ("B", "b"), ("A*B", "product")], rows,
        {"c": c, "total": total, "saturate": v["saturate"]}))


READERS = {"sparse": _sparse, "decode": _decode, "specials": _specials,
           "products": _products, "window": _window, "align": _align,
           "block_choice": _block_choice, "group_merge": _group_merge, "groups": _groups,
           "floor": _floor, "convert": _convert, "result": _result, "integer": _integer}


def explain(desc: Descriptor, words: Sequence[int], model: str = HARDWARE) -> Explanation:
    """Run ``model`` on checked input ``words`` (``input_layout`` order), recording stages.

    Stages the reader does not know are kept by name with their recorded
    values listed, so a new hook never breaks the explanation.
    """
    candidate = get_candidate(model, desc)
    rec = RecordingOps()
    layout = input_layout(desc)
    values = [rec.const(w, spec.width) for spec, w in zip(layout, words, strict=True)]
    word = rec.value(build_model(rec, candidate.name, desc, inputs_from(layout, values)))
    reader = _Reader(rec, desc, words)
    for stage, recorded in rec.records:
        READERS.get(stage, _unknown)(reader, {"_stage": stage, **recorded})
    return Explanation(desc.name, candidate.name, desc, list(words), reader.stages, word,
                       reader.alignment)


def _unknown(r: _Reader, v: dict[str, Any]) -> None:
    facts = {}
    for key, value in v.items():
        if isinstance(value, BV):
            facts[key] = r.s(value)
        elif isinstance(value, Bool):
            facts[key] = r.t(value)
        elif isinstance(value, (int, str, bool)) or value is None:
            facts[key] = value
    name = v["_stage"]
    r.stages.append(Stage(name, name, [", ".join(f"{k}={x}" for k, x in facts.items()
                                                 if k != "_stage")], facts=facts))


# ------------------------------------------------------------------ comparison


def _keyed(stages: Sequence[Stage]) -> dict[str, Stage]:
    """Stages by name, a repeated name numbered (``window``, ``window#2``)."""
    keyed: dict[str, Stage] = {}
    for stage in stages:
        key, n = stage.name, 1
        while key in keyed:
            n += 1
            key = f"{stage.name}#{n}"
        keyed[key] = stage
    return keyed


def _comparable(stage: Stage) -> Any:
    """What two models must agree on at a stage; representation (units vs quantum) aside."""
    facts = stage.facts
    if stage.name == "sum":
        return facts["value"]
    if stage.name.startswith("convert"):
        return facts["word"], hexfloat(Fraction(facts["kept"]) * Fraction(2) ** facts["lsb"])
    if stage.name == "window":
        return facts["R"]
    if stage.name in ("align", "groups"):
        return facts["quantum"], [(row["term"], row["aligned"]) for row in stage.rows]
    if stage.name == "result":
        return facts["word"]
    return facts, stage.rows


@dataclass
class Comparison:
    """Two models on one input: their stages side by side and where they first part."""

    left: Explanation
    right: Explanation
    shared: list[str]
    only_left: list[str]
    only_right: list[str]
    first_difference: str | None
    sentence: str

    def data(self) -> dict[str, Any]:
        return {"models": [self.left.model, self.right.model], "shared_stages": self.shared,
                "only_" + self.left.model: self.only_left,
                "only_" + self.right.model: self.only_right,
                "first_difference": self.first_difference, "sentence": self.sentence,
                self.left.model: self.left.data(), self.right.model: self.right.data()}

    def text(self) -> str:
        left, right = _keyed(self.left.stages), _keyed(self.right.stages)
        desc = self.left.descriptor
        lines = [f"{self.left.datapath}  K={desc.k}  ({desc.d_type.upper()} D)  "
                 f"{self.left.model} vs {self.right.model}"]
        for key, stage in left.items():
            if key not in right:
                lines += _tagged(stage, f"{self.left.model} only")
            elif _comparable(stage) == _comparable(right[key]):
                lines += _tagged(stage, "same in both")
            else:
                lines += _tagged(stage, self.left.model)
                lines += _tagged(right[key], self.right.model)
        for key in self.only_right:
            lines += _tagged(right[key], f"{self.right.model} only")
        for e in (self.left, self.right):
            lines.append(f"D [{e.model}] = {hex_word(e.word, desc.d_type)}  "
                         f"({describe_word(e.word, desc.d_type)})")
        lines.append(self.sentence)
        return "\n".join(lines)


def _tagged(stage: Stage, tag: str) -> list[str]:
    lines = stage.text()
    return [f"{lines[0]}  [{tag}]", *lines[1:]]


def compare(desc: Descriptor, words: Sequence[int], candidate: str,
            model: str = HARDWARE) -> Comparison:
    """``model`` and ``candidate`` on the same input, and the first stage where they differ.

    Stages one model does not record are listed and left out of the comparison.
    """
    left, right = explain(desc, words, model), explain(desc, words, candidate)
    a, b = _keyed(left.stages), _keyed(right.stages)
    shared = [k for k in a if k in b]
    first = next((k for k in shared if _comparable(a[k]) != _comparable(b[k])), None)
    only_left = [k for k in a if k not in b]
    only_right = [k for k in b if k not in a]
    sentence = _sentence(left, right, first, only_left)
    return Comparison(left, right, shared, only_left, only_right, first, sentence)


def observed_word(desc: Descriptor, words: Sequence[int], observed: int,
                  model: str = HARDWARE) -> str:
    """Which candidate model of SEMANTICS.md section 7 gives ``observed`` on ``words``
    where ``model`` does not, and the first stage where it departs from ``model``; '' where
    no other candidate applies to ``desc``."""
    from tcspec.spec.candidates import candidate_names

    layout = input_layout(desc)
    consts = [SCALAR.const(w, spec.width) for spec, w in zip(layout, words, strict=True)]
    others = [name for name in candidate_names(desc) if name != model]
    if not others:
        return ""
    for name in others:
        if int(build_model(SCALAR, name, desc, inputs_from(layout, consts)).node) == observed:
            return (f"the observed word is candidate model {name}'s; "
                    + compare(desc, words, name, model).sentence)
    return "no candidate model of SEMANTICS.md section 7 gives the observed word"


def _short(value: str, digits: int = 12) -> str:
    """A long hex-float cut to ``digits`` fraction digits (marked ``...``) for a sentence."""
    mantissa, _, exponent = value.partition("p")
    whole, _, fraction = mantissa.partition(".")
    if not exponent or len(fraction) <= digits:
        return value
    return f"{whole}.{fraction[:digits]}...p{exponent}"


def _sentence(left: Explanation, right: Explanation, first: str | None,
              only_left: list[str]) -> str:
    """One sentence: where ``right`` first departs from ``left``, with the values."""
    a, b = _keyed(left.stages), _keyed(right.stages)
    lm, rm = left.model, right.model
    missing = (f" ({rm} records no {', '.join(only_left)} stage; compared the stages both "
               "record)") if only_left else ""
    d_type = left.descriptor.d_type
    if first is None and left.word != right.word:
        return (f"{lm} gives {hex_word(left.word, d_type)} and {rm} "
                f"{hex_word(right.word, d_type)}, but no stage both record tells them "
                f"apart{missing}.")
    if first is None:
        return (f"{lm} and {rm} agree at every stage both record; both give "
                f"D = {hex_word(left.word, d_type)}{missing}.")
    x, y = a[first], b[first]
    name = x.name
    if name == "window":
        windows = sum(stage.name == "window" for stage in right.stages)
        return (f"They first differ at the window exponent: {lm} has R = {x.facts['R']}"
                + (f" (clamped up from {x.facts['max_raw']})" if x.facts.get("clamp_applied")
                   else "")
                + f", {rm} has R = {y.facts['R']}"
                + (f" (the first of its {windows} windows)" if windows > 1 else "")
                + f"{missing}.")
    if name == "groups" and x.facts["group"] != y.facts["group"]:
        sums = a["sum"].facts["value"], b["sum"].facts["value"]
        outcome = (f"the exact sums still agree ({_short(sums[0])})" if sums[0] == sums[1]
                   else f"exact sums {_short(sums[0])} ({lm}) vs {_short(sums[1])} ({rm})")
        return (f"They first differ at the group sums: {lm} sums aligned groups of "
                f"{x.facts['group']} products exactly before truncating each to units of "
                f"2^{x.facts['quantum']}, {rm} groups of {y.facts['group']}; {outcome}"
                f"{missing}.")
    if name in ("align", "groups"):
        qa, qb = x.facts["quantum"], y.facts["quantum"]
        diff = next(((p, q) for p, q in zip(x.rows, y.rows) if p["aligned"] != q["aligned"]),
                    None)
        where = (f"; {diff[0]['term']} becomes {diff[0]['aligned']} under {lm} but "
                 f"{diff[1]['aligned']} under {rm}") if diff else ""
        if qa != qb:
            return (f"They first differ at alignment: {lm} aligns to units of 2^{qa}, "
                    f"{rm} to units of 2^{qb}{where}{missing}.")
        return f"They first differ at alignment (both in units of 2^{qa}){where}{missing}."
    window = left.alignment
    if name == "sum" and "align" in a and "align" not in b and window is not None:
        q, bits = window.quantum, window.window_bits
        lossy = sorted((t for t in window.terms if t.lost_at(q)),
                       key=lambda t: -abs(t.lost_at(q)))
        if lossy:
            more = f" (and bits of {len(lossy) - 1} more terms)" if len(lossy) > 1 else ""
            kept = hexfloat(lossy[0].lost_at(q))
            return (f"The {lm} window is {bits} bits below 2^{window.window_top} (units of "
                    f"2^{q}); {rm} keeps {kept} of {lossy[0].label}{more}, "
                    f"which the window truncates: exact sums {_short(y.facts['value'])} "
                    f"({rm}) vs {_short(x.facts['value'])} ({lm}).")
    if name == "sum":
        return (f"They first differ at the exact sum: {_short(x.facts['value'])} ({lm}) vs "
                f"{_short(y.facts['value'])} ({rm}){missing}.")
    if name.startswith("convert"):
        return (f"They first differ at the conversion: {lm} gives "
                f"{hex_word(x.facts['word'], d_type)}, {rm} "
                f"{hex_word(y.facts['word'], d_type)}{missing}.")
    return f"They first differ at stage {x.title}{missing}."


def vector_line(spec: str) -> tuple[Descriptor, list[int]]:
    """The descriptor and input words of line ``N`` of a vector file, from ``FILE:N``."""
    from tcspec.ref.vectorfiles import BadLine, read_vectors

    path, _, number = spec.rpartition(":")
    if not path or not number.strip().isdigit() or int(number) < 1:
        raise ValueError(f"--line {spec!r}: expected FILE:N with N a line number from 1")
    line = int(number)
    try:
        for record in read_vectors(path):
            if record.line == line:
                if isinstance(record, BadLine):
                    raise ValueError(f"{path} line {line}: {record.problem}")
                return record.descriptor, record.words
            if record.line > line:
                break
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None
    raise ValueError(f"{path} has no vector on line {line}")
