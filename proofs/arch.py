"""Proofs per architecture (issue 20 part 4): the families that apply to the architecture
datapaths, in a matrix of their own beside the Blackwell one (``tcspec prove --arch A``).

Properties, every constant from :mod:`proofs.constants` (ARCHITECTURES.md):

- ``arch-permutation``: reordering lanes *inside one window* leaves D unchanged (the swap of
  its first two lanes and its rotation, for every window: a split-K step, a CDNA3 group, the
  even and the odd lanes of a CDNA3 fp8 group); AC normal form, else monolithic;
- ``arch-permutation-across``: a swap of two lanes in different windows (split-K steps,
  CDNA3 groups or parities, FMA-chain steps) changes D: a witness, replayed. Where it
  applies, permutation of the whole K is false;
- ``arch-sign-symmetry``: flipping every A (or B) sign and C's negates D. NVIDIA: a zero D
  stays +0 and the NaN word is canonical (ARCHITECTURES.md 1.2, 1.4); AMD and FMA chains
  keep IEEE signed zeros, so there a zero D maps to a zero of either sign and NaN to NaN;
- ``arch-error-bound`` and ``chaining-bound`` / ``chaining-witness``: :mod:`proofs.chaining`.

Rows run at a model K where the instruction's K is out of a solver's reach (the same
parameters on fewer lanes per window: :func:`proofs.chaining.model`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tcspec.proofs import chaining
from tcspec.proofs.constants import ARCH_CANONICAL_NAN, arch_steps, cdna3_group
from tcspec.proofs.core import (
    MONOLITHIC,
    UNKNOWN,
    InternalError,
    Property,
    Query,
    Row,
    Settings,
    Variables,
    check_queries,
    dot_inputs,
    layout_variables,
    run_dot,
    timed,
)
from tcspec.proofs.permutation import invariance_row, lane_order, swap
from tcspec.proofs.runner import RowSpec, write_report
from tcspec.proofs.sign import negated, sign_bit
from tcspec.spec.bitvec import BV, Bool, Ops
from tcspec.spec.catalog import DotInputs, lookup

REPORT_DIR = Path(__file__).resolve().parent / "arch"

REPRESENTATIVES: dict[str, tuple[str, ...]] = {
    "sm_70": ("sm_70-mma-m8n8k4-f16-f16-c32-d32", "sm_70-mma-m8n8k4-f16-f16-c16-d16"),
    "sm_75": ("sm_75-mma-m16n8k8-f16-f16-c32-d32",),
    "sm_80": ("sm_80-mma-m16n8k8-bf16-bf16-c32-d32", "sm_80-mma-m16n8k16-f16-f16-c32-d32",
              "sm_80-mma-m8n8k4-f64-f64-c64-d64"),
    "sm_89": ("sm_89-mma-m16n8k16-e4m3-e4m3-c32-d32", "sm_89-mma-m16n8k32-e4m3-e4m3-c32-d32",
              "sm_89-mma-m16n8k32-e5m2-e5m2-c16-d16"),
    "sm_90": ("sm_90-mma-m16n8k16-f16-f16-c32-d32", "sm_90-wgmma-m64n8k32-e4m3-e4m3-c32-d32",
              "sm_90-mma-m16n8k4-f64-f64-c64-d64"),
    "sm_100": ("sm_100-mma-m16n8k8-tf32-tf32-c32-d32",),
    "sm_120": ("sm_120-mma-m16n8k32-e4m3-e4m3-c32-d32",
               "sm_120-mma_block_scale-m16n8k32-block32-e4m3-e4m3-c32-d32-ue8m0"),
    "cdna1": ("cdna1-mfma-16x16x4-f32-f32-c32-d32",),
    "cdna2": ("cdna2-mfma-16x16x4-f32-f32-c32-d32",),
    "cdna3": ("cdna3-mfma-32x32x8-f16-f16-c32-d32", "cdna3-mfma-16x16x8-xf32-xf32-c32-d32",
              "cdna3-mfma-32x32x16-e4m3fnuz-e4m3fnuz-c32-d32",
              "cdna3-mfma-16x16x4-f32-f32-c32-d32"),
}
"""One datapath per algorithm and format family of each architecture (the selection that
keeps a matrix within a few minutes on two shared cores; docs/proofs-per-arch.md)."""


def windows(desc: Any, k: int) -> list[list[int]]:
    """The lanes of each window by the table: split-K steps, CDNA3 groups (fp8: the even
    and the odd lanes of each group), one lane per FMA step, else all K lanes."""
    if desc.algorithm == "fma-chain":
        return [[i] for i in range(k)]
    if desc.algorithm == "cdna3-rd":
        size = cdna3_group(desc, k)
        groups = [list(range(s, s + size)) for s in range(0, k, size)]
        if desc.a_format.endswith("fnuz"):
            return [g[p::2] for g in groups for p in (0, 1)]
        return groups
    if desc.algorithm == "fused-dot":
        per = k // arch_steps(desc)
        return [list(range(s, s + per)) for s in range(0, k, per)]
    return [list(range(k))]


def cycle(lanes: list[int], k: int) -> list[int]:
    """The permutation moving each of ``lanes`` to the next (the last to the first)."""
    order = list(range(k))
    for here, there in zip(lanes, lanes[1:] + lanes[:1]):
        order[here] = there
    return order


def in_window_generators(desc: Any, k: int) -> dict[str, Callable[[DotInputs], DotInputs]]:
    out: dict[str, Callable[[DotInputs], DotInputs]] = {}
    for lanes in windows(desc, k):
        if len(lanes) < 2:
            continue
        first = swap(lanes[0], lanes[1], k)
        turned = cycle(lanes, k)
        out[f"swap-{lanes[0]}-{lanes[1]}"] = lambda x, o=first: lane_order(x, o)
        out[f"rotate-{'-'.join(map(str, lanes[:2]))}..{lanes[-1]}"] = \
            lambda x, o=turned: lane_order(x, o)
    return out


def check_permutation(desc: Any, k: int, settings: Settings) -> Row:
    row = invariance_row("arch-permutation", desc, k, in_window_generators(desc, k), settings)
    row.detail = f"windows {windows(desc, k)}; " + row.detail
    return row


def across_pair(desc: Any, k: int) -> tuple[int, int] | None:
    found = windows(desc, k)
    if len(found) < 2:
        return None
    return found[0][0], found[1][0]


def across_query(desc: Any, k: int) -> Query:
    """Witness: swapping the first lanes of two windows changes D (finite D both ways)."""
    pair = across_pair(desc, k)
    assert pair is not None
    order = swap(*pair, k)

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        inputs = dot_inputs(desc, k, values)
        d = run_dot(ops, desc, inputs)
        d2 = run_dot(ops, desc, lane_order(inputs, order))
        return ops.ne(d, d2), {"d": d, "d_swapped": d2}

    return Query(f"swap-{pair[0]}-{pair[1]}-changes-d", "exists", layout_variables(desc, k),
                 body)


def check_across(desc: Any, k: int, settings: Settings) -> Row:
    pair = across_pair(desc, k)
    return check_queries("arch-permutation-across", desc, k,
                         [across_query(chaining.model(desc, k), k)],
                         settings, MONOLITHIC, f"lanes {pair} lie in different windows "
                         f"{windows(desc, k)}: permutation of all K is not a property here")


def _is_nan(ops: Ops, d: BV) -> Bool:
    exp_bits = 8 if d.width == 32 else (5 if d.width == 16 else 11)
    frac = d.width - 1 - exp_bits
    exponent = ops.extract(d, d.width - 2, frac)
    return ops.and_(ops.eq(exponent, (1 << exp_bits) - 1),
                    ops.ne(ops.extract(d, frac - 1, 0), 0))


def negates(ops: Ops, desc: Any, d: BV, d2: BV) -> Bool:
    """Whether ``d2`` is the negation of ``d`` by the architecture's rules (module doc)."""
    top = d.width - 1
    magnitude = ops.extract(d, top - 1, 0)
    if desc.nan_canonical:
        return ops.eq(d2, negated(ops, d, desc.d_type, ARCH_CANONICAL_NAN[desc.d_type]))
    flipped = ops.bvxor(d, 1 << top)
    zero = ops.eq(magnitude, 0)
    return ops.ite(_is_nan(ops, d), _is_nan(ops, d2),
                   ops.ite(zero, ops.eq(ops.extract(d2, top - 1, 0), 0), ops.eq(d2, flipped)))


