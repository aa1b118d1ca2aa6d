"""Operand layouts of the tensor-core instructions: where each matrix element lives.

A :class:`Placement` says, for one tile of one instruction, which 32-bit word
of an operand's *image* holds element ``[group][row][col]`` and at which bit
(``shift``). The device kernels are layout-agnostic: every thread loads its
registers from the image (word ``reg * threads + thread``, so loads are
coalesced), shared-memory images are copied byte for byte, and tensor-memory
images are written and read with ``tcgen05.st/ld .32x32b`` (word ``column *
128 + lane``). So the whole layout lives here, on the host, each function
transcribing one figure of the PTX ISA (release 8.8, the section named in
its docstring). ``groupID = lane >> 2`` and ``threadID_in_group = lane % 4``
as in the ISA.

Matrices are A ``[M][K]``, B ``[K][N]``, C and D ``[M][N]``; ``group`` is
the independent MMA inside one warp instruction (four for ``m8n8k4``, else
one).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

Coordinate = Callable[[int, int], tuple[int, int, int]]
"""``(thread, element index i of that thread) -> (group, row, col)``."""


@dataclass(frozen=True)
class Placement:
    """Where every element of one operand of one tile sits in the operand's image."""

    space: str  # "registers", "shared memory" or "tensor memory"
    width: int  # bits per element in the image
    words: int  # 32-bit words of the image, one tile
    word: np.ndarray  # int64 [groups, rows, cols]
    shift: np.ndarray  # int64 [groups, rows, cols]
    source: str  # the PTX ISA figure transcribed

    @property
    def shape(self) -> tuple[int, int, int]:
        return self.word.shape  # type: ignore[return-value]

    def swapped(self, first: tuple[int, int], second: tuple[int, int]) -> Placement:
        """The same placement with two elements of group 0 exchanged (a deliberately wrong
        layout, for tests)."""
        word, shift = self.word.copy(), self.shift.copy()
        for array in (word, shift):
            array[(0, *first)], array[(0, *second)] = array[(0, *second)], array[(0, *first)]
        return Placement(self.space, self.width, self.words, word, shift, self.source)


