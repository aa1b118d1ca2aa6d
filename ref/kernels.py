"""Compiled batch kernels: the traced DAG printed as C over blocks of rows.

The tracer (:mod:`smt.trace`) records a datapath once per descriptor with
its static parts folded away; this module prints the live DAG as one C
function of uint32 input columns. Rows are processed in blocks of 16 to 256
rows (:func:`block_rows`: the longest whose buffers stay in L1); the body is
cut into *segments* of consecutive nodes, each a branch-free loop over the
block (``ite`` is a select, booleans are all-ones masks, shifts are guarded:
an amount at or above the width gives 0 or the sign fill, never C's
undefined behaviour). Each value lives in the narrowest lane that holds the
bits its consumers read (:mod:`ref.lanes`: 32 bits for booleans and values
of which at most 32 bits are read, else 64), so most instructions work on
twice the rows of a 64-bit lane, and a mask is printed only where a consumer
reads the bits above a value's width. Values used by a later segment live in
per-block buffers of their lane type, reused once dead; the rest stay in
registers. Every loop has a fixed trip count and no branches, so the
compiler vectorises it. The system C compiler builds the shared object once
per (DAG, generator); later runs load it from an on-disk cache.

Where no compiler is found, callers fall back to NumPy (said once on stderr).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import hashlib
import itertools
import numbers
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tcspec.ref import cgen
from tcspec.ref.lanes import COMPARISONS, LaneFacts, analyse, strip_zext
from tcspec.smt.trace import Node, walk
from tcspec.spec.algorithms import c_exempt
from tcspec.spec.catalog import input_layout
from tcspec.spec.descriptor import Descriptor

GENERATOR_VERSION = "tcspec-kernels-7"
BLOCK = 16
"""The smallest block (one 512-bit vector of 32-bit lanes); see :func:`block_rows`."""
BLOCK_MAX = 256
BUFFER_BUDGET = 16 * 1024
"""Bytes of block buffers a block may use (about a third of a 48 KiB L1 data cache)."""
SEGMENT = 100
"""Nodes per segment loop (values crossing segments go through block buffers)."""
REMAT = 1
"""Nodes whose cone has at most this many operations are recomputed where used."""
PART = 8
"""Segment loops per C function: bounds the compiler's per-function work (alias walks)."""
CFLAGS = ("-O3", "-march=native", "-mprefer-vector-width=512", "-fno-trapping-math",
          "-fno-math-errno", "-fPIC", "-shared", "-std=c11")
COMPILE_MIN_ROWS = 200_000
"""Rows of one datapath a process runs before a kernel not yet in the cache is compiled
(about a second of NumPy; below it NumPy runs)."""
CACHED_MIN_ROWS = 2_048
"""Rows of one datapath a process runs before an already-built kernel is used."""

_U64 = "uint64_t"


_LANE_TYPE = {32: "uint32_t", 64: _U64}
_SIGNED_TYPE = {32: "int32_t", 64: "int64_t"}


def _lane_for_width(width: int) -> int:
    return 32 if width <= 32 else 64


def _literal(value: int, bits: int) -> str:
    if not 0 <= value < 1 << bits:
        raise ValueError(f"constant 0x{value:X} does not fit a {bits}-bit lane")
    return f"0x{value:X}u" if bits == 32 else f"UINT64_C(0x{value:X})"