def arch_sign_query(desc: Any, k: int, operand: str) -> Query:
    lane_bit, c_bit = sign_bit(getattr(desc, f"{operand}_format")), sign_bit(desc.d_type)

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        inputs = dot_inputs(desc, k, values)
        lanes = [ops.bvxor(w, 1 << lane_bit) for w in getattr(inputs, operand)]
        flipped = dataclasses.replace(inputs, c=ops.bvxor(inputs.c, 1 << c_bit),
                                      **{operand: lanes})
        d, d2 = run_dot(ops, desc, inputs), run_dot(ops, desc, flipped)
        return ops.not_(negates(ops, desc, d, d2)), {"d": d, "d_flipped": d2}

    return Query(f"flip-{operand}-and-c", "forall", layout_variables(desc, k), body,
                 cut_products=desc.algorithm in ("fused-dot", "fma-chain"))


def check_sign(desc: Any, k: int, settings: Settings) -> Row:
    """NVIDIA fused dots: :func:`proofs.sign.unit_chain` (cut at the units of the first
    window's ``align`` stage, products cut), method ``chain``; others two monolithic
    queries, half the row's time each."""
    from tcspec.proofs.core import CHAIN, uncovered_row
    from tcspec.proofs.sign import unit_chain, window_cover

    model = chaining.model(desc, k)
    if desc.algorithm == "fused-dot":
        detail = ("two runs of build_dot (signs flipped), cut at the units its first align "
                  "stage reports (units-negate, then word-negates with them free) and at the "
                  "multipliers; zero stays +0, NaN canonical (proofs.constants); sign bits "
                  "from proofs.reference")
        lanes = k // arch_steps(desc)
        mismatches = [m for operand in "ab"
                      for m in window_cover(model, k, operand, lanes=lanes)]
        if mismatches:
            return uncovered_row("arch-sign-symmetry", desc, k, mismatches, CHAIN, detail)
        return check_queries("arch-sign-symmetry", desc, k,
                             [*unit_chain(model, k, "a", cut_sum=False),
                              *unit_chain(model, k, "b", cut_sum=False)],
                             settings, CHAIN, detail)
    share = dataclasses.replace(settings, timeout=settings.timeout / 2)
    return check_queries("arch-sign-symmetry", desc, k,
                         [arch_sign_query(model, k, "a"), arch_sign_query(model, k, "b")],
                         share, MONOLITHIC, "two monolithic queries (flip A and C; flip B "
                         "and C) over two runs of build_dot (FMA chains: products cut); IEEE "
                         "signed zeros: a zero D maps to a zero, NaN to NaN")


