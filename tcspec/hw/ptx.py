"""PTX text of every harness, one module per target, generated from the instruction table.

Every kernel has the same parameters ``(A, B, C, D, SA, SB)`` (global pointers to
the operand images, :mod:`tcspec.hw.layouts`) and runs one tile per CTA
(``%ctaid.x``). The kernel never interprets a layout: registers are loaded
from word ``reg * threads + thread`` of the tile's image, shared-memory images
are copied word for word, tensor-memory images go through ``tcgen05.st/ld
.32x32b``. So one generator serves every shape and format, and the layout
facts stay on the host.
"""

from __future__ import annotations

from tcspec.hw.layouts import LBO, stride_bytes
from tcspec.hw.table import MMA, TCGEN05, WGMMA, Harness, harnesses_for

PTX_VERSION = "8.8"
"""PTX ISA 8.8 (CUDA 12.9): the first with every form used here (sm_103a, mma kind::f8f6f4)."""

PARAMS = ("A", "B", "C", "D", "SA", "SB")
TMEM_COLUMNS = 64
"""Columns allocated per CTA: D at 0, the block-scaled forms' scale factors at 32 and 48."""


def _bits(fmt: str, k: int) -> int:
    """Element bits in registers / shared memory (E2M1 packs two per byte at K=64)."""
    if fmt == "e2m1" and k == 64:
        return 4
    return {"tf32": 32, "f16": 16, "bf16": 16, "f32": 32, "s32": 32, "f64": 64}.get(fmt, 8)