class _Printer:
    """C expressions of DAG nodes, each in the lane :mod:`ref.lanes` chose, given how to refer
    to a computed value (a variable of the node's own lane type).

    Booleans are all-ones/zero masks, so ``ite`` is a select by ``&``/``|``;
    comparisons and shifts need no branch, and an amount at or above the
    width gives 0 or the sign fill (never C's undefined behaviour). A value
    may carry bits above its width where no consumer reads them; it is
    masked where :class:`~ref.lanes.LaneFacts` says a consumer does.
    """

    def __init__(self, ref: Callable[[Node], str], facts: LaneFacts) -> None:
        self.ref = ref
        self.facts = facts

    def lane(self, node: Node) -> int:
        return self.facts.lane[strip_zext(node).id]

    def value(self, node: Node, bits: int) -> str:
        """``node``'s value as a ``bits``-bit lane expression (zero-extended or truncated;
        booleans sign-extended, so a mask stays all ones)."""
        node = strip_zext(node)
        if node.op == "bool_const":
            return _literal((1 << bits) - 1 if node.value else 0, bits)
        if node.op == "const":
            return _literal(node.value & ((1 << bits) - 1), bits)
        name, have = self.ref(node), self.facts.lane[node.id]
        if have == bits:
            return name
        if bits == 64:
            return (f"((uint64_t)(int64_t)(int32_t){name})" if node.width is None
                    else f"((uint64_t){name})")
        return f"((uint32_t){name})"

    def expr(self, node: Node) -> str:
        text = self._expr(node)
        if node.id in self.facts.masked:
            bits = self.facts.lane[node.id]
            text = f"({text} & {_literal((1 << node.width) - 1, bits)})"
        return text

    def _convert(self, text: str, source: int, bits: int) -> str:
        return text if source == bits else f"(({_LANE_TYPE[bits]}){text})"

    def _expr(self, node: Node) -> str:
        op, w, bits = node.op, node.width, self.facts.lane[node.id]
        kind = _LANE_TYPE[bits]
        args = node.args
        if op in COMPARISONS:
            source = max(*(self.lane(a) for a in args), _lane_for_width(args[0].width))
            x, y = (self.value(a, source) for a in args)
            if op in ("slt", "sle"):
                sign = _literal(1 << (args[0].width - 1), source)
                x, y = f"({x} ^ {sign})", f"({y} ^ {sign})"
            cmp = dict(eq="==", ult="<", ule="<=", slt="<", sle="<=")[op]
            return f"(0u - (uint32_t)({x} {cmp} {y}))"
        if op == "extract":
            source = self.lane(args[0])
            lo = node.params[1]
            if lo >= source:
                return _literal(0, bits)
            x = self.value(args[0], source)
            return self._convert(f"({x} >> {lo})" if lo else x, source, bits)
        if op in ("lshr", "ashr"):
            return self._right_shift(node, bits)
        if self.facts.wide_product(node):
            x, y = (self.value(a, 32) for a in args)
            return f"((uint64_t){x} * {y})"
        if op == "shl":
            amount_lane = self.lane(args[1])
            amount = self.value(args[1], amount_lane)
            x = self.value(args[0], bits)
            step = self._convert(f"({amount} & {bits - 1})", amount_lane, bits)
            return f"(({x} << {step}) & (({kind})0 - ({kind})({amount} < {min(w, bits)})))"
        if op == "concat":
            low = args[1].width
            if low >= bits:
                return self.value(args[1], bits)
            return f"(({self.value(args[0], bits)} << {low}) | {self.value(args[1], bits)})"
        if op == "sext" and self.facts.sext_mode[node.id] == "shift":
            gap = bits - args[0].width
            x = self.value(args[0], bits)
            if not gap:
                return x
            return f"(({kind})(({_SIGNED_TYPE[bits]})({x} << {gap}) >> {gap}))"
        a = [self.value(arg, bits) for arg in args]
        if op == "sext":
            return a[0]
        if op in _BITWISE:
            return f"({a[0]} {_BITWISE[op]} {a[1]})"
        if op in ("bnot", "not"):
            return f"(~{a[0]})"
        if op == "ite":
            c, t, e = a
            return f"(({t} & {c}) | ({e} & ~{c}))"
        if op == "neg":
            return f"(({kind})0 - {a[0]})"
        if op in ("add", "sub", "mul"):
            return f"({a[0]} {dict(add='+', sub='-', mul='*')[op]} {a[1]})"
        raise ValueError(f"no C kernel lowering for primitive {op!r}")

    def _right_shift(self, node: Node, bits: int) -> str:
        """``lshr``/``ashr`` in the shifted value's own lane, then converted to ``bits``."""
        x_node, amount_node = node.args
        w = node.width
        source = max(self.lane(x_node), _lane_for_width(w))
        kind, signed = _LANE_TYPE[source], _SIGNED_TYPE[source]
        x = self.value(x_node, source)
        amount = self.value(amount_node, source)
        if node.op == "lshr":
            text = (f"(({x} >> ({amount} & {source - 1})) & "
                    f"(({kind})0 - ({kind})({amount} < {w})))")
        else:
            gap = source - w
            extended = f"(({signed})({x} << {gap}) >> {gap})" if gap else f"(({signed}){x})"
            limit = source - 1
            text = f"(({kind})({extended} >> ({amount} < {limit} ? {amount} : {limit})))"
        return self._convert(text, source, bits)


_BITWISE = {"band": "&", "bor": "|", "bxor": "^", "and": "&", "or": "|", "xor": "^"}


def _cheap_nodes(order: Sequence[Node], limit: int) -> set[int]:
    """Nodes whose whole cone down to inputs is at most ``limit`` operations: recomputed
    where used instead of being kept in a block buffer."""
    cones: dict[int, frozenset[int]] = {}
    for node in order:
        cone: set[int] = {node.id}
        for arg in (strip_zext(a) for a in node.args):
            if arg.op in ("const", "bool_const", "var"):
                continue
            if arg.id not in cones:
                break
            cone |= cones[arg.id]
        else:
            if len(cone) <= limit:
                cones[node.id] = frozenset(cone)
    return set(cones)


