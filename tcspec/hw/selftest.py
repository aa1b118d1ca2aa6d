"""`tcspec hw selftest`: check every operand layout on the device before any word is trusted.

Per harness, every element of every tile is compared (the whole M x N tile,
not only the diagonal):

- **A lane k** (one tile per k): A nonzero only in column k (a different
  short value per row), B nonzero everywhere, C = +0: D[i][j] = A[i][k] B[k][j];
- **B lane k**, the reverse: B nonzero only in row k;
- **C**: A = B = +0 and C a different short value in every element (D = C),
  and C one-hot at [i][i] for each i;
- **diagonal placement**: one random full tile (finite words), whose M x N
  results must equal the same cases run one per diagonal slot.

"Short" values have at most 3 significant bits and exponents within +-2, so
every product and every sum above is exact in F32 and F16: the expected
words do not depend on the accumulation rules under test (they are computed
by the specification all the same). Scale bytes and sparse metadata vary
alone in their own patterns once a harness packs them (no packed harness has
them yet: :attr:`Harness.packed`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from tcspec.hw.device import Device
from tcspec.hw.pack import Tiles, d_words, diagonal_tiles, diagonal_words, images
from tcspec.hw.table import Harness, descriptor_of
from tcspec.ref.run import run_batch
from tcspec.spec.descriptor import Descriptor
from tcspec.spec.formats import FORMATS, FloatFormat


@dataclass
class Result:
    """One harness's self-test: elements compared, and the patterns that failed."""

    harness: Harness
    elements: int = 0
    failures: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.elements > 0 and not self.failures