def sign_k(desc: Any) -> int:
    """Model K of the sign rows: NVIDIA 2 lanes per step; CDNA3 its K (groups are the
    rule); FMA chains one step."""
    if desc.algorithm == "cdna3-rd":
        return desc.k
    if desc.algorithm == "fused-dot":
        return 2 * arch_steps(desc)
    if desc.algorithm == "fma-chain":
        return 1
    return desc.k


def across_k(desc: Any) -> int:
    """Model K of the across-window witnesses: two lanes per window (FMA: two steps)."""
    if desc.algorithm == "fma-chain":
        return min(desc.k, 2)
    return sign_k(desc)


def error_k(desc: Any) -> int:
    """Model K of the error-bound rows: one lane (docs/proofs-per-arch.md: the monolithic
    query at 2 fp8 lanes takes 70 s on a quiet machine, at 2 f16 lanes it does not finish in
    a minute); CDNA3 its K (groups are the rule)."""
    return desc.k if desc.algorithm == "cdna3-rd" else 1


def chain_k(desc: Any) -> int:
    return desc.k if desc.algorithm == "cdna3-rd" else 2


KNOWN = ("fused-dot", "fused-dot-block", "cdna3-rd", "fma-chain")
"""The algorithm families this matrix states properties of (the CDNA1/CDNA2 pairwise trees,
unvalidated, have none yet)."""