def _operands(node: Node, cheap: set[int]) -> set[int]:
    """The buffered values and inputs ``node``'s expression reads, seen through cheap nodes."""
    out: set[int] = set()
    stack = list(node.args)
    while stack:
        arg = strip_zext(stack.pop())
        if arg.op in ("const", "bool_const"):
            continue
        if arg.id in cheap:
            stack.extend(arg.args)
        else:
            out.add(arg.id)
    return out


def _buffers(segments: list[list[Node]], final: Node, cheap: set[int], facts: LaneFacts
             ) -> dict[int, tuple[str, int]]:
    """A block buffer ``(lane type, slot)`` for each value used outside its segment, of the
    node's lane type, reused once dead."""
    born = {node.id: s for s, seg in enumerate(segments) for node in seg}
    kinds = {node.id: _LANE_TYPE[facts.lane[node.id]] for seg in segments for node in seg}
    last_use: dict[int, int] = {}
    tail = Node(-1, "final", (final,), (), None)
    for s, seg in enumerate(segments):
        for node in seg + ([tail] if s == len(segments) - 1 else []):
            for nid in _operands(node, cheap):
                if nid in born and born[nid] != s:
                    last_use[nid] = s
    buffers: dict[int, tuple[str, int]] = {}
    free: dict[str, list[int]] = {kind: [] for kind in _LANE_TYPE.values()}
    count = dict.fromkeys(_LANE_TYPE.values(), 0)
    dying: dict[int, list[int]] = {}
    for nid, s in last_use.items():
        dying.setdefault(s, []).append(nid)
    for s, seg in enumerate(segments):
        for node in seg:
            if node.id in last_use:
                kind = kinds[node.id]
                if not free[kind]:
                    free[kind].append(count[kind])
                    count[kind] += 1
                buffers[node.id] = (kind, free[kind].pop())
        for nid in dying.get(s, []):
            kind, slot = buffers[nid]
            free[kind].append(slot)
    return buffers


def block_rows(buffer_bytes_per_row: int) -> int:
    """Rows per block: the largest power of two from :data:`BLOCK` to :data:`BLOCK_MAX` whose
    buffers fit :data:`BUFFER_BUDGET`. Small DAGs get long blocks, which spread the per-block
    set-up (a pointer per input column) over more rows; big ones keep their buffers in L1."""
    block = BLOCK
    while block < BLOCK_MAX and 2 * block * buffer_bytes_per_row <= BUFFER_BUDGET:
        block *= 2
    return block