def register_counts(h: Harness) -> tuple[int, int, int]:
    """32-bit registers per thread for A, B and the accumulator (0 where an operand is not
    in registers)."""
    per_warp = 32 * 32
    if h.instruction == MMA:
        return (h.m * h.k * h.groups * _bits(h.a_format, h.k) // per_warp,
                h.k * h.n * h.groups * _bits(h.b_format, h.k) // per_warp,
                h.m * h.n * h.groups * _bits(h.d_format, h.k) // per_warp)
    if h.instruction == WGMMA:
        return 4, 0, 4 * _bits(h.d_format, h.k) // 32
    return 0, 0, h.n


def image_words(h: Harness) -> dict[str, int]:
    """32-bit words of each operand image of one tile."""
    ra, rb, rc = register_counts(h)
    t = h.threads
    words = {"A": ra * t, "B": rb * t, "C": rc * t, "D": rc * t, "SA": t, "SB": t}
    if h.instruction == WGMMA:
        words["B"] = h.k * h.n * _bits(h.b_format, h.k) // 32
    if h.instruction == TCGEN05:
        words["A"] = h.m * h.k * _bits(h.a_format, h.k) // 32
        words["B"] = h.k * h.n * _bits(h.b_format, h.k) // 32
        words["C"] = words["D"] = h.m * h.n
    return words


def _regs(prefix: str, count: int, wide: bool = False) -> list[str]:
    return [f"%{prefix}{i}" for i in range(count // 2 if wide else count)]


class _Text:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, *lines: str) -> None:
        self.lines.extend("  " + line for line in lines)


def _base(out: _Text, param: str, words: int, size: int = 4) -> None:
    """``%p<param>`` = the global address of this tile's image of ``param``, and
    ``%t<param>`` = that plus ``size`` * thread."""
    out(f"ld.param.u64 %p{param}, [{param}];", f"cvta.to.global.u64 %p{param}, %p{param};",
        f"mul.wide.u32 %off, %tile, {words * 4};", f"add.u64 %p{param}, %p{param}, %off;",
        f"mul.wide.u32 %off, %thr, {size};", f"add.u64 %t{param}, %p{param}, %off;")


def _load(out: _Text, param: str, regs: list[str], threads: int, size: int = 4) -> None:
    """Register ``r`` of this thread = element ``r * threads + thread`` of the image (words,
    or 64-bit pairs for FP64)."""
    kind = "f64" if size == 8 else "b32"
    for r, reg in enumerate(regs):
        out(f"ld.global.{kind} {reg}, [%t{param}+{size * r * threads}];")


def _store(out: _Text, regs: list[str], threads: int, size: int = 4) -> None:
    kind = "f64" if size == 8 else "b32"
    for r, reg in enumerate(regs):
        out(f"st.global.{kind} [%tD+{size * r * threads}], {reg};")


def _copy_to_shared(out: _Text, param: str, array: str, words: int, threads: int) -> None:
    """Copy ``words`` words of the tile's image to the shared array (a strided loop)."""
    out("mov.u32 %i, %thr;", f"mov.u32 %sbase, {array};")
    out.lines.append(f"COPY_{param}:")
    out(f"setp.ge.u32 %q, %i, {words};", f"@%q bra DONE_{param};",
        "mul.wide.u32 %off, %i, 4;", f"add.u64 %g, %p{param}, %off;", "ld.global.b32 %v, [%g];",
        "shl.b32 %so, %i, 2;", "add.u32 %so, %sbase, %so;", "st.shared.b32 [%so], %v;",
        f"add.u32 %i, %i, {threads};", f"bra COPY_{param};")
    out.lines.append(f"DONE_{param}:")


def _descriptor(out: _Text, reg: str, array: str, k: int, bits: int, version: bool) -> None:
    """A shared-memory matrix descriptor (PTX ISA 8.8, wgmma and tcgen05 "Matrix Descriptor"):
    start address >> 4 in bits 0-13, LBO >> 4 in 16-29, SBO >> 4 in 32-45, no swizzle;
    tcgen05 sets the fixed version bits 46-47 to 1."""
    fields = (LBO >> 4) << 16 | (stride_bytes(k, bits) >> 4) << 32 | (int(version) << 46)
    out(f"mov.u32 %so, {array};", f"cvt.u64.u32 {reg}, %so;", f"shr.u64 {reg}, {reg}, 4;",
        f"and.b64 {reg}, {reg}, 16383;", f"or.b64 {reg}, {reg}, {fields};")


def _mma_opcode(h: Harness) -> str:
    m, n, k = h.shape
    shape = f"m{m}n{n}k{k}.row.col"
    types = f"{h.d_format}.{h.a_format}.{h.b_format}.{h.c_format}"
    if h.scale:
        vec, stype = h.scale.split()
        return f"mma.sync.aligned.{shape}.{h.kind}.block_scale.{vec}.{types}.{stype}"
    if h.kind:
        return f"mma.sync.aligned.{shape}.{h.kind}.{types}"
    sat = ".satfinite" if h.saturate else ""
    return f"mma.sync.aligned.{shape}{sat}.{types}"


def _mma_body(h: Harness, out: _Text) -> None:
    ra, rb, rc = register_counts(h)
    wide = h.a_format == "f64"
    a, b = _regs("a", ra, wide), _regs("b", rb, wide)
    c, d = _regs("c", rc, wide), _regs("d", rc, wide)
    kind = "f64" if wide else "b32"
    out(f".reg .{kind} {', '.join(a + b + c + d)};")
    words = image_words(h)
    size = 8 if wide else 4
    for param in ("A", "B", "C", "D"):
        _base(out, param, words[param], size)
    for param, regs in (("A", a), ("B", b), ("C", c)):
        _load(out, param, regs, h.threads, size)
    operands = f"{{{', '.join(d)}}}, {{{', '.join(a)}}}, {{{', '.join(b)}}}, {{{', '.join(c)}}}"
    if h.scale:
        for param in ("SA", "SB"):
            _base(out, param, words[param])
        out("ld.global.b32 %sfa, [%tSA];", "ld.global.b32 %sfb, [%tSB];")
        operands += ", %sfa, {0, 0}, %sfb, {0, 0}"
    out(f"{_mma_opcode(h)} {operands};")
    _store(out, d, h.threads, size)


def _wgmma_body(h: Harness, out: _Text) -> None:
    ra, _, rc = register_counts(h)
    a, c = _regs("a", ra), _regs("d", rc)
    words = image_words(h)
    out(f".reg .b32 {', '.join(a + c)};", ".reg .b64 %bdesc;",
        f".shared .align 128 .b8 sB[{words['B'] * 4}];")
    for param in ("A", "B", "C", "D"):
        _base(out, param, words[param])
    _load(out, "A", a, h.threads)
    _load(out, "C", c, h.threads)
    _copy_to_shared(out, "B", "sB", words["B"], h.threads)
    out("fence.proxy.async.shared::cta;", "bar.sync 0;")
    _descriptor(out, "%bdesc", "sB", h.k, _bits(h.b_format, h.k), version=False)
    m, n, k = h.shape
    opcode = f"wgmma.mma_async.sync.aligned.m{m}n{n}k{k}.{h.d_format}.{h.a_format}.{h.b_format}"
    tail = {"f16": ", 1, 1, 0", "bf16": ", 1, 1, 0"}.get(h.a_format, ", 1, 1")
    if h.d_format == "s32":
        tail = ""
    out("setp.eq.u32 %q, 0, 0;", "wgmma.fence.sync.aligned;",
        f"{opcode} {{{', '.join(c)}}}, {{{', '.join(a)}}}, %bdesc, %q{tail};",
        "wgmma.commit_group.sync.aligned;", "wgmma.wait_group.sync.aligned 0;")
    _store(out, c, h.threads)


def _tcgen05_kind(h: Harness) -> str:
    if h.kind:
        vec = h.scale.split()[0] if h.kind == "kind::mxf4nvf4" and h.scale else None
        return f"{h.kind}.block_scale" + (f".{vec}" if vec else "")
    if h.a_format in ("tf32", "f16", "bf16"):
        return "kind::" + ("tf32" if h.a_format == "tf32" else "f16")
    return "kind::i8" if h.d_format == "s32" else "kind::f8f6f4"


def _tcgen05_body(h: Harness, out: _Text) -> None:
    """One thread issues the MMA; all four warps move C in and D out of tensor memory
    (warp w owns TMEM lanes 32w..32w+31: PTX ISA 8.8, tcgen05 "Tensor Memory")."""
    words = image_words(h)
    cols = _regs("c", h.n)
    out(f".reg .b32 {', '.join(cols)}, %taddr, %tln, %wrp, %idesc;",
        ".reg .b64 %adesc, %bdesc;", ".reg .pred %leader, %w0;",
        f".shared .align 128 .b8 sA[{words['A'] * 4}];",
        f".shared .align 128 .b8 sB[{words['B'] * 4}];",
        ".shared .align 8 .b64 sBar;", ".shared .align 4 .b32 sTmem;")
    for param in ("A", "B", "C", "D"):
        _base(out, param, words[param])
    out("shr.u32 %wrp, %thr, 5;", "setp.eq.u32 %w0, %wrp, 0;", "setp.eq.u32 %leader, %thr, 0;",
        "mov.u32 %so, sTmem;", "@!%w0 bra ALLOCATED;",
        f"tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%so], {TMEM_COLUMNS};",
        "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;")
    out.lines.append("ALLOCATED:")
    out("mov.u32 %so, sBar;", "@%leader mbarrier.init.shared::cta.b64 [%so], 1;")
    _copy_to_shared(out, "A", "sA", words["A"], h.threads)
    _copy_to_shared(out, "B", "sB", words["B"], h.threads)
    out("fence.proxy.async.shared::cta;", "tcgen05.fence::before_thread_sync;", "bar.sync 0;",
        "tcgen05.fence::after_thread_sync;", "ld.shared.b32 %taddr, [sTmem];",
        "shl.b32 %tln, %wrp, 21;", "add.u32 %tln, %taddr, %tln;")
    _load(out, "C", cols, h.threads)
    regs = ", ".join(cols)
    out(f"tcgen05.st.sync.aligned.32x32b.x{h.n}.b32 [%tln], {{{regs}}};",
        "tcgen05.wait::st.sync.aligned;", "tcgen05.fence::before_thread_sync;", "bar.sync 0;",
        "tcgen05.fence::after_thread_sync;")
    _descriptor(out, "%adesc", "sA", h.k, _bits(h.a_format, h.k), version=True)
    _descriptor(out, "%bdesc", "sB", h.k, _bits(h.b_format, h.k), version=True)
    out(f"mov.b32 %idesc, {h.tcgen05_idesc()};", "setp.eq.u32 %q, 0, 0;",
        "@!%leader bra ISSUED;")
    if h.scale:
        out("add.u32 %sfa, %taddr, 32;", "add.u32 %sfb, %taddr, 48;",
            f"tcgen05.mma.cta_group::1.{_tcgen05_kind(h)} [%taddr], %adesc, %bdesc, %idesc, "
            "[%sfa], [%sfb], %q;")
    else:
        out(f"tcgen05.mma.cta_group::1.{_tcgen05_kind(h)} [%taddr], %adesc, %bdesc, %idesc, %q;")
    out("mov.u32 %so, sBar;",
        "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%so];")
    out.lines.append("ISSUED:")
    out("mov.u32 %so, sBar;")
    out.lines.append("WAIT:")
    out("mbarrier.try_wait.parity.shared::cta.b64 %q, [%so], 0;", "@!%q bra WAIT;",
        "tcgen05.fence::after_thread_sync;",
        f"tcgen05.ld.sync.aligned.32x32b.x{h.n}.b32 {{{regs}}}, [%tln];",
        "tcgen05.wait::ld.sync.aligned;")
    _store(out, cols, h.threads)
    out("tcgen05.fence::before_thread_sync;", "bar.sync 0;", "@!%w0 bra FREED;",
        "tcgen05.fence::after_thread_sync;",
        f"tcgen05.dealloc.cta_group::1.sync.aligned.b32 %taddr, {TMEM_COLUMNS};")
    out.lines.append("FREED:")


def kernel(h: Harness) -> str:
    """The PTX entry of one harness: load the tile's operands, run the instruction once,
    store D."""
    out = _Text()
    out(".reg .b32 %thr, %tile, %i, %v, %so, %sbase, %sfa, %sfb;",
        ".reg .b64 %off, %g, " + ", ".join(f"%p{p}, %t{p}" for p in PARAMS) + ";",
        ".reg .pred %q;", "mov.u32 %thr, %tid.x;", "mov.u32 %tile, %ctaid.x;")
    {MMA: _mma_body, WGMMA: _wgmma_body, TCGEN05: _tcgen05_body}[h.instruction](h, out)
    out("ret;")
    params = ", ".join(f".param .u64 {p}" for p in PARAMS)
    head = [f"// {h.name}", f".visible .entry {h.entry}({params})", "{"]
    return "\n".join(head + out.lines + ["}"]) + "\n"


def module(target: str) -> str:
    """The PTX module of ``target``: one entry per row of :func:`harnesses_for`."""
    rows = harnesses_for(target)
    head = [f"// tcspec hw harnesses for {target}: {len(rows)} instruction forms, generated "
            "by tcspec.hw.ptx", f".version {PTX_VERSION}", f".target {target}",
            ".address_size 64", ""]
    return "\n".join(head) + "\n".join(kernel(h) for h in rows)
