"""Which module computes which family, and the checked entry point.

Each datapath record (:class:`~tcspec.proofs.rulebook.names.Datapath`) names
its family (``window``, ``integer``, ``block``, ``sparse``, ``fused-dot``,
``fused-dot-block``, ``fma-chain``, ``cdna3-rd``, ``pairwise-tree``). A family
function has the signature :data:`FamilyFn`: ``(ops, record, words) ->
Result``, with ``words`` already checked against ``layout(record.name)``.

A family module plugs in either way:

- it defines ``FAMILIES: dict[str, FamilyFn]`` (family key -> function) and
  sits at one of the module names :data:`FAMILY_MODULES` lists for that family
  (imported on first use); or
- it calls :func:`register` (at import, or from anywhere before use).

A family with no function and no importable module raises
``NotImplementedError`` naming the datapath, the family and the module.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping

from tcspec.spec.bitvec import BV, Ops

from .names import (
    BLOCK,
    CDNA3_RD,
    FAMILIES,
    FMA_CHAIN,
    FUSED_DOT,
    FUSED_DOT_BLOCK,
    INTEGER,
    PAIRWISE_TREE,
    SPARSE,
    WINDOW,
    Datapath,
    layout,
    parse,
)
from .result import Result

FamilyFn = Callable[[Ops, Datapath, Mapping[str, BV]], Result]

FAMILY_MODULES: dict[str, tuple[str, ...]] = {
    WINDOW: ("window",),
    INTEGER: ("integer",),
    SPARSE: ("sparse",),
    BLOCK: ("block",),
    FUSED_DOT: ("nvidia",),
    FUSED_DOT_BLOCK: ("nvidia",),
    FMA_CHAIN: ("fma", "amd"),
    CDNA3_RD: ("cdna3", "amd"),
    PAIRWISE_TREE: ("pairwise", "amd"),
}
"""Module names (inside this package) tried, in order, for each family."""

_REGISTERED: dict[str, FamilyFn] = {}


def register(family: str, fn: FamilyFn) -> None:
    """Make ``fn`` the function of ``family`` (one of ``names.FAMILIES``)."""
    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}")
    _REGISTERED[family] = fn


def family_function(rec: Datapath) -> FamilyFn:
    """The function computing ``rec``'s family (NotImplementedError if none is there)."""
    family = rec.family
    if family in _REGISTERED:
        return _REGISTERED[family]
    package = __name__.rsplit(".", 1)[0]
    tried = []
    for module_name in FAMILY_MODULES[family]:
        full = f"{package}.{module_name}"
        tried.append(full)
        try:
            module = importlib.import_module(full)
        except ModuleNotFoundError as exc:
            if exc.name == full:
                continue
            raise
        if family in _REGISTERED:
            return _REGISTERED[family]
        fn = getattr(module, "FAMILIES", {}).get(family)
        if fn is not None:
            _REGISTERED[family] = fn
            return fn
    raise NotImplementedError(
        f"datapath {rec.name!r}: family {family!r} has no module yet "
        f"(expected {' or '.join(tried)})"
    )


def check_words(ops: Ops, rec: Datapath, words: Mapping[str, BV]) -> dict[str, BV]:
    """``words`` checked against ``layout(rec.name)``: exactly those names, those widths,
    bit-vectors of ``ops``. ValueError naming the problem otherwise."""
    if not isinstance(words, Mapping):
        raise ValueError(f"{rec.name}: words must be a mapping of name -> BV, "
                         f"got {type(words).__name__}")
    want = layout(rec.name)
    wanted = dict(want)
    missing = [n for n, _ in want if n not in words]
    extra = sorted(str(n) for n in words if n not in wanted)
    if missing:
        raise ValueError(f"{rec.name}: missing input word(s) {', '.join(missing)}")
    if extra:
        raise ValueError(f"{rec.name}: unexpected input word(s) {', '.join(extra)}")
    out = {}
    for n, width in want:
        value = words[n]
        if not isinstance(value, BV):
            raise ValueError(f"{rec.name}: word {n} must be a BV, got {type(value).__name__}")
        if value.ops is not ops:
            raise ValueError(f"{rec.name}: word {n} belongs to backend {value.ops.name}, "
                             f"not {ops.name}")
        if value.width != width:
            raise ValueError(f"{rec.name}: word {n} must be {width} bits, got {value.width}")
        out[n] = value
    return out


def dispatch(ops: Ops, name: str, words: Mapping[str, BV]) -> Result:
    """D of datapath ``name`` on checked ``words`` (the body of ``reference_dot``)."""
    rec = parse(name)
    checked = check_words(ops, rec, words)
    result = family_function(rec)(ops, rec, checked)
    if result.word.width != rec.output_bits:  # pragma: no cover - a family bug
        raise AssertionError(f"{name}: family returned {result.word.width} bits, "
                             f"not {rec.output_bits}")
    return result