def kernel_source(inputs: Sequence[Node], output: Node, name: str = "tcspec_kernel",
                  block: int | None = None, segment: int = SEGMENT, remat: int = REMAT,
                  part: int = PART, groups: Sequence[tuple[int, int]] | None = None) -> str:
    """C source of ``void name(int64_t n, const uint32_t *const *cols, uint32_t *out)``.

    ``cols[j]`` is input ``j`` (``inputs`` order) for all ``n`` rows; ``out``
    receives the low 32 bits of ``output`` for each row. ``uint32_t
    name_dot(const uint32_t *words)`` is the same for one row of words.
    With ``groups`` (``(first input, lanes)`` per operand group in layout
    order: A, B, C, scales, metadata) the source also has ``name_gemm``
    (:func:`gemm_source`).
    """
    column = {node.id: j for j, node in enumerate(inputs)}
    wide = [n for n in walk([output]) if n.width is not None and n.width > 64]
    if wide:
        raise ValueError(f"a C kernel holds values of at most 64 bits; this DAG has a "
                         f"{wide[0].width}-bit {wide[0].op}")
    if any(node.width is None or node.width > 32 for node in inputs):
        raise ValueError("kernel inputs are 32-bit columns: every input must be 1 to 32 bits")
    every = [n for n in walk([output]) if n.op not in ("const", "bool_const", "zext", "var")]
    cheap = _cheap_nodes(every, remat)
    order = [n for n in every if n.id not in cheap]
    segments = [order[i:i + segment] for i in range(0, len(order), segment)] or [[]]
    final = strip_zext(output)
    facts = analyse(output)
    buffers = _buffers(segments, final, cheap, facts)
    slots = {kind: max([slot + 1 for k, slot in buffers.values() if k == kind], default=1)
             for kind in _LANE_TYPE.values()}
    if block is None:
        block = block_rows(4 * slots["uint32_t"] + 8 * slots[_U64])
    arrays = {kind: f"T{kind[4:-2]}" for kind in _LANE_TYPE.values()}
    width = max(len(inputs), 1)
    parts: list[list[str]] = []

    def load(node: Node) -> str:
        kind, slot = buffers[node.id]
        return f"{arrays[kind]}[{slot}][i]"

    for s, seg in enumerate(segments):
        local: set[int] = set()
        body: list[str] = []
        printer = _Printer(lambda node: ref(node), facts)

        def ref(node: Node, local: set[int] = local, body: list[str] = body,
                printer: _Printer = printer) -> str:
            node = strip_zext(node)
            if node.op in ("const", "bool_const"):
                return printer.value(node, facts.lane[node.id])
            if node.id not in local:
                if node.op == "var":
                    body.append(f"    uint32_t v{node.id} = src[{column[node.id]}][i];")
                elif node.id in cheap:
                    body.append(f"    {_LANE_TYPE[facts.lane[node.id]]} v{node.id} = "
                                f"{printer.expr(node)};")
                else:
                    return load(node)
                local.add(node.id)
            return f"v{node.id}"

        for node in seg:
            expr = printer.expr(node)
            body.append(f"    {_LANE_TYPE[facts.lane[node.id]]} v{node.id} = {expr};")
            local.add(node.id)
            if node.id in buffers:
                kind, slot = buffers[node.id]
                body.append(f"    {arrays[kind]}[{slot}][i] = v{node.id};")
        if s == len(segments) - 1:
            body.append(f"    dst[i] = (uint32_t)({ref(final)});")
        if s % part == 0:
            parts.append([])
        parts[-1] += ["  for (int i = 0; i < B; i++) {", *body, "  }"]
    params = ", ".join(f"{kind} (*restrict {arrays[kind]})[B]" for kind in _LANE_TYPE.values())
    args = ", ".join(arrays[kind] for kind in _LANE_TYPE.values())
    lines = ["#include <stdint.h>", "#include <string.h>", cgen.C_HD_MACRO, cgen.C_HELPERS,
             f"#define B {block}"]
    for p, text in enumerate(parts):
        lines += [f"static __attribute__((noinline)) void {name}_part{p}(",
                  f"    {params}, const uint32_t *const *restrict src,",
                  "    uint32_t *restrict dst) {", *text, "}"]
    lines += [f"void {name}(int64_t n, const uint32_t *const *cols, uint32_t *out) {{",
              *[f"  {kind} {arrays[kind]}[{slots[kind]}][B] __attribute__((aligned(64)));"
                for kind in _LANE_TYPE.values()],
              f"  uint32_t pad[{width}][B] __attribute__((aligned(64)));",
              "  uint32_t tail[B];",
              f"  const uint32_t *src[{width}];",
              "  for (int64_t base = 0; base < n; base += B) {",
              "    int64_t m = n - base < B ? n - base : B;",
              "    uint32_t *dst = m == B ? out + base : tail;",
              f"    for (int j = 0; j < {len(inputs)}; j++) {{",
              "      if (m == B) { src[j] = cols[j] + base; continue; }",
              "      memset(pad[j], 0, sizeof pad[j]);",
              "      memcpy(pad[j], cols[j] + base, (size_t)m * sizeof(uint32_t));",
              "      src[j] = pad[j];",
              "    }",
              *[f"    {name}_part{p}({args}, src, dst);" for p in range(len(parts))],
              "    if (m < B) memcpy(out + base, tail, (size_t)m * sizeof(uint32_t));",
              "  }", "}",
              f"uint32_t {name}_dot(const uint32_t *words) {{",
              f"  const uint32_t *cols[{width}];",
              f"  for (int j = 0; j < {len(inputs)}; j++) cols[j] = words + j;",
              "  uint32_t out;",
              f"  {name}(1, cols, &out);",
              "  return out;", "}"]
    if groups is not None:
        lines += gemm_source(name, groups, len(inputs), [
            f"    {name}_part{p}({args}, src, dst);" for p in range(len(parts))],
            [f"  {kind} {arrays[kind]}[{slots[kind]}][B] __attribute__((aligned(64)));"
             for kind in _LANE_TYPE.values()])
    return "\n".join(lines) + "\n"


GROUP_FIELDS = 6
"""int64 fields per operand group of ``_gemm``: base address, then byte strides per output
row ``i``, per output column ``j``, per K step, per lane, then the element size in bytes."""


