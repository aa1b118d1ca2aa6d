"""Host-side packing: dot-product cases into operand images, D images back into words.

Words are tcspec's raw container words (SEMANTICS.md section 1: tf32/bf16
as F32 words, narrower formats in the low bits). An image element is what
the instruction reads: a bf16 is the high half of its F32 word, an FP4/FP6
element under ``kind::f8f6f4`` sits in an 8-bit container (FP4 at bits 5..2,
FP6 at bits 5..0, as the PTX ISA draws the f8f6f4 element containers; recalled,
not re-read: the self-test on a GPU checks it). Cases go on tile diagonals:
D[i][i] depends only on A row i, B column i and C[i][i], so one instruction
carries :attr:`Harness.diagonal` cases and every other element is +0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcspec.hw.layouts import Placement
from tcspec.hw.table import Harness

_MASK = {"f16": 0xFFFF, "e4m3": 0xFF, "e5m2": 0xFF, "s8": 0xFF, "u8": 0xFF, "e2m3": 0x3F,
         "e3m2": 0x3F, "e2m1": 0xF}


def to_element(fmt: str, words: np.ndarray) -> np.ndarray:
    """Container words -> the image element the instruction reads (``uint64``)."""
    words = np.asarray(words, dtype=np.uint64)
    if fmt in ("tf32", "f32", "s32"):
        return words & np.uint64(0xFFFFFFFF)
    if fmt == "bf16":
        return (words >> np.uint64(16)) & np.uint64(0xFFFF)
    element = words & np.uint64(_MASK[fmt])
    return element << np.uint64(2) if fmt == "e2m1" else element


def from_element(fmt: str, elements: np.ndarray) -> np.ndarray:
    """A D image element -> the result word (F32/S32 word, F16 in the low 16 bits)."""
    return np.asarray(elements, dtype=np.uint64) & np.uint64(0xFFFF if fmt == "f16"
                                                            else 0xFFFFFFFF)


def pack(placement: Placement, elements: np.ndarray) -> np.ndarray:
    """``elements[tiles, groups, rows, cols]`` -> ``uint32[tiles, words]`` images."""
    tiles = elements.shape[0]
    image = np.zeros((tiles, placement.words), dtype=np.uint64)
    mask = np.uint64((1 << placement.width) - 1)
    values = (np.asarray(elements, dtype=np.uint64) & mask) << placement.shift.astype(np.uint64)
    flat = (np.arange(tiles)[:, None] * placement.words + placement.word.reshape(1, -1))
    np.bitwise_or.at(image.reshape(-1), flat.reshape(-1), values.reshape(tiles, -1).reshape(-1))
    return image.astype(np.uint32)


def unpack(placement: Placement, image: np.ndarray) -> np.ndarray:
    """``uint32[tiles, words]`` -> ``elements[tiles, groups, rows, cols]`` (``uint64``)."""
    image = np.asarray(image, dtype=np.uint64)
    words = image[:, placement.word.reshape(-1)]
    values = (words >> placement.shift.reshape(1, -1).astype(np.uint64)) \
        & np.uint64((1 << placement.width) - 1)
    return values.reshape((image.shape[0], *placement.shape))


@dataclass
class Tiles:
    """Operand matrices of ``tiles`` tiles as container words: ``a[t, g, M, K]``,
    ``b[t, g, K, N]``, ``c[t, g, M, N]``."""

    a: np.ndarray
    b: np.ndarray
    c: np.ndarray

    @property
    def count(self) -> int:
        return int(self.a.shape[0])


def images(h: Harness, tiles: Tiles) -> dict[str, np.ndarray]:
    """The ``A``, ``B`` and ``C`` images of ``tiles`` for harness ``h``."""
    place = h.placements()
    return {"A": pack(place["a"], to_element(h.a_format, tiles.a)),
            "B": pack(place["b"], to_element(h.b_format, tiles.b)),
            "C": pack(place["c"], to_element(h.c_format, tiles.c))}


def d_words(h: Harness, d_image: np.ndarray) -> np.ndarray:
    """The D words ``[t, g, M, N]`` of a D image."""
    return from_element(h.d_format, unpack(h.placements()["d"], d_image))


def diagonal_tiles(h: Harness, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> Tiles:
    """Cases ``a[n, K]``, ``b[n, K]``, ``c[n]`` placed on tile diagonals (case ``t *
    diagonal + g * min(M, N) + d`` at group ``g``, row = column = ``d`` of tile ``t``); the
    last tile is padded with +0 cases."""
    n = a.shape[0]
    if a.shape[1] != h.k or b.shape[1] != h.k:
        raise ValueError(f"{h.name} takes K={h.k}, got {a.shape[1]} lanes")
    per = h.diagonal
    count = -(-n // per)
    side = min(h.m, h.n)
    pad = count * per - n
    a = np.concatenate([np.asarray(a, np.uint64), np.zeros((pad, h.k), np.uint64)])
    b = np.concatenate([np.asarray(b, np.uint64), np.zeros((pad, h.k), np.uint64)])
    c = np.concatenate([np.asarray(c, np.uint64), np.zeros(pad, np.uint64)])
    shape = (count, h.groups, side)
    ta = np.zeros((count, h.groups, h.m, h.k), np.uint64)
    tb = np.zeros((count, h.groups, h.k, h.n), np.uint64)
    tc = np.zeros((count, h.groups, h.m, h.n), np.uint64)
    d = np.arange(side)
    ta[:, :, d, :] = a.reshape(*shape, h.k)
    tb[:, :, :, d] = b.reshape(*shape, h.k).transpose(0, 1, 3, 2)
    tc[:, :, d, d] = c.reshape(shape)
    return Tiles(ta, tb, tc)


def diagonal_words(h: Harness, d_image: np.ndarray, n: int) -> np.ndarray:
    """The ``n`` case results (``uint32``) read back from the diagonals of a D image."""
    side = min(h.m, h.n)
    d = np.arange(side)
    words = d_words(h, d_image)[:, :, d, d]
    return words.reshape(-1)[:n].astype(np.uint32)
