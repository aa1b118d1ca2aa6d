"""An emulated tensor-core device for the `tcspec hw` tests: no GPU, tcspec's C reference.

It takes the operand images a kernel would receive, reads the matrices back
out with its *own* lane mapping (transcribed here from the PTX ISA figures,
register by register, and the shared-memory descriptor constants parsed from
the generated PTX, as the hardware would read them), computes every D
element with the C99 reference of ``tcspec export --lang c`` of the datapath
the row computes on the emulated architecture (``catalog_datapath(h, sm)``),
and writes the D image. Nothing of the host packer (``tcspec.hw.layouts`` / ``pack``) is
imported, so a packer that disagrees with the figures fails the tests.
"""

from __future__ import annotations

import ctypes
import functools
import re
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from tcspec.export import c_name, c_sources
from tcspec.hw.ptx import kernel
from tcspec.hw.table import Harness, datapath_descriptor
from tcspec.spec.descriptor import Descriptor

ELEMENT_BITS = {"tf32": 32, "f32": 32, "s32": 32, "f16": 16, "bf16": 16}


def _bits(fmt: str) -> int:
    return ELEMENT_BITS.get(fmt, 8)


def _words(fmt: str, elements: np.ndarray) -> np.ndarray:
    """Image elements as the container words tcspec's reference reads."""
    if fmt == "bf16":
        return elements << np.uint64(16)
    if fmt == "e2m1":  # FP4 sits at bits 5..2 of its byte under kind::f8f6f4
        return (elements >> np.uint64(2)) & np.uint64(0xF)
    return elements


# ------------------------------------------------------------ ISA figures, per register