def registers(shape: tuple[int, int, int], width: int, threads: int, per_thread: int,
              coordinate: Coordinate, source: str) -> Placement:
    """A register fragment: thread ``t`` holds elements ``i = 0..per_thread-1`` (low to high
    within each 32-bit register, ``32 // width`` per register) at ``coordinate(t, i)``."""
    word = np.full(shape, -1, dtype=np.int64)
    shift = np.zeros(shape, dtype=np.int64)
    per_reg = 32 // width
    for thread in range(threads):
        for i in range(per_thread):
            where = coordinate(thread, i)
            if word[where] >= 0:
                raise AssertionError(f"{source}: element {where} placed twice")
            word[where] = (i // per_reg) * threads + thread
            shift[where] = (i % per_reg) * width
    if (word < 0).any():
        raise AssertionError(f"{source}: an element has no register")
    regs = -(-per_thread // per_reg)
    return Placement("registers", width, regs * threads, word, shift, source)


# ------------------------------------------------------------ mma.sync fragments


def _gt(lane: int) -> tuple[int, int]:
    return lane >> 2, lane % 4


def mma_a(m: int, k: int, width: int) -> Placement:
    """mma.sync A fragment (row-major), PTX ISA 9.7.14.5 "Matrix Fragments for
    mma.m16n8k4 / m16n8k8 / m16n8k16 / m16n8k32" (figures for .tf32, .f16/.bf16 and the
    8-bit types)."""
    per = m * k // 32

    def at(lane: int, i: int) -> tuple[int, int, int]:
        g, t = _gt(lane)
        if width == 32 and k == 4:  # tf32 m16n8k4
            return 0, g + 8 * i, t
        if width == 32:  # tf32 m16n8k8: a0,a2 row g; a1,a3 row g+8; a2,a3 col +4
            return 0, g + 8 * (i & 1), t + 4 * (i >> 1)
        if width == 16 and k == 8:
            return 0, g + 8 * (i >> 1), t * 2 + (i & 1)
        if width == 16:  # k16: rows g for a0,a1,a4,a5; cols +8 from a4
            return 0, g + 8 * ((i >> 1) & 1), t * 2 + (i & 1) + 8 * (i >> 2)
        if k == 16:  # 8-bit m16n8k16: a0..a3 row g, a4..a7 row g+8
            return 0, g + 8 * (i >> 2), t * 4 + (i & 3)
        return 0, g + 8 * ((i >> 2) & 1), t * 4 + (i & 3) + 16 * (i >> 3)  # 8-bit k32

    return registers((1, m, k), width, 32, per, at, f"PTX ISA 9.7.14.5, mma.m{m}n8k{k} A "
                     f"(.{ {32: 'tf32', 16: 'f16/.bf16', 8: '8-bit'}[width]})")


def mma_b(k: int, width: int) -> Placement:
    """mma.sync B fragment (column-major), PTX ISA 9.7.14.5, the same figures as
    :func:`mma_a`."""
    per = k * 8 // 32

    def at(lane: int, i: int) -> tuple[int, int, int]:
        g, t = _gt(lane)
        if width == 32:  # tf32: b0 row t, b1 row t+4
            return 0, t + 4 * i, g
        if width == 16 and k == 8:
            return 0, t * 2 + i, g
        if width == 16:
            return 0, t * 2 + (i & 1) + 8 * (i >> 1), g
        if k == 16:
            return 0, t * 4 + i, g
        return 0, t * 4 + (i & 3) + 16 * (i >> 2), g

    return registers((1, k, 8), width, 32, per, at, f"PTX ISA 9.7.14.5, mma.m16n8k{k} B")


def mma_cd(width: int) -> Placement:
    """mma.sync m16n8 accumulator C/D (F32, S32 or packed F16), PTX ISA 9.7.14.5:
    c0,c1 row groupID, c2,c3 row groupID+8, col threadID_in_group*2 + (i & 1)."""

    def at(lane: int, i: int) -> tuple[int, int, int]:
        g, t = _gt(lane)
        return 0, g + 8 * (i >> 1), t * 2 + (i & 1)

    return registers((1, 16, 8), width, 32, 4, at, "PTX ISA 9.7.14.5, mma.m16n8 C/D")


def _quadpair(lane: int) -> tuple[int, int]:
    """m8n8k4: the MMA computation (0-3) a lane serves and its row/column offset (0 or 4)."""
    return (lane % 16) >> 2, 4 * (lane >> 4)


def m8n8k4_a() -> Placement:
    """mma.m8n8k4 .f16 row-major A, PTX ISA 9.7.14.5.1 (Figure 46): computation
    (lane % 16) >> 2; row = lane % 4 (+4 for lanes 16-31); col = i."""

    def at(lane: int, i: int) -> tuple[int, int, int]:
        q, off = _quadpair(lane)
        return q, lane % 4 + off, i

    return registers((4, 8, 4), 16, 32, 4, at, "PTX ISA 9.7.14.5.1, mma.m8n8k4 A (.row)")


def m8n8k4_b() -> Placement:
    """mma.m8n8k4 .f16 column-major B, PTX ISA 9.7.14.5.1: row = i, col = lane % 4 (+4 for
    lanes 16-31)."""

    def at(lane: int, i: int) -> tuple[int, int, int]:
        q, off = _quadpair(lane)
        return q, i, lane % 4 + off

    return registers((4, 4, 8), 16, 32, 4, at, "PTX ISA 9.7.14.5.1, mma.m8n8k4 B (.col)")


def m8n8k4_cd() -> Placement:
    """mma.m8n8k4 .f16 accumulator C/D, PTX ISA 9.7.14.5.1: each thread holds one row,
    c0..c7 = columns 0..7; row = lane % 4 (+4 for lanes 16-31)."""

    def at(lane: int, i: int) -> tuple[int, int, int]:
        q, off = _quadpair(lane)
        return q, lane % 4 + off, i

    return registers((4, 8, 8), 16, 32, 8, at, "PTX ISA 9.7.14.5.1, mma.m8n8k4 C/D (.f16)")


# ---------------------------------------------------------------- wgmma fragments


def wgmma_a(k: int, width: int) -> Placement:
    """wgmma A in registers, PTX ISA 8.8, wgmma "Register Fragments" (m64nNk8 .tf32,
    m64nNk16 .f16/.bf16, m64nNk32 8-bit): warp w of the warpgroup holds rows 16w..16w+15,
    each warp laid out as the mma.m16n8k{8,16,32} A fragment."""
    base = mma_a(16, k, width)
    word = np.zeros((1, 64, k), dtype=np.int64)
    shift = np.zeros((1, 64, k), dtype=np.int64)
    regs = base.words // 32
    for warp in range(4):
        rows = slice(16 * warp, 16 * warp + 16)
        reg, lane = base.word[0] // 32, base.word[0] % 32
        word[0, rows] = reg * 128 + lane + 32 * warp
        shift[0, rows] = base.shift[0]
    return Placement("registers", width, regs * 128, word, shift,
                     f"PTX ISA 8.8, wgmma m64nNk{k} A register fragment")


def wgmma_d(width: int) -> Placement:
    """wgmma m64n8 accumulator D, PTX ISA 8.8, wgmma "Register Fragments" (D): warp w
    rows 16w + groupID (+8 for d2,d3), col threadID_in_group*2 + (i & 1)."""

    def at(thread: int, i: int) -> tuple[int, int, int]:
        g, t = _gt(thread % 32)
        return 0, 16 * (thread // 32) + g + 8 * (i >> 1), t * 2 + (i & 1)

    return registers((1, 64, 8), width, 128, 4, at, "PTX ISA 8.8, wgmma m64n8 D")


# ----------------------------------------------------- shared memory (descriptors)

CORE_ROW_BYTES = 16
"""A core matrix: 8 rows of 16 contiguous bytes (PTX ISA 8.8, "Shared Memory Matrix Layout")."""
LBO = 128
"""Leading-dimension byte offset: the next core matrix along K."""


def k_major_smem(rows: int, k: int, width: int, transpose: bool, source: str) -> Placement:
    """A K-major operand in shared memory without swizzling (PTX ISA 8.8, wgmma and tcgen05
    "Shared Memory Matrix Layout"): core matrix (row // 8, k-byte // 16) at
    ``(row // 8) * SBO + (k-byte // 16) * LBO``, row ``row % 8`` 16 bytes further each.
    ``transpose`` stores B (``[K][N]``) with N as the row index. SBO is
    :func:`stride_bytes`."""
    kbytes = k * width // 8
    sbo = stride_bytes(k, width)
    shape = (1, k, rows) if transpose else (1, rows, k)
    word = np.zeros(shape, dtype=np.int64)
    shift = np.zeros(shape, dtype=np.int64)
    for row in range(rows):
        for lane in range(k):
            byte = lane * width // 8
            address = (row // 8) * sbo + (byte // CORE_ROW_BYTES) * LBO \
                + (row % 8) * CORE_ROW_BYTES + byte % CORE_ROW_BYTES
            where = (0, lane, row) if transpose else (0, row, lane)
            word[where] = address // 4
            shift[where] = (address % 4) * 8
    return Placement("shared memory", width, rows * kbytes // 4, word, shift, source)


def stride_bytes(k: int, width: int) -> int:
    """Stride-dimension byte offset: the next 8-row group (all of one K step's core
    matrices lie between)."""
    return (k * width // 8 // CORE_ROW_BYTES) * LBO


def tmem(rows: int, cols: int, width: int) -> Placement:
    """An accumulator in tensor memory, cta_group::1 with M = 128 (PTX ISA 8.8, tcgen05
    "Data path layout", layout D for M=128): row i is TMEM lane i, column j is column j;
    read and written with tcgen05.ld/st .32x32b (thread = lane). A 16-bit element sits in
    the low half of its 32-bit cell (not checked on hardware: the self-test decides)."""
    word = np.zeros((1, rows, cols), dtype=np.int64)
    for row in range(rows):
        for col in range(cols):
            word[0, row, col] = col * 128 + row
    return Placement("tensor memory", width, rows * cols, word,
                     np.zeros_like(word), "PTX ISA 8.8, tcgen05 data path layout D (M=128)")