def short_words(fmt: str, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Nonzero container words of ``fmt`` with <= 3 significant bits and |exponent| <= 2
    (integers: 1..7, signed when the format is)."""
    if fmt == "s32":
        values = rng.integers(-7, 8, size=shape, dtype=np.int64)
        return (values & 0xFFFFFFFF).astype(np.uint64)
    spec = FORMATS[fmt]
    if not isinstance(spec, FloatFormat):
        values = rng.integers(1, 8, size=shape, dtype=np.int64)
        if fmt.startswith("s"):
            values *= rng.choice(np.array([-1, 1]), size=shape)
        return (values & 0xFF).astype(np.uint64)
    lo, hi = max(1, spec.bias - 2), min(spec.bias + 2, spec.exp_max_field - 1)
    exp = rng.integers(lo, hi + 1, size=shape, dtype=np.uint64)
    top = min(2, spec.frac_bits)
    frac = rng.integers(0, 1 << top, size=shape, dtype=np.uint64) << np.uint64(
        spec.frac_bits - top)
    word = (exp << np.uint64(spec.frac_bits) | frac) << np.uint64(spec.cleared_bits)
    if spec.signed:
        word |= rng.integers(0, 2, size=shape, dtype=np.uint64) << np.uint64(
            spec.container_bits - 1)
    return word


def model_words(desc: Descriptor, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The specification's words for cases ``a[n, k]``, ``b[n, k]``, ``c[n]``; a K below
    the datapath's is padded with +0 lanes (a +0 product changes no candidate's word)."""
    n, k = a.shape
    pad = np.zeros((n, desc.k - k), dtype=np.uint64)
    a, b = np.concatenate([a, pad], axis=1), np.concatenate([b, pad], axis=1)
    columns = [a[:, i] for i in range(desc.k)] + [b[:, i] for i in range(desc.k)] + [c]
    return run_batch(desc, columns, n)


def tile_cases(tiles: Tiles) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (A row i, B column j, C[i][j]) case of every tile, in [t, g, i, j] order."""
    t, g, m, k = tiles.a.shape
    n = tiles.b.shape[3]
    a = np.broadcast_to(tiles.a[:, :, :, None, :], (t, g, m, n, k)).reshape(-1, k)
    b = np.broadcast_to(tiles.b.transpose(0, 1, 3, 2)[:, :, None, :, :], (t, g, m, n, k))
    return a, b.reshape(-1, k), tiles.c.reshape(-1)


def patterns(h: Harness, rng: np.random.Generator) -> list[tuple[str, Tiles]]:
    """The one-hot, C and placement tiles of the self-test (module docstring)."""
    g, m, n, k = h.groups, h.m, h.n, h.k
    zero_a = np.zeros((1, g, m, k), np.uint64)
    zero_b = np.zeros((1, g, k, n), np.uint64)
    zero_c = np.zeros((1, g, m, n), np.uint64)
    out = []
    for lane in range(k):
        a = zero_a.copy()
        a[..., lane] = short_words(h.a_format, rng, (1, g, m))
        out.append((f"A lane {lane}", Tiles(a, short_words(h.b_format, rng, zero_b.shape),
                                            zero_c)))
        b = zero_b.copy()
        b[:, :, lane, :] = short_words(h.b_format, rng, (1, g, n))
        out.append((f"B lane {lane}", Tiles(short_words(h.a_format, rng, zero_a.shape), b,
                                            zero_c)))
    out.append(("C everywhere", Tiles(zero_a, zero_b, short_words(h.c_format, rng,
                                                                   zero_c.shape))))
    for i in range(min(m, n)):
        c = zero_c.copy()
        c[:, :, i, i] = short_words(h.c_format, rng, (1, g))
        out.append((f"C one-hot [{i}][{i}]", Tiles(zero_a, zero_b, c)))
    return out


def _join(tiles: Sequence[Tiles]) -> Tiles:
    return Tiles(*(np.concatenate([getattr(t, name) for t in tiles]) for name in "abc"))


def run_tiles(device: Device, h: Harness, tiles: Tiles) -> np.ndarray:
    """D words ``[t, g, M, N]`` of full tiles run on ``device``."""
    return d_words(h, device.launch(h, images(h, tiles), tiles.count))


def run_diagonal(device: Device, h: Harness, a: np.ndarray, b: np.ndarray,
                 c: np.ndarray) -> np.ndarray:
    """Results of cases run one per diagonal slot on ``device``."""
    tiles = diagonal_tiles(h, a, b, c)
    return diagonal_words(h, device.launch(h, images(h, tiles), tiles.count), a.shape[0])


def selftest(device: Device, h: Harness, seed: int = 0) -> Result:
    """The self-test of one packed harness on ``device``."""
    desc = descriptor_of(h)
    if desc is None:
        raise ValueError(f"{h.name} has no packed layout to test")
    rng = np.random.default_rng([seed, 21])
    result = Result(h)
    named = patterns(h, rng)
    joined = _join([tiles for _, tiles in named])
    observed = run_tiles(device, h, joined)
    expected = model_words(desc, *tile_cases(joined)).reshape(observed.shape)
    result.elements += observed.size
    for index, (label, _) in enumerate(named):
        wrong = np.argwhere(observed[index] != expected[index])
        if wrong.size:
            g, i, j = (int(x) for x in wrong[0])
            result.failures.append(
                f"{label}: {len(wrong)} of {observed[index].size} elements differ, first "
                f"D[{g}][{i}][{j}] = 0x{int(observed[index][g, i, j]):X}, expected "
                f"0x{int(expected[index][g, i, j]):X}")
    from tcspec.campaign import operand_words

    shape = (1, h.groups)
    c_shape = (*shape, h.m, h.n)
    full = Tiles(operand_words(rng, h.a_format, "finite", (*shape, h.m, h.k)),
                 operand_words(rng, h.b_format, "finite", (*shape, h.k, h.n)),
                 rng.integers(0, 1 << 32, size=c_shape, dtype=np.uint64) if h.c_format == "s32"
                 else operand_words(rng, h.c_format, "finite", c_shape))
    tile_d = run_tiles(device, h, full).reshape(-1)
    diagonal_d = run_diagonal(device, h, *tile_cases(full))
    result.elements += tile_d.size
    wrong = np.flatnonzero(tile_d != diagonal_d)
    if wrong.size:
        result.failures.append(f"random full tile vs diagonal placement: {wrong.size} of "
                               f"{tile_d.size} elements differ (first at flat index "
                               f"{int(wrong[0])})")
    return result