def gemm_source(name: str, groups: Sequence[tuple[int, int]], width: int,
                calls: Sequence[str], buffers: Sequence[str]) -> list[str]:
    """C lines of the strided, chained entry point (after the part functions)::

        void name_gemm(int64_t i0, int64_t i1, int64_t j0, int64_t j1, int64_t steps,
                       const int64_t *order, const int64_t *g, uint32_t *d,
                       int64_t d_ri, int64_t d_rj)

    For every output ``(i, j)`` in ``[i0, i1) x [j0, j1)`` it runs the chain
    of K steps ``order[0..steps)``: lane ``l`` of group ``q`` at step ``s``
    is the element (1, 2, 4 or 8 bytes, the low 32 bits read) at byte offset
    ``i*g[6q+1] + j*g[6q+2] + s*g[6q+3] + l*g[6q+4]`` from address
    ``g[6q]``. The third group (C) is the chained input: it is read at the
    first step only (address 0: +0), and the D of each step is the next
    step's C. The final D goes to ``d + i*d_ri + j*d_rj`` (byte strides).
    Blocks run along ``j``; a group that does not move with ``j`` is
    broadcast into its block buffer, one whose ``j`` stride is 4 bytes is
    read in place, any other is gathered.
    """
    lines = [
        "#if defined(__AVX512F__)", "#include <immintrin.h>", "#endif",
        "static inline uint32_t tcspec_word(const unsigned char *p, int64_t bytes) {",
        "  uint64_t w = 0; memcpy(&w, p, (size_t)bytes); return (uint32_t)w; }",
        "static inline const uint32_t *tcspec_fetch(uint32_t *restrict pad,",
        "    const unsigned char *p, int64_t stride, int64_t bytes, int m) {",
        "  if (stride == 4 && bytes == 4 && m == B) return (const uint32_t *)(const void *)p;",
        "  if (stride == 0) { uint32_t v = tcspec_word(p, bytes);",
        "    for (int i = 0; i < B; i++) pad[i] = v; return pad; }",
        "#if defined(__AVX512F__) && B % 16 == 0",
        "  if (bytes == 4 && m == B && stride > 0 && stride < (INT64_C(1) << 26)) {",
        "    __m512i at = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7,",
        "        6, 5, 4, 3, 2, 1, 0), _mm512_set1_epi32((int)stride));",
        "    for (int i = 0; i < B; i += 16)",
        "      _mm512_store_si512((void *)(pad + i),",
        "                         _mm512_i32gather_epi32(at, p + i * stride, 1));",
        "    return pad; }",
        "#endif",
        "  if (bytes == 4) { for (int i = 0; i < m; i++) memcpy(pad + i, p + i * stride, 4); }",
        "  else { for (int i = 0; i < m; i++) pad[i] = tcspec_word(p + i * stride, bytes); }",
        "  for (int i = m; i < B; i++) pad[i] = 0;",
        "  return pad; }",
        f"void {name}_gemm(int64_t i0, int64_t i1, int64_t j0, int64_t j1, int64_t steps,",
        "    const int64_t *order, const int64_t *g, uint32_t *d, int64_t d_ri, int64_t d_rj) {",
        *buffers,
        f"  uint32_t pad[{width}][B] __attribute__((aligned(64)));",
        "  uint32_t state[2][B] __attribute__((aligned(64)));",
        f"  const uint32_t *src[{width}];",
        "  for (int64_t jb = j0; jb < j1; jb += B) {",
        "    int m = j1 - jb < B ? (int)(j1 - jb) : B;",
        "    for (int64_t i = i0; i < i1; i++) {",
        "      uint32_t *cur = state[0], *dst = state[1], *swap;",
    ]
    chained = groups[2][0]
    lines += [
        f"      const int64_t *c = g + {2 * GROUP_FIELDS};",
        "      if (c[0] == 0) memset(cur, 0, sizeof state[0]);",
        "      else { const uint32_t *got = tcspec_fetch(cur,",
        "               (const unsigned char *)(intptr_t)c[0] + i * c[1] + jb * c[2],",
        "               c[2], c[5], m);",
        "             if (got != cur) memcpy(cur, got, sizeof state[0]); }",
        "      for (int64_t t = 0; t < steps; t++) {",
        "        int64_t s = order[t];",
    ]
    for index, (first, lanes) in enumerate(groups):
        if index == 2 or lanes == 0:
            continue
        q = GROUP_FIELDS * index
        lines += [
            f"        {{ const unsigned char *p = (const unsigned char *)(intptr_t)g[{q}]",
            f"            + i * g[{q + 1}] + jb * g[{q + 2}] + s * g[{q + 3}];",
            f"          for (int l = 0; l < {lanes}; l++)",
            f"            src[{first} + l] = tcspec_fetch(pad[{first} + l], p + l * g[{q + 4}],",
            f"                                           g[{q + 2}], g[{q + 5}], m); }}",
        ]
    lines += [
        f"        src[{chained}] = cur;",
        *["    " + call for call in calls],
        "        swap = cur; cur = dst; dst = swap;",
        "      }",
        "      unsigned char *out = (unsigned char *)d + i * d_ri + jb * d_rj;",
        "      for (int r = 0; r < m; r++) memcpy(out + r * d_rj, cur + r, 4);",
        "    }", "  }", "}",
    ]
    return lines