def _is_arch(desc: Any) -> bool:
    return getattr(desc, "family", "") == "arch"


def _error_applies(desc: Any) -> bool:
    return chaining.applies_bound(desc) and chaining.chained_steps(desc) == 1


PROPERTIES = [
    Property("arch-permutation", "reordering lanes inside one window leaves D unchanged",
             ("spec.fused_dot", "spec.mmasim", "spec.cdna3", "spec.accumulate"), (),
             lambda d: _is_arch(d) and d.algorithm in ("fused-dot", "fused-dot-block",
                                                       "cdna3-rd"), check_permutation),
    Property("arch-permutation-across", "a swap of lanes in different windows changes D "
             "(witness)", ("spec.fused_dot", "spec.cdna3", "spec.fma_chain"), (),
             lambda d: _is_arch(d) and d.algorithm in KNOWN
             and across_pair(d, d.k) is not None, check_across,
             default_k=across_k),
    Property("arch-sign-symmetry", "flipping every A (or B) sign and C's negates D",
             ("spec.fused_dot", "spec.mmasim", "spec.cdna3", "spec.fma_chain",
              "spec.convert"), (), lambda d: _is_arch(d) and d.algorithm in (
                  "fused-dot", "cdna3-rd", "fma-chain"),
             check_sign, default_k=sign_k),
    Property("arch-error-bound", "|D - E| < (K+1) 2^(R-F) + ulp(D) (NVIDIA, F from the table); "
             "CDNA3 its group bound", ("spec.fused_dot", "spec.mmasim", "spec.cdna3"), (),
             _error_applies, chaining.check_error, default_k=error_k),
    Property("chaining-bound", "|D_chained - D_single| < B (split-K, CDNA3 groups)",
             ("spec.fused_dot", "spec.cdna3"), (), chaining.applies_chaining,
             chaining.check_chaining, default_k=chain_k),
    Property("chaining-witness", "inputs with |D_chained - D_single| >= B / 2^i, the first i",
             ("spec.fused_dot", "spec.cdna3"), (), chaining.applies_chaining,
             chaining.check_witness, default_k=chain_k),
]


def arch_properties() -> dict[str, Property]:
    return {p.name: p for p in PROPERTIES}


def select_arch_rows(arch: str, datapath: str | None = None,
                     property_name: str | None = None) -> list[RowSpec]:
    """The rows of ``arch``'s matrix: every property that applies to each representative
    (or to ``datapath``); ``ValueError`` names bad input."""
    if arch not in REPRESENTATIVES:
        raise ValueError(f"unknown architecture {arch!r} (known: {', '.join(REPRESENTATIVES)})")
    props = PROPERTIES
    if property_name is not None:
        props = [p for p in PROPERTIES if p.name == property_name]
        if not props:
            raise ValueError(f"unknown architecture property {property_name!r}; known: "
                             + ", ".join(p.name for p in PROPERTIES))
    names = REPRESENTATIVES[arch] if datapath is None else (datapath,)
    rows = []
    for name in names:
        desc = lookup(name).descriptor
        if getattr(desc, "arch", None) != arch:
            raise ValueError(f"{name} is not an {arch} datapath")
        rows += [RowSpec(p, desc, p.k_for(desc)) for p in props if p.applies(desc)]
    return sorted(rows, key=lambda r: ORDER.index(r.prop.name))


