"""Test campaigns: seeded case generation (``tcspec gen``) and columnar vector files.

Cases are drawn per row from one of three categories (SEMANTICS.md section
1): ``raw`` (any word), ``finite`` (containers that decode finite, junk kept
in ignored bits) and ``edge`` (zeros, extremes, one, infinities, NaNs, and
lanes drawn from a small per-row pool of edge words and their negations, so
cancellations and ties meet). The expected word comes from the
specification on its fastest lowering. Rows are generated in chunks of
:data:`CHUNK_ROWS`; chunk ``i`` draws from NumPy's PCG64 seeded ``[seed, i]``,
so the same arguments give the same bytes whether the chunks are written in
one process, on ``--jobs`` processes or on a Dask cluster.

Two formats: the shared JSON line format (:mod:`ref.vectorfiles`), and a
columnar one for millions of cases: a directory of ``.npy`` columns
(``a``/``b`` ``uint32[N, K]``, ``c``/``expected`` ``uint32[N]``,
``scale_a``/``scale_b`` ``uint8[N, blocks]``, ``metadata`` ``uint32[N,
words]``) plus ``descriptor.json``. Columns are read in chunks straight from
the file (never unpickled, never wholly in memory).
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import itertools
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from tcspec.outputs import atomic_paths
from tcspec.processes import pool_map
from tcspec.ref.inputs import UNIT_SCALE, _check_metadata_batch
from tcspec.ref.run import run_rows
from tcspec.ref.vectorfiles import Record
from tcspec.spec.candidates import candidate_named
from tcspec.spec.catalog import is_specified, lookup
from tcspec.spec.descriptor import Descriptor, resolve
from tcspec.spec.formats import FORMATS, FloatFormat, IntFormat
from tcspec.spec.sparse import LEGAL_SELECTORS
from tcspec.validate import (
    FIRST_MISMATCHES,
    Mismatch,
    Report,
    check_file,
    check_files,
    print_bad_lines,
    print_report,
    report_json,
)
from tcspec.words import EXIT_MISMATCH, EXIT_USAGE, ProgressLine, UsageError, hex_word

CATEGORIES = ("raw", "finite", "edge")
COLUMNS_FORMAT = "tcspec-columns"
COLUMNS_VERSION = 1
DESCRIPTOR_FILE = "descriptor.json"
PROVENANCE = "tcspec gen"
CHUNK_ROWS = 262_144
"""Rows generated or checked at a time."""
MAX_DESCRIPTOR_BYTES = 1 << 16
DASK_TIMEOUT = 10
"""Seconds to wait for a Dask scheduler."""

SCALE_NAN = {"ue8m0": 0xFF, "ue4m3": 0x7F}
_U32 = np.uint64(0xFFFFFFFF)


def _field_word(fmt: FloatFormat, negative: int, exp: int, frac: int) -> int:
    word = (exp << (fmt.cleared_bits + fmt.frac_bits)) | (frac << fmt.cleared_bits)
    if fmt.signed:
        word |= negative << (fmt.container_bits - 1)
    return word


def edge_pool(fmt: FloatFormat) -> list[int]:
    """Container words at the edges of ``fmt`` (SEMANTICS.md section 1)."""
    top_frac = (1 << fmt.frac_bits) - 1
    max_exp = fmt.exp_max_field - (1 if fmt.specials == "ieee" else 0)
    max_frac = top_frac - (1 if fmt.specials == "max_nan" and max_exp == fmt.exp_max_field
                           else 0)
    one_exp = fmt.bias
    pool = []
    for neg in (0, 1) if fmt.signed else (0,):
        pool += [_field_word(fmt, neg, 0, 0),
                 _field_word(fmt, neg, max_exp, max_frac)]
        if one_exp <= max_exp:
            pool.append(_field_word(fmt, neg, one_exp, 0))
        if fmt.frac_bits:
            pool += [_field_word(fmt, neg, 0, 1), _field_word(fmt, neg, 0, top_frac)]
        pool.append(_field_word(fmt, neg, 1, 0))
        if fmt.specials == "ieee":
            pool += [_field_word(fmt, neg, fmt.exp_max_field, 0),
                     _field_word(fmt, neg, fmt.exp_max_field, 1)]
            if fmt.cleared_bits:
                pool.append(_field_word(fmt, neg, fmt.exp_max_field, 0) | 1)
        if fmt.specials == "max_nan":
            pool.append(_field_word(fmt, neg, fmt.exp_max_field, top_frac))
    return sorted(set(pool))


INT_EDGES = (0, 1, 0x7F, 0x80, 0xFF)
S32_EDGES = (0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x7FFFFF00, 0x80000100)


def _finite(fmt: FloatFormat, words: np.ndarray) -> np.ndarray:
    """``words`` with every non-finite container made finite by clearing its exponent's top
    bit (junk above the container and in cleared bits is kept)."""
    if fmt.specials == "none":
        return words
    shift = fmt.cleared_bits + fmt.frac_bits
    exp = (words >> np.uint64(shift)) & np.uint64(fmt.exp_max_field)
    bad = exp == fmt.exp_max_field
    if fmt.specials == "max_nan":
        frac = (words >> np.uint64(fmt.cleared_bits)) & np.uint64((1 << fmt.frac_bits) - 1)
        bad &= frac == (1 << fmt.frac_bits) - 1
    top = np.uint64(1 << (shift + fmt.exp_bits - 1))
    return np.where(bad, words & ~top, words)


def _edge_words(rng: np.random.Generator, pool: Sequence[int], container: int,
                shape: tuple[int, ...]) -> np.ndarray:
    words = rng.choice(np.array(pool, dtype=np.uint64), size=shape)
    if container < 32:
        junk = rng.integers(0, 1 << (32 - container), size=shape, dtype=np.uint64)
        words |= junk << np.uint64(container)
    return words


def operand_words(rng: np.random.Generator, name: str, category: str,
                  shape: tuple[int, ...]) -> np.ndarray:
    """Raw 32-bit words for format ``name`` of one category (``uint64`` array)."""
    fmt = FORMATS[name]
    raw = rng.integers(0, 1 << 32, size=shape, dtype=np.uint64)
    if isinstance(fmt, IntFormat):
        if category != "edge":
            return raw
        return _edge_words(rng, INT_EDGES, 8, shape)
    if category == "raw":
        return raw
    finite = _finite(fmt, raw)
    if category == "finite":
        return finite
    edge = _edge_words(rng, edge_pool(fmt), fmt.container_bits, shape)
    return np.where(rng.random(shape) < 0.6, edge, finite)


def _lane_pools(rng: np.random.Generator, name: str, shape: tuple[int, int]) -> np.ndarray:
    """Per row, lanes drawn from two edge words and their negations (cancellations)."""
    fmt = FORMATS[name]
    pool = operand_words(rng, name, "edge", (shape[0], 2))
    pick = rng.integers(0, 2, size=shape)
    words = np.take_along_axis(pool, pick, axis=1)
    if isinstance(fmt, FloatFormat) and fmt.signed:
        flip = rng.integers(0, 2, size=shape, dtype=np.uint64)
        words ^= flip << np.uint64(fmt.container_bits - 1)
    return words


def _c_words(rng: np.random.Generator, desc: Descriptor, category: str,
             rows: int) -> np.ndarray:
    if desc.d_type != "s32":
        return operand_words(rng, desc.d_type, category, (rows,))
    if category != "edge":
        return rng.integers(0, 1 << 32, size=rows, dtype=np.uint64)
    return rng.choice(np.array(S32_EDGES, dtype=np.uint64), size=rows)


def _scales(rng: np.random.Generator, scaling: str, category: str,
            shape: tuple[int, int]) -> np.ndarray:
    raw = rng.integers(0, 256, size=shape, dtype=np.uint64)
    if category == "raw":
        return raw
    nan = SCALE_NAN[scaling]
    finite = np.where(raw == nan, raw ^ np.uint64(1), raw)
    if category == "finite":
        return finite
    unit = UNIT_SCALE[scaling]
    pool = [unit, 0x00, 0x01, nan, unit + 1, unit - 1, unit + 5, unit - 9]
    pool += [0xFE, 0x10, 0xE0] if scaling == "ue8m0" else [0x7E, 0x08, 0xB8, 0x02]
    edge = rng.choice(np.array(pool, dtype=np.uint64), size=shape)
    return np.where(rng.random(shape) < 0.5, edge, finite)


def _metadata(rng: np.random.Generator, rule: str, shape: tuple[int, int]) -> np.ndarray:
    legal = np.array(LEGAL_SELECTORS[rule], dtype=np.uint64)
    nibbles = rng.choice(legal, size=(*shape, 8))
    return (nibbles << (np.arange(8, dtype=np.uint64) * np.uint64(4))).sum(axis=2,
                                                                            dtype=np.uint64)


@dataclass
class Cases:
    """A block of cases as arrays: ``a``/``b`` ``[n, K]``, ``c`` ``[n]``, scales, metadata,
    and (once computed) ``expected``."""

    desc: Descriptor
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    scale_a: np.ndarray
    scale_b: np.ndarray
    metadata: np.ndarray
    expected: np.ndarray | None = None

    @property
    def rows(self) -> int:
        return int(self.c.shape[0])

    def results(self) -> np.ndarray:
        """The specification's result words of every case, the arrays read in place
        (:func:`ref.run.run_rows`)."""
        desc = self.desc
        return run_rows(desc, self.a, self.b, self.c,
                        self.scale_a if desc.scaling else None,
                        self.scale_b if desc.scaling else None,
                        self.metadata if desc.sparse else None)


def generate(desc: Descriptor, rows: int, mix: Sequence[str], rng: np.random.Generator,
             first: int = 0) -> Cases:
    """``rows`` cases of ``desc`` numbered from ``first``; row ``i`` has category
    ``mix[i % len(mix)]``."""
    k = desc.k
    scales = desc.scale_count if desc.scaling else 0
    a = np.zeros((rows, k), dtype=np.uint64)
    b = np.zeros((rows, k), dtype=np.uint64)
    c = np.zeros(rows, dtype=np.uint64)
    scale_a = np.zeros((rows, scales), dtype=np.uint64)
    scale_b = np.zeros((rows, scales), dtype=np.uint64)
    for index, category in enumerate(mix):
        picked = np.arange((index - first) % len(mix), rows, len(mix))
        n = picked.size
        a[picked] = operand_words(rng, desc.a_format, category, (n, k))
        b[picked] = operand_words(rng, desc.b_format, category, (n, k))
        if category == "edge":
            pooled = rng.random(n) < 0.5
            a[picked[pooled]] = _lane_pools(rng, desc.a_format, (int(pooled.sum()), k))
            b[picked[pooled]] = _lane_pools(rng, desc.b_format, (int(pooled.sum()), k))
        c[picked] = _c_words(rng, desc, category, n)
        if scales:
            scale_a[picked] = _scales(rng, desc.scaling, category, (n, scales))  # type: ignore[arg-type]
            scale_b[picked] = _scales(rng, desc.scaling, category, (n, scales))  # type: ignore[arg-type]
    metadata = (_metadata(rng, desc.sparse_chunk[1], (rows, desc.metadata_words))  # type: ignore[index]
                if desc.sparse else np.zeros((rows, 0), dtype=np.uint64))
    return Cases(desc, a, b, c, scale_a, scale_b, metadata)


def parse_mix(text: str) -> list[str]:
    """``raw,finite,edge`` -> the categories, each checked."""
    mix = [part.strip() for part in text.split(",") if part.strip()]
    if not mix:
        raise ValueError("--mix needs at least one of raw, finite, edge")
    for part in mix:
        if part not in CATEGORIES:
            raise ValueError(f"unknown case category {part!r} (known: {', '.join(CATEGORIES)})")
    return mix


@dataclass(frozen=True)
class GenerationPlan:
    """``cases`` rows of ``datapath`` in chunks of ``chunk_rows``. Chunk ``i`` draws from its
    own PCG64 stream seeded ``[seed, i]``, so the bytes written do not depend on which
    process or machine generates which chunk."""

    datapath: str
    cases: int
    mix: tuple[str, ...]
    seed: int
    chunk_rows: int

    @property
    def chunks(self) -> int:
        return -(-self.cases // self.chunk_rows)

    def block(self, index: int) -> Cases:
        """Chunk ``index`` with its expected words."""
        desc = lookup(self.datapath).descriptor
        first = index * self.chunk_rows
        rows = min(self.chunk_rows, self.cases - first)
        block = generate(desc, rows, self.mix, np.random.default_rng([self.seed, index]), first)
        block.expected = block.results()
        return block


def _json_lines(block: Cases, seed: int, first: int) -> Iterator[str]:
    desc = block.desc
    fields = desc.fields()
    a, b, c = block.a.tolist(), block.b.tolist(), block.c.tolist()
    sa, sb, meta = block.scale_a.tolist(), block.scale_b.tolist(), block.metadata.tolist()
    expected = block.expected.tolist()  # type: ignore[union-attr]
    for i in range(block.rows):
        yield json.dumps({
            "datapath": desc.name, "descriptor": fields, "a": a[i], "b": b[i], "c": c[i],
            "scale_a": sa[i] if desc.scaling else None,
            "scale_b": sb[i] if desc.scaling else None,
            "sparse_metadata": meta[i] if desc.sparse else None,
            "expected": expected[i], "source": PROVENANCE, "name": f"gen-{seed}-{first + i}",
        }, separators=(",", ":")) + "\n"


def _write_lines(handle: BinaryIO, plan: GenerationPlan, index: int, gz: bool) -> int:
    """Chunk ``index`` as JSON lines; for ``.gz`` one gzip member per chunk (mtime 0, no
    name), so the members concatenate to the same valid gzip file (RFC 1952 section 2.2)
    whoever compressed them."""
    block = plan.block(index)
    lines = _json_lines(block, plan.seed, index * plan.chunk_rows)
    with (gzip.GzipFile(filename="", mode="wb", fileobj=handle, mtime=0) if gz
          else contextlib.nullcontext(handle)) as sink:
        while batch := list(itertools.islice(lines, 4096)):
            sink.write("".join(batch).encode())
    return block.rows


def _write_part(plan: GenerationPlan, index: int, parts: str, gz: bool) -> int:
    """Chunk ``index`` as the part file ``parts/INDEX`` (a worker's share of a line file)."""
    with open(Path(parts) / f"{index:06d}", "wb") as handle:
        return _write_lines(handle, plan, index, gz)


def _column_shapes(desc: Descriptor, cases: int) -> dict[str, tuple[str, tuple[int, ...]]]:
    shapes = {"a": ("uint32", (cases, desc.k)), "b": ("uint32", (cases, desc.k)),
              "c": ("uint32", (cases,)), "expected": ("uint32", (cases,))}
    if desc.scaling:
        shapes["scale_a"] = ("uint8", (cases, desc.scale_count))
        shapes["scale_b"] = ("uint8", (cases, desc.scale_count))
    if desc.sparse:
        shapes["metadata"] = ("uint32", (cases, desc.metadata_words))
    return shapes


def _row_bytes(dtype: str, shape: tuple[int, ...]) -> int:
    return np.dtype(dtype).itemsize * int(np.prod(shape[1:], dtype=np.int64))


def _fill_columns(plan: GenerationPlan, index: int, path: str, offsets: dict[str, int]) -> int:
    """Write chunk ``index`` into its rows of the preallocated ``.npy`` columns in ``path``
    (data of column ``name`` starts at byte ``offsets[name]``)."""
    block = plan.block(index)
    parts = {"a": block.a, "b": block.b, "c": block.c, "expected": block.expected,
             "scale_a": block.scale_a, "scale_b": block.scale_b, "metadata": block.metadata}
    for name, (dtype, shape) in _column_shapes(block.desc, plan.cases).items():
        with open(Path(path) / f"{name}.npy", "r+b") as handle:
            handle.seek(offsets[name] + index * plan.chunk_rows * _row_bytes(dtype, shape))
            np.ascontiguousarray(parts[name], dtype=dtype).tofile(handle)
    return block.rows


def _dask_client(address: str) -> Any:
    """A ``distributed.Client`` for the scheduler at ``address`` (optional extra ``dist``)."""
    try:
        from distributed import Client
    except ImportError:
        raise ValueError("--dask needs dask.distributed: pip install 'tcspec[dist]'") from None
    try:
        return Client(address, timeout=DASK_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ValueError(f"cannot reach the Dask scheduler at {address}: {exc}") from None


@dataclass
class _ChunkRunner:
    """Runs ``function(plan, index, *extra)`` for every chunk and yields the results in chunk
    order: in this process, on ``jobs`` processes, or on a Dask ``client``."""

    plan: GenerationPlan
    jobs: int
    client: Any = None
    running: list[Any] = field(default_factory=list)

    @property
    def parallel(self) -> bool:
        return self.client is not None or (self.jobs > 1 and self.plan.chunks > 1)

    def run(self, function: Callable[..., int], *extra: Any) -> Iterator[int]:
        """The results of every chunk, in order (:meth:`close` stops the workers)."""
        results = self._run(function, *extra)
        self.running.append(results)
        return results

    def close(self) -> None:
        """Stop every run still going: pending chunks cancelled, workers terminated."""
        while self.running:
            self.running.pop().close()

    def _run(self, function: Callable[..., int], *extra: Any) -> Iterator[int]:
        indices = range(self.plan.chunks)
        if not self.parallel:
            for index in indices:
                yield function(self.plan, index, *extra)
            return
        from tcspec.ref.kernels import fast_kernel

        fast_kernel(lookup(self.plan.datapath).descriptor, self.plan.cases)
        if self.client is not None:
            futures = [self.client.submit(function, self.plan, index, *extra, pure=False)
                       for index in indices]
            for future in futures:
                yield future.result()
            return
        yield from pool_map(min(self.jobs, self.plan.chunks), function,
                            itertools.repeat(self.plan), indices,
                            *[itertools.repeat(value) for value in extra])


SAMPLE_ROWS = 512
"""Rows generated to measure a JSON line (and its gzip ratio) for :func:`output_bytes`."""
DISK_MARGIN = 1.05
"""An output is refused when its estimated size times this exceeds the free disk."""


def output_bytes(plan: GenerationPlan, file_format: str, gz: bool) -> int:
    """Estimated size of a ``gen`` output: exact for ``npy-dir`` (headers and columns);
    for JSON lines the mean length of :data:`SAMPLE_ROWS` generated lines (expected words
    at their widest) times the cases, gzip-compressed as one chunk member for ``.gz``."""
    desc = lookup(plan.datapath).descriptor
    if file_format == "npy-dir":
        return sum(128 + plan.cases * _row_bytes(dtype, shape)
                   for dtype, shape in _column_shapes(desc, plan.cases).values()) + 4096
    rows = min(SAMPLE_ROWS, plan.cases)
    block = generate(desc, rows, plan.mix, np.random.default_rng([plan.seed, 0]))
    block.expected = np.full(rows, 0xFFFFFFFF, dtype=np.uint64)
    text = "".join(_json_lines(block, plan.seed, plan.cases)).encode()
    size = len(gzip.compress(text, mtime=0)) if gz else len(text)
    return -(-size * plan.cases // rows)


def _size_text(count: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count:.0f} bytes"


def check_disk(plan: GenerationPlan, path: Path, file_format: str) -> None:
    """``ValueError`` when the output would not fit the free space of its file system
    (:func:`output_bytes` times :data:`DISK_MARGIN`), with both figures."""
    needed = output_bytes(plan, file_format, path.suffix == ".gz")
    try:
        free = shutil.disk_usage(path.parent if str(path.parent) else ".").free
    except OSError:
        return
    if needed * DISK_MARGIN > free:
        raise ValueError(f"{path}: {plan.cases} cases of {plan.datapath} as {file_format} "
                         f"need about {_size_text(needed)}, but only {_size_text(free)} are "
                         f"free there; ask for fewer --cases (about "
                         f"{int(plan.cases * free / (needed * DISK_MARGIN))} fit)")


def generate_file(datapath: str, cases: int, out: str | Path, *, mix: Sequence[str] = CATEGORIES,
                  seed: int = 0, file_format: str = "jsonl",
                  progress: Callable[[int], None] | None = None, jobs: int = 1,
                  dask: str | None = None, force: bool = False) -> Path:
    """Write ``cases`` generated cases of ``datapath`` with expected words to ``out``, chunks
    spread over ``jobs`` processes or the Dask cluster at ``dask`` (whose workers must see
    ``out``: a shared file system). The bytes are the same either way. ``out`` appears only
    when every chunk is written, and an existing ``out`` is replaced only with ``force``
    (:mod:`tcspec.outputs`); an output that would not fit the free disk is refused before
    anything is written (:func:`check_disk`)."""
    desc = lookup(datapath).descriptor
    if not is_specified(desc):
        raise ValueError(f"datapath {desc.name} is not yet specified in this build")
    if cases < 1:
        raise ValueError(f"--cases must be at least 1, got {cases}")
    if jobs < 1:
        raise ValueError(f"--jobs must be at least 1, got {jobs}")
    if file_format not in ("jsonl", "npy-dir"):
        raise ValueError(f"unknown --format {file_format!r} (known: jsonl, npy-dir)")
    path = Path(out)
    plan = GenerationPlan(desc.name, cases, tuple(mix), seed, CHUNK_ROWS)
    columns = file_format == "npy-dir"
    if columns and path.suffix in (".jsonl", ".gz"):
        raise ValueError(f"--format npy-dir writes a directory, not {path.name} "
                         "(name a directory, or drop --format npy-dir)")
    if path.parent.is_dir():
        check_disk(plan, path, file_format)
    runner = None
    try:
        with atomic_paths([path], force=force, directory=columns) as (temp,):
            runner = _ChunkRunner(plan, jobs, _dask_client(dask) if dask else None)
            if columns:
                _write_columns(runner, temp, progress)
            else:
                _write_jsonl(runner, temp, progress, path.suffix == ".gz")
    except OSError as exc:
        shared = " (Dask workers must share this file system)" if dask else ""
        raise ValueError(f"cannot write {path}: {exc.strerror or exc}{shared}") from None
    finally:
        if runner is not None:
            runner.close()
            if runner.client is not None:
                runner.client.close()
    return path


def _tally(results: Iterator[int], progress: Callable[[int], None] | None) -> None:
    done = 0
    for rows in results:
        done += rows
        if progress:
            progress(done)


def _write_jsonl(runner: _ChunkRunner, path: Path,
                 progress: Callable[[int], None] | None, gz: bool) -> None:
    """Serially straight into ``path``; in parallel workers write ordered part files in a
    hidden directory beside it, appended here in order and removed (after the workers are
    stopped: an interrupted run's last worker may still be writing a part)."""
    plan = runner.plan
    with open(path, "wb") as handle:
        if not runner.parallel:
            _tally((_write_lines(handle, plan, i, gz) for i in range(plan.chunks)), progress)
            return
        parts = Path(tempfile.mkdtemp(prefix=f".{path.name}.parts-", dir=path.parent)).resolve()
        try:
            def appended() -> Iterator[int]:
                for index, rows in enumerate(runner.run(_write_part, str(parts), gz)):
                    part = parts / f"{index:06d}"
                    with open(part, "rb") as chunk:
                        shutil.copyfileobj(chunk, handle, 1 << 20)
                    part.unlink()
                    yield rows

            _tally(appended(), progress)
        finally:
            runner.close()
            shutil.rmtree(parts, ignore_errors=True)


def _write_columns(runner: _ChunkRunner, path: Path,
                   progress: Callable[[int], None] | None) -> None:
    """Headers and full-size columns written here, rows filled in place chunk by chunk;
    ``descriptor.json`` comes last, so an interrupted run leaves no readable directory."""
    plan = runner.plan
    desc = lookup(plan.datapath).descriptor
    shapes = _column_shapes(desc, plan.cases)
    offsets = {}
    for name, (dtype, shape) in shapes.items():
        with open(path / f"{name}.npy", "wb") as handle:
            np.lib.format.write_array_header_1_0(handle, {
                "descr": np.lib.format.dtype_to_descr(np.dtype(dtype)),
                "fortran_order": False, "shape": shape})
            offsets[name] = handle.tell()
            handle.truncate(offsets[name] + plan.cases * _row_bytes(dtype, shape))
    _tally(runner.run(_fill_columns, str(path.resolve()), offsets), progress)
    (path / DESCRIPTOR_FILE).write_text(json.dumps({
        "format": COLUMNS_FORMAT, "version": COLUMNS_VERSION, "datapath": desc.name,
        "descriptor": desc.fields(), "sparse": desc.sparse, "cases": plan.cases,
        "source": PROVENANCE, "seed": plan.seed, "mix": list(plan.mix),
        "chunk_rows": plan.chunk_rows,
        "columns": {name: {"file": f"{name}.npy", "dtype": dtype, "shape": list(shape)}
                    for name, (dtype, shape) in shapes.items()},
    }, indent=1) + "\n", encoding="utf-8")


# ------------------------------------------------------------------ reading


class _Column:
    """One ``.npy`` file read sequentially in row chunks (header checked, no pickle)."""

    def __init__(self, path: Path, dtype: str, shape: tuple[int, ...]) -> None:
        self.path = path
        try:
            self.handle: BinaryIO = open(path, "rb")  # noqa: SIM115 - closed by close()
            version = np.lib.format.read_magic(self.handle)
            header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                      else np.lib.format.read_array_header_2_0)
            found_shape, fortran, found_dtype = header(self.handle)
        except OSError as exc:
            raise ValueError(f"cannot read column {path.name}: {exc.strerror or exc}") from None
        except (ValueError, SyntaxError, TypeError, EOFError) as exc:
            raise ValueError(f"column {path.name} is not a valid .npy file: {exc}") from None
        if found_dtype.hasobject:
            raise ValueError(f"column {path.name} holds Python objects; refusing to unpickle")
        if found_dtype != np.dtype(dtype) or tuple(found_shape) != shape or fortran:
            raise ValueError(f"column {path.name} is {found_dtype}{list(found_shape)}"
                             f"{' (Fortran order)' if fortran else ''}, expected "
                             f"{dtype}{list(shape)}")
        self.row_items = int(np.prod(shape[1:], dtype=np.int64)) if len(shape) > 1 else 1
        self.dtype = found_dtype
        self.shape = shape
        start = self.handle.tell()
        needed = start + self.dtype.itemsize * self.row_items * shape[0]
        if os.fstat(self.handle.fileno()).st_size < needed:
            raise ValueError(f"column {path.name} is truncated")
        self.data_start = start

    def read(self, first: int, rows: int) -> np.ndarray:
        self.handle.seek(self.data_start + first * self.row_items * self.dtype.itemsize)
        data = np.fromfile(self.handle, dtype=self.dtype, count=rows * self.row_items)
        if data.size != rows * self.row_items:
            raise ValueError(f"column {self.path.name} is truncated")
        return data.reshape((rows, *self.shape[1:]))

    def close(self) -> None:
        self.handle.close()


@dataclass
class ColumnFile:
    """A columnar vector directory: its descriptor and case count."""

    path: Path
    desc: Descriptor
    cases: int
    shapes: dict[str, tuple[str, tuple[int, ...]]]


def is_column_dir(path: str | Path) -> bool:
    """A ``tcspec gen --format npy-dir`` directory (it has ``descriptor.json``)."""
    return Path(path).is_dir() and (Path(path) / DESCRIPTOR_FILE).exists()


def line_files(path: str | Path) -> list[Path]:
    """The vector line files (``*.jsonl``, ``*.jsonl.gz``) of a directory, sorted."""
    path = Path(path)
    return sorted([*path.glob("*.jsonl"), *path.glob("*.jsonl.gz")])


def open_columns(path: str | Path) -> ColumnFile:
    """Read and check ``descriptor.json`` of a columnar vector directory."""
    path = Path(path)
    info_path = path / DESCRIPTOR_FILE
    try:
        if info_path.stat().st_size > MAX_DESCRIPTOR_BYTES:
            raise ValueError(f"{info_path} is larger than {MAX_DESCRIPTOR_BYTES} bytes")
        info = json.loads(info_path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"{path} has no readable {DESCRIPTOR_FILE}: "
                         f"{exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise ValueError(f"{info_path} is not valid JSON: {exc}") from None
    if not isinstance(info, dict) or info.get("format") != COLUMNS_FORMAT:
        raise ValueError(f"{info_path} is not a {COLUMNS_FORMAT} descriptor")
    if info.get("version") != COLUMNS_VERSION:
        raise ValueError(f"{info_path}: unsupported version {info.get('version')!r}")
    fields, cases = info.get("descriptor"), info.get("cases")
    if not isinstance(fields, dict) or "a_format" not in fields:
        raise ValueError(f"{info_path}: descriptor must be an object with a_format")
    if isinstance(cases, bool) or not isinstance(cases, int) or cases < 0:
        raise ValueError(f"{info_path}: cases must be a count, got {cases!r}")
    try:
        desc = resolve(**fields, sparse=bool(info.get("sparse", False)))
    except TypeError as exc:
        raise ValueError(f"{info_path}: bad descriptor: {exc}") from None
    name = info.get("datapath", desc.name)
    if name != desc.name:
        raise ValueError(f"{info_path}: datapath {name!r} does not match its descriptor, "
                         f"which is {desc.name!r}")
    return ColumnFile(path, desc, cases, _column_shapes(desc, cases))


def _record(desc: Descriptor, block: Cases, i: int, row: int) -> Record:
    raw: dict[str, Any] = {
        "a": block.a[i].tolist(), "b": block.b[i].tolist(), "c": int(block.c[i]),
        "scale_a": block.scale_a[i].tolist() if desc.scaling else None,
        "scale_b": block.scale_b[i].tolist() if desc.scaling else None,
        "sparse_metadata": block.metadata[i].tolist() if desc.sparse else None,
    }
    return Record(row + 1, desc.name, desc, [], int(block.expected[i]),  # type: ignore[index]
                  f"row {row}", PROVENANCE, [], raw)


def check_range(path: str | Path, first: int, stop: int, keep: int = 10,
                progress: Callable[[int], None] | None = None) -> Report:
    """Check rows ``[first, stop)`` of a columnar vector directory, chunk by chunk."""
    info = open_columns(path)
    desc = info.desc
    report = Report()
    tally = report.tallies[desc.name]
    if not is_specified(desc):
        tally.cases = tally.unspecified = stop - first
        return report
    columns = {name: _Column(info.path / f"{name}.npy", dtype, shape)
               for name, (dtype, shape) in info.shapes.items()}
    try:
        empty = np.zeros((0, 0), dtype=np.uint32)
        width = 16 if desc.d_type == "f16" else 32
        for start in range(first, stop, CHUNK_ROWS):
            rows = min(CHUNK_ROWS, stop - start)
            got = {name: col.read(start, rows) for name, col in columns.items()}
            block = Cases(desc, got["a"], got["b"], got["c"],
                          got.get("scale_a", empty.reshape(rows, 0)),
                          got.get("scale_b", empty.reshape(rows, 0)),
                          got.get("metadata", empty.reshape(rows, 0)), got["expected"])
            if int(block.expected.max(initial=0)) >= 1 << width:  # type: ignore[union-attr]
                row = start + int(np.argmax(block.expected >= (1 << width)))
                raise ValueError(f"row {row}: expected is not a {width}-bit word")
            if desc.sparse:
                try:
                    _check_metadata_batch(desc, list(block.metadata.T.astype(np.uint64)), rows)
                except ValueError as exc:
                    raise ValueError(f"rows from {start}: {exc}") from None
            result = block.results()
            wrong = np.flatnonzero(result != block.expected)
            tally.cases += rows
            tally.mismatched += int(wrong.size)
            tally.passed += rows - int(wrong.size)
            for i in wrong[:max(0, keep - len(report.mismatches))].tolist():
                report.mismatches.append(
                    Mismatch(_record(desc, block, i, start + i), int(result[i])))
            if progress:
                progress(tally.cases)
    finally:
        for col in columns.values():
            col.close()
    return report


def _check_part(job: tuple[str, int, int, int]) -> Report:
    path, first, stop, keep = job
    return check_range(path, first, stop, keep)


def check_columns(path: str | Path, jobs: int = 1, keep: int = 10,
                  progress: Callable[[int], None] | None = None) -> Report:
    """Check a columnar vector directory, split over ``jobs`` processes when it is big."""
    info = open_columns(path)
    parts = max(1, min(jobs, -(-info.cases // CHUNK_ROWS)))
    if parts == 1 or not is_specified(info.desc):
        return check_range(path, 0, info.cases, keep, progress)

    from tcspec.ref.kernels import fast_kernel

    fast_kernel(info.desc, info.cases)
    bounds = [info.cases * i // parts for i in range(parts + 1)]
    report = Report()
    with contextlib.closing(pool_map(parts, _check_part, [
            (str(path), bounds[i], bounds[i + 1], keep) for i in range(parts)])) as results:
        for part in results:
            report.merge(part)
            if progress:
                progress(report.total.cases)
    del report.mismatches[keep:]
    return report


def check_on_dask(paths: Sequence[str | Path], address: str, keep: int = 10,
                  progress: Callable[[int], None] | None = None) -> Report:
    """Check vector files and columnar directories on the Dask cluster at ``address``:
    directories split into row ranges, line files one task each. Workers must see the
    same paths (a shared file system). Needs the optional extra ``dist``."""
    client = _dask_client(address)
    from distributed import as_completed

    report = Report()
    with client:
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        futures = []
        for name in paths:
            path = Path(name).resolve()
            if path.is_dir():
                cases = open_columns(path).cases
                parts = max(1, min(4 * workers, -(-cases // CHUNK_ROWS)))
                bounds = [cases * i // parts for i in range(parts + 1)]
                futures += [client.submit(check_range, str(path), bounds[i], bounds[i + 1],
                                          keep, pure=False) for i in range(parts)]
            else:
                futures.append(client.submit(check_file, str(path), pure=False))
        for future in as_completed(futures):
            report.merge(future.result())
            if progress:
                progress(report.total.cases)
    del report.mismatches[keep:]
    return report


def cmd_check(args: argparse.Namespace) -> int:
    """``tcspec check``: vector line files or columnar directories, here or on Dask."""
    candidate = candidate_named(args.model or "hardware")
    if args.dask:
        return _check_on_dask(args)
    status = 0
    reports = {}
    for name in args.files:
        path = Path(name)
        if path.is_dir() and not is_column_dir(path):
            files = line_files(path)
            if not files:
                raise UsageError(f"{name} is neither a columnar directory (no {DESCRIPTOR_FILE}) "
                                 "nor a directory of .jsonl/.jsonl.gz vector files")
            report = check_files(files, _file_progress(name), args.jobs or 1, candidate.name)
        elif path.is_dir():
            if args.model:
                raise UsageError(f"--model applies to vector line files, not to the "
                                 f"columnar directory {name}")
            report = check_columns(path, args.jobs or (os.cpu_count() or 1), FIRST_MISMATCHES,
                                   ProgressLine(name))
        elif not path.is_file():
            raise UsageError(f"no such vector file: {name}")
        else:
            try:
                report = check_file(path, progress=ProgressLine(name), model=candidate.name)
            except (OSError, EOFError) as exc:
                raise UsageError(f"cannot read {name}: {exc}") from None
        total = report.total
        if total.cases and total.skipped == total.cases:
            raise UsageError(f"model {candidate.name!r} applies to none of the {total.cases} "
                             f"lines of {name} (it applies to {candidate.applies_to})")
        if not total.cases:
            print_bad_lines(report.bad_lines)
            found = f" ({len(report.bad_lines)} malformed)" if report.bad_lines else ""
            print(f"tcspec: error: no usable vector line in {name}{found}", file=sys.stderr)
            status = status if status == EXIT_MISMATCH else EXIT_USAGE
            continue
        first = _explain_first(report, candidate.name) if args.explain_first else None
        if args.json:
            reports[name] = report_json(report)
            if first is not None:
                reports[name]["explain_first"] = first
            print_bad_lines(report.bad_lines)
        else:
            print(f"== {name}" + (f" against model {candidate.name}" if args.model else ""))
            print_report(report, name)
            _print_findings(report)
            if first is not None:
                print(f"\nthe first mismatch, line {first['line']} [{first['datapath']}]: "
                      f"observed {first['observed']}, {candidate.name} gives "
                      f"{first['model_word']}")
                print(first["explanation"])
                if first["diagnosis"]:
                    print(first["diagnosis"])
        if total.skipped:
            print(f"{total.skipped} line(s) skipped: model {candidate.name!r} does not apply to "
                  f"their datapath (it applies to {candidate.applies_to})")
        if report.mismatches:
            status = EXIT_MISMATCH
        elif report.bad_lines and status == 0:
            status = EXIT_USAGE
    if args.json:
        print(json.dumps({"files": reports, "model": candidate.name, "status": status},
                         indent=1))
    return status


def _explain_first(report: Report, model: str) -> dict[str, Any] | None:
    """The first mismatching line (by line number) explained stage by stage as ``model``
    runs it, and the candidate model that gives its observed word (``tcspec explain``)."""
    from tcspec.explain import explain, observed_word

    if not report.mismatches:
        return None
    first = min(report.mismatches, key=lambda m: m.record.line)
    rec = first.record
    d_type = rec.descriptor.d_type
    try:
        explanation = explain(rec.descriptor, rec.words, model).text()
        diagnosis = observed_word(rec.descriptor, rec.words, rec.expected, model)
    except (ValueError, NotImplementedError) as exc:
        explanation, diagnosis = f"(no stage explanation for {rec.datapath}: {exc})", ""
    return {"line": rec.line, "datapath": rec.datapath,
            "observed": hex_word(rec.expected, d_type), "model_word": hex_word(first.got, d_type),
            "explanation": explanation, "diagnosis": diagnosis}


def _print_findings(report: Report) -> None:
    """Hardware words that disagree with an architecture datapath's published model are
    findings about the model (SEMANTICS.md section 10), said as such."""
    found = [m for m in report.mismatches if m.record.descriptor.family == "arch"
             and str(m.record.raw.get("provenance", "")).lower() == "hardware"]
    if not found:
        return
    gpus = sorted({str(m.record.raw.get("gpu", "?")) for m in found})
    paths = sorted({m.record.datapath for m in found})
    print(f"finding: {len(found)} hardware word(s) ({', '.join(gpus)}) disagree with the "
          f"published model (MMA-Sim's rules) of {', '.join(paths)}: the model, not the "
          "word, is in question; `tcspec classify` names the candidates that survive")


def _file_progress(name: str) -> Callable[[int, int, Path, Report], None]:
    def progress(index: int, count: int, path: Path, part: Report) -> None:
        print(f"\r{name}: {index}/{count} files", end="" if index < count else "\n",
              file=sys.stderr, flush=True)
    return progress


def _check_on_dask(args: argparse.Namespace) -> int:
    if args.model:
        raise UsageError("--model and --dask cannot be combined")
    for name in args.files:
        if not Path(name).exists():
            raise UsageError(f"no such vector file: {name}")
    report = check_on_dask(args.files, args.dask, FIRST_MISMATCHES,
                           ProgressLine(f"dask {args.dask}"))
    if not report.total.cases:
        print_bad_lines(report.bad_lines)
        raise UsageError(f"no usable vector line in {', '.join(args.files)}")
    status = EXIT_MISMATCH if report.mismatches else EXIT_USAGE if report.bad_lines else 0
    if args.json:
        print_bad_lines(report.bad_lines)
        print(json.dumps({"files": {"dask": report_json(report)}, "status": status}, indent=1))
        return status
    print(f"== {', '.join(args.files)} on Dask {args.dask}")
    print_report(report, "the files")
    return status


def cmd_gen(args: argparse.Namespace) -> int:
    """``tcspec gen``: seeded cases with expected words, as JSON lines or ``npy-dir``."""
    if args.jobs is not None and args.dask:
        raise UsageError("--jobs and --dask cannot be combined")
    path = generate_file(args.datapath, args.cases, args.out, mix=parse_mix(args.mix),
                         seed=args.seed, file_format=args.format,
                         progress=ProgressLine(args.out, verb="written"),
                         jobs=(os.cpu_count() or 1) if args.jobs is None else args.jobs,
                         dask=args.dask, force=args.force)
    print(f"wrote {path}: {args.cases} cases of {args.datapath} ({args.format}, mix {args.mix}, "
          f"seed {args.seed})")
    return 0