def cache_dir() -> Path:
    """Where built kernels are kept: ``$TCSPEC_CACHE_DIR``, else ``$XDG_CACHE_HOME/tcspec``,
    else ``~/.cache/tcspec``."""
    explicit = os.environ.get("TCSPEC_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tcspec"


@functools.cache
def compiler() -> str | None:
    """The C compiler to build kernels with (``$CC``, else cc/gcc/clang on PATH), or None."""
    for candidate in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    return None


@functools.cache
def _host_identity() -> str:
    """The CPU's feature flags (kernels are built for the host's instruction set)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith(("flags", "Features")):
                    return line.strip()
    except OSError:
        pass
    import platform

    return platform.machine() + " " + platform.processor()


@functools.cache
def _compiler_identity(cc: str) -> str:
    try:
        done = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return cc
    return cc + "\n" + done.stdout.splitlines()[0] if done.stdout else cc


class KernelBuildError(RuntimeError):
    """No kernel could be built (no compiler, or the compiler failed)."""


@dataclass(frozen=True)
class Operand:
    """Where one operand group's words are read in place: lane ``l`` of output ``(i, j)`` at K
    step ``s`` is the element of ``array`` at byte offset ``i*ri + j*rj + s*rs + l*cl`` from
    its first element (the low 32 bits of a 1-, 2-, 4- or 8-byte integer). ``array`` None:
    the group is absent (C: +0)."""

    array: np.ndarray | None
    ri: int = 0
    rj: int = 0
    rs: int = 0
    cl: int = 0

    def fields(self) -> list[int]:
        if self.array is None:
            return [0] * GROUP_FIELDS
        return [self.array.ctypes.data, self.ri, self.rj, self.rs, self.cl,
                self.array.dtype.itemsize]


MAX_JOBS = 1024
"""Most threads (API ``jobs``) or processes (``--jobs``) one call may ask for."""


def check_jobs(jobs: object) -> int | None:
    """The API's ``jobs``, as the command line's ``--jobs`` takes it: None (every core) or a
    whole number in ``1..MAX_JOBS``; anything else is refused (TypeError for a non-int such
    as ``'2'`` or ``2.0``, ValueError for ``0`` or ``-1``), never bent into range."""
    if jobs is None:
        return None
    if isinstance(jobs, bool) or not isinstance(jobs, numbers.Integral):
        raise TypeError(f"jobs must be a whole number of threads (an int) or None, "
                        f"got {jobs!r}")
    if not 1 <= jobs <= MAX_JOBS:
        raise ValueError(f"jobs must be at least 1 and at most {MAX_JOBS} (None: every "
                         f"core), got {jobs}")
    return int(jobs)


def default_jobs() -> int:
    """Threads a kernel call uses by default: every core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


MIN_DOTS_PER_THREAD = 8192
"""Dots below which a kernel call stays on one thread (a thread costs tens of microseconds)."""


@dataclass
class Kernel:
    """A loaded kernel: call it on uint32 columns; how it was obtained and how long it took."""

    name: str
    inputs: int
    path: Path
    compiled: bool
    seconds: float
    function: object
    single: object
    strided: object = None

    def gemm(self, operands: Sequence[Operand], out: np.ndarray, steps: Sequence[int],
             jobs: int | None = None) -> np.ndarray:
        """``out[i, j]`` = the chain of K ``steps`` for every output of the ``uint32`` array
        ``out[M, N]``, operands read in place (:class:`Operand`, groups in
        :data:`GROUP_ROLES` order); ``jobs`` threads (default :func:`default_jobs`) over
        ranges of ``i`` (or of ``j`` when M is smaller than ``jobs``). The GIL is released in
        the kernel."""
        if self.strided is None:
            raise KernelBuildError(f"{self.name} kernel has no strided entry point")
        if len(operands) != len(GROUP_ROLES):
            raise ValueError(f"{self.name} kernel takes {len(GROUP_ROLES)} operand groups, "
                             f"got {len(operands)}")
        if out.dtype != np.uint32 or out.ndim != 2:
            raise ValueError(f"kernel output must be a uint32 matrix, got {out.dtype} "
                             f"{out.shape}")
        m, n = out.shape
        spec = np.array([f for op in operands for f in op.fields()], dtype=np.int64)
        order = np.ascontiguousarray(steps, dtype=np.int64)
        if m * n == 0:
            return out
        jobs = default_jobs() if jobs is None else max(1, int(jobs))
        jobs = max(1, min(jobs, m * n * max(len(order), 1) // MIN_DOTS_PER_THREAD))
        along_i = m >= jobs
        total = m if along_i else n
        cuts = [total * t // jobs for t in range(jobs + 1)]
        ranges = [((lo, hi, 0, n) if along_i else (0, m, lo, hi))
                  for lo, hi in itertools.pairwise(cuts) if hi > lo]
        fixed = (ctypes.c_int64(len(order)), order.ctypes.data, spec.ctypes.data,
                 out.ctypes.data, ctypes.c_int64(out.strides[0]),
                 ctypes.c_int64(out.strides[1]))

        def run(bounds: tuple[int, int, int, int]) -> None:
            i0, i1, j0, j1 = bounds
            self.strided(ctypes.c_int64(i0), ctypes.c_int64(i1), ctypes.c_int64(j0),  # type: ignore[operator]
                         ctypes.c_int64(j1), *fixed)

        if len(ranges) == 1:
            run(ranges[0])
        else:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(len(ranges)) as pool:
                list(pool.map(run, ranges))
        return out

    def dot(self, words: array) -> int:
        """The result word of one row of input words (layout order, ``array('I')``)."""
        if len(words) != self.inputs:
            raise ValueError(f"{self.name} kernel takes {self.inputs} words, got {len(words)}")
        return self.single(words.buffer_info()[0])  # type: ignore[operator]

    def __call__(self, columns: Sequence[np.ndarray], rows: int) -> np.ndarray:
        """Result words ``uint32[rows]`` of C-contiguous ``uint32`` columns (layout order)."""
        if len(columns) != self.inputs:
            raise ValueError(f"{self.name} kernel takes {self.inputs} columns, "
                             f"got {len(columns)}")
        keep = [np.ascontiguousarray(col, dtype=np.uint32) for col in columns]
        for col in keep:
            if col.shape != (rows,):
                raise ValueError(f"kernel column has shape {col.shape}, expected ({rows},)")
        pointers = (ctypes.c_void_p * max(len(keep), 1))(*[c.ctypes.data for c in keep])
        out = np.empty(rows, dtype=np.uint32)
        if rows:
            self.function(ctypes.c_int64(rows), pointers, out.ctypes.data)  # type: ignore[operator]
        return out


def _symbol(digest: str) -> str:
    return f"tcspec_{digest[:16]}"


def _digest_path(target: Path) -> Path:
    return target.with_name(target.name + ".sha256")


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _build(source: str, target: Path, cc: str, flags: Sequence[str]) -> None:
    """Compile ``source`` into ``target`` and record its SHA-256 beside it (``.sha256``),
    each moved into place whole."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".build-") as work:
        c_file = Path(work) / "kernel.c"
        c_file.write_text(source, encoding="utf-8")
        so_file = Path(work) / "kernel.so"
        done = subprocess.run([cc, *flags, str(c_file), "-o", str(so_file)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise KernelBuildError(f"{cc} failed: {done.stderr.strip()[:500]}")
        sum_file = Path(work) / "kernel.sha256"
        sum_file.write_text(_file_digest(so_file) + "\n", encoding="ascii")
        os.replace(so_file, target)
        os.replace(sum_file, _digest_path(target))


def _open_library(target: Path) -> tuple[Any, Any, Any]:
    """``(library, tcspec_kernel, tcspec_kernel_dot)`` of a cached shared object;
    :class:`KernelBuildError` when it cannot be read or loaded, lacks a symbol, or its bytes
    differ from the digest recorded when it was built (an entry without one is trusted)."""
    try:
        recorded = _digest_path(target).read_text(encoding="ascii").strip()
    except FileNotFoundError:
        recorded = None
    except (OSError, UnicodeDecodeError) as exc:
        raise KernelBuildError(f"cannot read the digest of {target}: {exc}") from None
    try:
        if recorded is not None and _file_digest(target) != recorded:
            raise KernelBuildError(f"{target} does not match the digest recorded when it "
                                   "was built")
        library = ctypes.CDLL(str(target))
        return library, library.tcspec_kernel, library.tcspec_kernel_dot
    except (OSError, AttributeError) as exc:
        raise KernelBuildError(f"cannot load {target}: {exc}") from None


_HEALED: set[str] = set()


def _discard(target: Path, why: KernelBuildError) -> None:
    """Remove a corrupt cache entry (and its digest) so that it is built again; stderr says
    so once per entry and process."""
    for path in (target, _digest_path(target)):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    if str(target) not in _HEALED:
        _HEALED.add(str(target))
        print(f"tcspec: kernel cache entry {target.name} was corrupt ({why}); removed it, "
              "building it again", file=sys.stderr)


_LOCK = threading.Lock()
_LOADED: dict[str, Kernel] = {}
_FAILED: dict[Descriptor, str] = {}
_BY_DESCRIPTOR: dict[tuple[object, ...], Kernel] = {}
"""Kernels in use, by their settings and cache folder (a changed ``TCSPEC_CACHE_DIR``
loads from the new folder)."""
_SEEN: dict[Descriptor, int] = {}


@functools.cache
def _source(desc: Descriptor, block: int | None, segment: int, remat: int
            ) -> tuple[str, int]:
    from tcspec.smt.formula import traced

    formula = traced(desc)
    text = kernel_source(formula.inputs, formula.output, "tcspec_kernel", block, segment, remat,
                         groups=operand_groups(desc))
    return text, len(formula.inputs)


GROUP_ROLES = ("a", "b", "c", "scale_a", "scale_b", "metadata")
"""The operand groups of the strided entry point, in layout order."""


def operand_groups(desc: Descriptor) -> list[tuple[int, int]]:
    """``(first input, lanes)`` of each of :data:`GROUP_ROLES` in ``input_layout(desc)``."""
    layout = input_layout(desc)
    out = []
    for role in GROUP_ROLES:
        where = [j for j, spec in enumerate(layout) if spec.role == role]
        out.append((where[0] if where else 0, len(where)))
    return out


def kernel_for(desc: Descriptor, *, build: bool = True, flags: Sequence[str] = CFLAGS,
               block: int | None = None, segment: int = SEGMENT, remat: int = REMAT
               ) -> Kernel | None:
    """The compiled kernel of ``desc``: loaded from the cache, or built when ``build``.

    Returns None when it is not cached and ``build`` is false; raises
    :class:`KernelBuildError` when there is no compiler or the build fails.
    """
    settings = (desc, tuple(flags), block, segment, remat, cache_dir())
    kernel = _BY_DESCRIPTOR.get(settings)
    if kernel is not None and kernel.path.exists():
        return kernel
    start = time.perf_counter()
    source, inputs = _source(desc, block, segment, remat)
    kernel = load_source(source, inputs, desc.name, build=build, flags=flags)
    if kernel is not None:
        kernel.seconds = time.perf_counter() - start
        _BY_DESCRIPTOR[settings] = kernel
    return kernel


def load_source(source: str, inputs: int, name: str, *, build: bool = True,
                flags: Sequence[str] = CFLAGS) -> Kernel | None:
    """The kernel printed as ``source`` (by :func:`kernel_source`), through the on-disk cache
    (keyed by a hash of the generator, the compiler, the host CPU's flags, the compiler
    flags and the source)."""
    cc = compiler()
    if cc is None:
        raise KernelBuildError("no C compiler found (set CC, or install gcc or clang)")
    start = time.perf_counter()
    key = "\n".join([GENERATOR_VERSION, _compiler_identity(cc), _host_identity(),
                     " ".join(flags), source])
    digest = hashlib.sha256(key.encode()).hexdigest()
    target = cache_dir() / f"kernel-{digest[:32]}.so"
    with _LOCK:
        if str(target) in _LOADED and target.exists():
            return _LOADED[str(target)]
        compiled = False
        for attempt in range(2):
            if not target.exists():
                if not build:
                    return None
                try:
                    _build(source, target, cc, flags)
                except OSError as exc:
                    raise KernelBuildError(f"cannot build in {target.parent}: {exc}") from None
                compiled = True
            try:
                library, function, single = _open_library(target)
                break
            except KernelBuildError as exc:
                if compiled or attempt:
                    raise
                _discard(target, exc)
        function.restype = None
        function.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]
        single.restype = ctypes.c_uint32
        single.argtypes = [ctypes.c_void_p]
        strided = getattr(library, "tcspec_kernel_gemm", None)
        if strided is not None:
            strided.restype = None
            strided.argtypes = [ctypes.c_int64] * 5 + [ctypes.c_void_p] * 3 + [ctypes.c_int64] * 2
        kernel = Kernel(name, inputs, target, compiled, time.perf_counter() - start, function,
                        single, strided)
        _LOADED[str(target)] = kernel
        return kernel


def forget_loaded() -> None:
    """Drop the kernels loaded in this process (the on-disk cache stays): the next use
    loads from disk, as a fresh process would."""
    with _LOCK:
        _LOADED.clear()
        _BY_DESCRIPTOR.clear()
    _source.cache_clear()


def kernels_mode() -> str:
    """``$TCSPEC_KERNELS``: ``auto`` (default; by row threshold), ``always`` or ``off``."""
    mode = os.environ.get("TCSPEC_KERNELS", "auto").strip().lower() or "auto"
    return mode if mode in ("auto", "always", "off") else "auto"


def fast_kernel(desc: Descriptor, rows: int) -> Kernel | None:
    """The kernel to run ``rows`` rows of ``desc`` on, or None for NumPy.

    Rows are counted per datapath over the process: a cached kernel is used
    once :data:`CACHED_MIN_ROWS` rows have run, one not yet built is compiled
    once :data:`COMPILE_MIN_ROWS` have (``$TCSPEC_KERNELS=always`` builds at
    once, ``off`` never).
    When no kernel can be built, NumPy runs and stderr says so once.
    """
    mode = kernels_mode()
    if c_exempt(desc):
        return None
    seen = _SEEN[desc] = _SEEN.get(desc, 0) + rows
    if mode == "off" or desc in _FAILED or (mode == "auto" and seen < CACHED_MIN_ROWS):
        return None
    try:
        return kernel_for(desc, build=mode == "always" or seen >= COMPILE_MIN_ROWS)
    except (KernelBuildError, ValueError) as exc:
        _FAILED[desc] = str(exc)
        _warn_once(str(exc))
        return None


_warned = False


def _warn_once(message: str) -> None:
    global _warned
    if not _warned:
        _warned = True
        print(f"tcspec: compiled kernels unavailable ({message}); running on NumPy",
              file=sys.stderr)