ORDER = ("chaining-bound", "arch-permutation", "arch-permutation-across", "arch-error-bound",
         "chaining-witness", "arch-sign-symmetry")
"""The order rows run in, so a matrix's budget reaches the rows of each family first
(the new family first, the slowest rows last)."""


INTERNAL = "internal error (not a verdict)"


def unrun(spec: RowSpec, why: str) -> Row:
    return Row(spec.prop.name, spec.desc.name, spec.k, UNKNOWN, "", 0.0, "", spec.desc.k, why)


def run_arch(rows: list[RowSpec], settings: Settings, budget: float,
             progress: Callable[[Row, int, int], None] | None = None) -> list[Row]:
    """Decide the rows in order; a row not started within ``budget`` seconds is ``unknown``
    ("not run"), so the matrix keeps its own time budget; a row whose check fails is
    ``unknown`` with :data:`INTERNAL` in its detail (the caller exits 3)."""
    started = time.monotonic()
    out: list[Row] = []
    for i, spec in enumerate(rows):
        if time.monotonic() - started > budget:
            row = unrun(spec, f"not run: the {budget:g} s budget of this matrix was spent")
        else:
            try:
                row = timed(lambda s=spec: s.prop.check(s.desc, s.k, settings),  # type: ignore[misc]
                            f"{spec.prop.name} {spec.desc.name} K={spec.k}")
            except InternalError as exc:
                row = unrun(spec, f"{INTERNAL}: {exc}")
            row.property, row.datapath, row.k, row.hardware_k = (
                spec.prop.name, spec.desc.name, spec.k, spec.desc.k)
        out.append(row)
        if progress:
            progress(row, i + 1, len(rows))
    return out


def write_arch_report(arch: str, rows: list[Row], settings: Settings, seconds: float,
                      budget: float, subset: str = "") -> tuple[Path, Path]:
    """``proofs/arch/REPORT-<arch>[-<subset>].json`` and ``.md``, each written to a temporary
    file and renamed (a crash leaves the previous report whole); a subset (one property or
    datapath) has its own files and never replaces the whole matrix's."""
    REPORT_DIR.mkdir(exist_ok=True)
    stem = f"REPORT-{arch}" + (f"-{subset}" if subset else "")
    json_path, md_path = REPORT_DIR / f"{stem}.json", REPORT_DIR / f"{stem}.md"
    tmp_json, tmp_md = json_path.with_suffix(".json.tmp"), md_path.with_suffix(".md.tmp")
    write_report(rows, settings, seconds, tmp_json, tmp_md)
    data = json.loads(tmp_json.read_text(encoding="utf-8"))
    data["run"].update({"arch": arch, "budget_seconds": budget,
                        "datapaths": list(dict.fromkeys(r.datapath for r in rows))})
    tmp_json.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    text = tmp_md.read_text(encoding="utf-8").replace(
        "# Proof report\n", f"# Proof report: {arch}{' (' + subset + ')' if subset else ''}"
        f" (`tcspec prove --arch {arch} --report`)\n\n"
        f"Representative datapaths (docs/proofs-per-arch.md): "
        + ", ".join(f"`{n}`" for n in data["run"]["datapaths"])
        + f". Budget {budget:g} s. Properties: proofs/arch.py, proofs/chaining.py; "
        "constants: proofs/constants.py.\n", 1)
    tmp_md.write_text(text, encoding="utf-8")
    os.replace(tmp_json, json_path)
    os.replace(tmp_md, md_path)
    return json_path, md_path


def progress_line(row: Row, done: int, total: int, started: float) -> None:
    from tcspec.proofs.runner import describe_row

    print(f"[{done}/{total}] {describe_row(row)} ({time.monotonic() - started:.0f}s)",
          file=sys.stderr, flush=True)