def mma_a_cell(m: int, k: int, fmt: str, lane: int, reg: int, pos: int) -> tuple[int, int]:
    """mma.sync A: (row, col) of register ``reg``, element ``pos`` of lane ``lane``."""
    g, t = lane // 4, lane % 4
    bits = _bits(fmt)
    if bits == 32:
        return (g + 8 * reg, t) if k == 4 else (g + 8 * (reg % 2), t + 4 * (reg // 2))
    if bits == 16:
        if k == 8:
            return g + 8 * reg, 2 * t + pos
        return g + 8 * (reg % 2), 2 * t + pos + 8 * (reg // 2)
    if k == 16:
        return g + 8 * reg, 4 * t + pos
    return g + 8 * (reg % 2), 4 * t + pos + 16 * (reg // 2)


def mma_b_cell(k: int, fmt: str, lane: int, reg: int, pos: int) -> tuple[int, int]:
    """mma.sync B: (k, col)."""
    g, t = lane // 4, lane % 4
    bits = _bits(fmt)
    if bits == 32:
        return t + 4 * reg, g
    if bits == 16:
        return (2 * t + pos, g) if k == 8 else (2 * t + pos + 8 * reg, g)
    return (4 * t + pos, g) if k == 16 else (4 * t + pos + 16 * reg, g)


def m16n8_cd_cell(fmt: str, lane: int, reg: int, pos: int) -> tuple[int, int]:
    g, t = lane // 4, lane % 4
    if _bits(fmt) == 32:
        return g + 8 * (reg // 2), 2 * t + reg % 2
    return g + 8 * reg, 2 * t + pos


def m8n8k4_row(lane: int) -> tuple[int, int]:
    """(MMA computation, row or column index) of a lane in m8n8k4."""
    return (lane % 16) // 4, lane % 4 + 4 * (lane // 16)


# --------------------------------------------------------------------- the device


def _elements(image: np.ndarray, word: int, shift: int, bits: int) -> np.ndarray:
    return (image[:, word].astype(np.uint64) >> np.uint64(shift)) & np.uint64((1 << bits) - 1)


def _descriptor_offsets(h: Harness, reg: str) -> tuple[int, int]:
    """(LBO, SBO) in bytes, read from the constant the kernel ORs into its descriptor."""
    found = re.search(rf"or\.b64 %{reg}, %{reg}, (\d+);", kernel(h))
    assert found, f"no {reg} descriptor in {h.entry}"
    fields = int(found.group(1))
    return ((fields >> 16) & 0x3FFF) << 4, ((fields >> 32) & 0x3FFF) << 4


def _smem_read(image: np.ndarray, rows: int, k: int, fmt: str, lbo: int, sbo: int) -> np.ndarray:
    """A K-major, unswizzled operand: ``out[t, row, k]``."""
    bits = _bits(fmt)
    out = np.zeros((image.shape[0], rows, k), dtype=np.uint64)
    data = image.astype("<u4").view(np.uint8).reshape(image.shape[0], -1)
    for row in range(rows):
        for lane in range(k):
            byte = lane * bits // 8
            address = (row // 8) * sbo + (byte // 16) * lbo + (row % 8) * 16 + byte % 16
            value = np.zeros(image.shape[0], dtype=np.uint64)
            for i in range(bits // 8):
                value |= data[:, address + i].astype(np.uint64) << np.uint64(8 * i)
            out[:, row, lane] = value
    return out


class EmulatedDevice:
    """Runs harness images through the C reference; ``swap`` exchanges two A lanes of
    row 0 in the emulator's reading (a deliberately wrong transcription); ``flip`` = (tile,
    row, column) XORs bit 0 into that group-0 D element of every launch (a deliberately
    wrong word)."""

    def __init__(self, sm: int = 90, swap: tuple[int, int] | None = None,
                 flip: tuple[int, int, int] | None = None) -> None:
        self.sm, self.flip = sm, flip
        self.provenance = {"source": "emulated", "gpu": "emulator", "sm": f"sm_{sm}",
                           "driver": "none", "cuda": "none", "tcspec": "test"}
        self.swap = swap

    def _registers(self, h: Harness, image: np.ndarray, fmt: str, shape: tuple[int, ...],
                   cell) -> np.ndarray:
        bits, threads = _bits(fmt), h.threads
        per = 32 // bits
        out = np.zeros((image.shape[0], *shape), dtype=np.uint64)
        regs = image.shape[1] // threads
        for thread in range(threads):
            for reg in range(regs):
                for pos in range(per):
                    where = cell(thread, reg, pos)
                    if where is None:
                        continue
                    out[(slice(None), *where)] = _elements(image, reg * threads + thread,
                                                           pos * bits, bits)
        return out

    def _operands(self, h: Harness, images: dict[str, np.ndarray]):
        g, m, n, k = h.groups, h.m, h.n, h.k
        if h.instruction == "tcgen05.mma":
            lbo_a, sbo_a = _descriptor_offsets(h, "adesc")
            lbo_b, sbo_b = _descriptor_offsets(h, "bdesc")
            a = _smem_read(images["A"], m, k, h.a_format, lbo_a, sbo_a)[:, None]
            b = _smem_read(images["B"], n, k, h.b_format, lbo_b, sbo_b).transpose(0, 2, 1)[:, None]
            mask = np.uint64(0xFFFF if h.c_format == "f16" else 0xFFFFFFFF)
            c = (images["C"].astype(np.uint64).reshape(-1, n, 128).transpose(0, 2, 1)[:, None]
                 & mask)
            return a, b, c
        if h.instruction == "wgmma.mma_async":
            def a_cell(thread, reg, pos):
                row, col = mma_a_cell(16, k, h.a_format, thread % 32, reg, pos)
                return 0, row + 16 * (thread // 32), col
            lbo, sbo = _descriptor_offsets(h, "bdesc")
            b = _smem_read(images["B"], n, k, h.b_format, lbo, sbo).transpose(0, 2, 1)[:, None]
            return (self._registers(h, images["A"], h.a_format, (1, m, k), a_cell), b,
                    self._registers(h, images["C"], h.c_format, (1, m, n), self._wgmma_d_cell(h)))
        if g == 4:
            def a_cell(lane, reg, pos):
                q, row = m8n8k4_row(lane)
                return q, row, 2 * reg + pos

            def b_cell(lane, reg, pos):
                q, col = m8n8k4_row(lane)
                return q, 2 * reg + pos, col
            return (self._registers(h, images["A"], "f16", (4, 8, 4), a_cell),
                    self._registers(h, images["B"], "f16", (4, 4, 8), b_cell),
                    self._registers(h, images["C"], "f16", (4, 8, 8), self._m8n8k4_cd_cell))
        return (self._registers(h, images["A"], h.a_format, (1, m, k),
                                lambda lane, r, p: (0, *mma_a_cell(m, k, h.a_format, lane, r, p))),
                self._registers(h, images["B"], h.b_format, (1, k, n),
                                lambda lane, r, p: (0, *mma_b_cell(k, h.b_format, lane, r, p))),
                self._registers(h, images["C"], h.c_format, (1, m, n),
                                lambda lane, r, p: (0, *m16n8_cd_cell(h.c_format, lane, r, p))))

    @staticmethod
    def _m8n8k4_cd_cell(lane: int, reg: int, pos: int):
        q, row = m8n8k4_row(lane)
        return q, row, 2 * reg + pos

    @staticmethod
    def _wgmma_d_cell(h: Harness):
        def cell(thread, reg, pos):
            row, col = m16n8_cd_cell(h.d_format, thread % 32, reg, pos)
            return 0, row + 16 * (thread // 32), col
        return cell

    def launch(self, h: Harness, images: dict[str, np.ndarray], tiles: int) -> np.ndarray:
        a, b, c = self._operands(h, images)
        if self.swap:
            i, j = self.swap
            a[:, :, 0, [i, j]] = a[:, :, 0, [j, i]]
        a, b = _words(h.a_format, a), _words(h.b_format, b)
        t, g, m, k = a.shape
        n = b.shape[3]
        rows_a = np.broadcast_to(a[:, :, :, None, :], (t, g, m, n, k)).reshape(-1, k)
        cols_b = np.broadcast_to(b.transpose(0, 1, 3, 2)[:, :, None], (t, g, m, n, k))
        d = reference(datapath_descriptor(h, self.sm), rows_a, cols_b.reshape(-1, k),
                      c.reshape(-1)).reshape(t, g, m, n)
        if self.flip:
            tile, row, col = self.flip
            d[tile, 0, row, col] ^= 1
        return self._d_image(h, d)

    def _d_image(self, h: Harness, d: np.ndarray) -> np.ndarray:
        tiles = d.shape[0]
        if h.instruction == "tcgen05.mma":
            return d[:, 0].transpose(0, 2, 1).reshape(tiles, -1).astype(np.uint32)
        threads = h.threads
        bits = _bits(h.d_format)
        per = 32 // bits
        regs = h.m * h.n * h.groups * bits // (32 * threads)
        image = np.zeros((tiles, regs * threads), dtype=np.uint64)
        if h.instruction == "wgmma.mma_async":
            cell = self._wgmma_d_cell(h)
        elif h.groups == 4:
            cell = self._m8n8k4_cd_cell
        else:
            def cell(lane, r, p):
                return (0, *m16n8_cd_cell(h.d_format, lane, r, p))
        for thread in range(threads):
            for reg in range(regs):
                for pos in range(per):
                    value = d[(slice(None), *cell(thread, reg, pos))].astype(np.uint64)
                    image[:, reg * threads + thread] |= (value & np.uint64((1 << bits) - 1)) \
                        << np.uint64(pos * bits)
        return image.astype(np.uint32)


@functools.cache
def _library(desc: Descriptor) -> ctypes.CDLL:
    """The C reference of ``desc`` with a loop over cases, compiled once per process."""
    directory = Path(tempfile.mkdtemp(prefix="tcspec-emulator-"))
    for name, text in c_sources([desc]).items():
        (directory / name).write_text(text)
    source = next(name for name in c_sources([desc]) if name.endswith(".c"))
    k = desc.k
    (directory / "loop.c").write_text(
        f'#include "{source[:-2]}.h"\n'
        "void run_many(long n, const uint32_t *a, const uint32_t *b, const uint32_t *c, "
        f"uint32_t *d) {{ for (long i = 0; i < n; i++) d[i] = {c_name(desc)}(a + i * {k}, "
        f"b + i * {k}, c[i]); }}\n")
    target = directory / "ref.so"
    subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", str(target), str(directory / source),
                    str(directory / "loop.c")], check=True)
    return ctypes.CDLL(str(target))


def reference(desc: Descriptor, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The C reference on cases ``a[n, k]``, ``b[n, k]``, ``c[n]`` (K padded with +0)."""
    n, k = a.shape
    pad = np.zeros((n, desc.k - k), dtype=np.uint64)
    a = np.ascontiguousarray(np.concatenate([a, pad], axis=1), dtype=np.uint32)
    b = np.ascontiguousarray(np.concatenate([b, pad], axis=1), dtype=np.uint32)
    c = np.ascontiguousarray(c, dtype=np.uint32)
    d = np.zeros(n, dtype=np.uint32)
    pointer = ctypes.POINTER(ctypes.c_uint32)
    _library(desc).run_many(ctypes.c_long(n), a.ctypes.data_as(pointer),
                            b.ctypes.data_as(pointer), c.ctypes.data_as(pointer),
                            d.ctypes.data_as(pointer))
    return d
