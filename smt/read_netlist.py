"""Read a combinational Yosys netlist (``write_json``) onto the ops protocol (``tcspec equiv``
with a Verilog implementation, issue 32).

The module, after ``proc; flatten; pmuxtree`` in Yosys, is a set of word-level cells of
Yosys's internal cell library (``$add``, ``$mux``, ``$shr``, ``$eq``, ...) wired bit by
bit. :func:`netlist_function` turns it into a callable ``(ops, words) -> BV``: over the
tracing ops a DAG for the equivalence engine, over the scalar ops an evaluation. Each cell
follows the cell library's rules for widths and signedness (operands extended to the
result width by their ``*_SIGNED`` parameter; comparisons at the wider operand; shifts by
an unsigned amount, a right shift reading the operand at its full width). Refused, by
cell name: state (flip-flops, latches, memories), division and power, and the formal and
print cells. Undefined constant bits (``x``, ``z``) are read as 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tcspec.spec.bitvec import BV, Bool, Ops


class NetlistError(ValueError):
    """A netlist this reader does not accept, naming the port or cell."""


STATEFUL = ("ff", "dlatch", "$sr", "$mem", "$fsm")
REFUSED = {"$div": "division", "$mod": "division", "$divfloor": "division",
           "$modfloor": "division", "$pow": "power", "$tribuf": "tri-state",
           "$anyconst": "free values", "$anyseq": "free values", "$allconst": "free values",
           "$allseq": "free values", "$assert": "formal", "$assume": "formal",
           "$cover": "formal", "$live": "formal", "$fair": "formal", "$print": "print",
           "$check": "check", "$specify2": "timing", "$specify3": "timing",
           "$specrule": "timing", "$lut": "LUT", "$sop": "sum of products"}
IGNORED = {"$scopeinfo"}

Bit = Any
"""A netlist bit: an int (a signal) or one of "0", "1", "x", "z"."""


@dataclass
class Port:
    name: str
    direction: str
    bits: list[Bit]


def _param(cell: Mapping[str, Any], name: str, default: int = 0) -> int:
    value = cell.get("parameters", {}).get(name)
    if value is None:
        return default
    if isinstance(value, int):
        return value
    text = str(value)
    return int(text, 2) if set(text) <= {"0", "1"} and text else int(text)


def module_of(netlist: Mapping[str, Any], top: str) -> Mapping[str, Any]:
    """Module ``top`` of a ``write_json`` netlist (NetlistError naming the ones there)."""
    modules = netlist.get("modules", {})
    if top not in modules:
        raise NetlistError(f"no module {top!r} (the design has: {', '.join(modules) or 'none'}"
                           "; --top NAME picks one)")
    return modules[top]


def ports_of(module: Mapping[str, Any]) -> list[Port]:
    return [Port(name, p["direction"], list(p["bits"]))
            for name, p in module.get("ports", {}).items()]


def netlist_function(module: Mapping[str, Any]):
    """The module as ``(ops, words) -> {output port: BV}`` (module docstring)."""
    cells = {name: cell for name, cell in module.get("cells", {}).items()
             if cell["type"] not in IGNORED}
    for name, cell in cells.items():
        kind = cell["type"]
        if any(s in kind for s in STATEFUL):
            raise NetlistError(f"the module is sequential: cell {name} is a {kind} "
                               "(a combinational module has no flip-flops, latches or "
                               "memories)")
        if kind in REFUSED:
            raise NetlistError(f"cell {name} ({kind}, {REFUSED[kind]}) is not supported")
        if not kind.startswith("$") or kind.startswith("$_"):
            raise NetlistError(f"cell {name} of type {kind} is not a word-level Yosys cell "
                               "(a module instance left after flatten?)")
        if kind not in CELLS:
            raise NetlistError(f"cell {name} of type {kind} is not supported")
    ports = ports_of(module)
    inputs = [p for p in ports if p.direction == "input"]
    outputs = [p for p in ports if p.direction == "output"]
    driver: dict[int, tuple[str, int]] = {}
    for name, cell in cells.items():
        for port, bits in cell["connections"].items():
            if cell.get("port_directions", {}).get(port) == "output":
                for index, bit in enumerate(bits):
                    if isinstance(bit, int):
                        driver[bit] = (name, index)
    for p in inputs:
        for index, bit in enumerate(p.bits):
            if isinstance(bit, int):
                driver[bit] = (f"input {p.name}", index)
    order = _order(cells, driver, outputs)

    def run(ops: Ops, words: Mapping[str, BV]) -> dict[str, BV]:
        values: dict[str, BV] = {}
        for p in inputs:
            if p.name not in words:
                raise NetlistError(f"no value for input port {p.name}")
            values[f"input {p.name}"] = words[p.name]
        for name in order:
            cell = cells[name]
            connection = {port: _gather(ops, bits, driver, values)
                          for port, bits in cell["connections"].items()
                          if cell.get("port_directions", {}).get(port) != "output"}
            values[name] = CELLS[cell["type"]](ops, cell, connection)
        return {p.name: _gather(ops, p.bits, driver, values) for p in outputs}

    return run


def _order(cells: Mapping[str, Any], driver: Mapping[int, tuple[str, int]],
           outputs: Sequence[Port]) -> list[str]:
    """Cells in an order where every cell follows the cells it reads (NetlistError on a
    combinational loop or an undriven bit)."""
    done: set[str] = set()
    on_stack: set[str] = set()
    order: list[str] = []

    def sources(name: str) -> list[str]:
        cell = cells[name]
        out = []
        for port, bits in cell["connections"].items():
            if cell.get("port_directions", {}).get(port) == "output":
                continue
            for bit in bits:
                if isinstance(bit, int):
                    if bit not in driver:
                        raise NetlistError(f"cell {name} reads an undriven bit (signal {bit})")
                    src = driver[bit][0]
                    if not src.startswith("input "):
                        out.append(src)
        return out

    roots = []
    for p in outputs:
        for bit in p.bits:
            if isinstance(bit, int):
                if bit not in driver:
                    raise NetlistError(f"output {p.name} has an undriven bit")
                if not driver[bit][0].startswith("input "):
                    roots.append(driver[bit][0])
    for root in roots:
        if root in done:
            continue
        stack = [(root, iter(sources(root)))]
        on_stack.add(root)
        while stack:
            name, pending = stack[-1]
            child = next(pending, None)
            if child is None:
                stack.pop()
                on_stack.discard(name)
                if name not in done:
                    done.add(name)
                    order.append(name)
                continue
            if child in done:
                continue
            if child in on_stack:
                raise NetlistError(f"combinational loop through cell {child}")
            on_stack.add(child)
            stack.append((child, iter(sources(child))))
    return order


def _gather(ops: Ops, bits: Sequence[Bit], driver: Mapping[int, tuple[str, int]],
            values: Mapping[str, BV]) -> BV:
    """The word the ``bits`` (LSB first) spell, runs of one source read as one extract."""
    if not bits:
        raise NetlistError("a connection has no bits")
    parts: list[BV] = []  # MSB last while gathering
    run: tuple[str, int, int] | None = None  # (source, low index, high index)
    constant: list[int] = []

    def flush() -> None:
        nonlocal run, constant
        if run is not None:
            source, lo, hi = run
            word = values[source]
            parts.append(word if (lo == 0 and hi == word.width - 1)
                         else ops.extract(word, hi, lo))
            run = None
        if constant:
            parts.append(ops.const(sum(b << i for i, b in enumerate(constant)), len(constant)))
            constant = []

    for bit in bits:
        if isinstance(bit, int):
            source, index = driver[bit]
            if constant:
                flush()
            if run is not None and run[0] == source and run[2] + 1 == index:
                run = (source, run[1], index)
            else:
                flush()
                run = (source, index, index)
        else:
            if run is not None:
                flush()
            constant.append(1 if bit == "1" else 0)
    flush()
    return parts[0] if len(parts) == 1 else ops.concat(*reversed(parts))


# ------------------------------------------------------------------ the cell library


def _ext(ops: Ops, x: BV, width: int, signed: bool) -> BV:
    if x.width == width:
        return x
    if x.width > width:
        return ops.extract(x, width - 1, 0)
    return ops.sext(x, width) if signed else ops.zext(x, width)


def _signed(cell: Mapping[str, Any], *ports: str) -> bool:
    return all(_param(cell, f"{p}_SIGNED") for p in ports)


def _bool_out(ops: Ops, cell: Mapping[str, Any], b: Bool) -> BV:
    return _ext(ops, ops.bool_to_bv(b), _param(cell, "Y_WIDTH"), False)


def _unary(fn):
    def cell_fn(ops: Ops, cell: Mapping[str, Any], c: Mapping[str, BV]) -> BV:
        y = _param(cell, "Y_WIDTH")
        return fn(ops, _ext(ops, c["A"], y, _signed(cell, "A")))
    return cell_fn


def _binary(fn):
    def cell_fn(ops: Ops, cell: Mapping[str, Any], c: Mapping[str, BV]) -> BV:
        y = _param(cell, "Y_WIDTH")
        signed = _signed(cell, "A", "B")
        return fn(ops, _ext(ops, c["A"], y, signed), _ext(ops, c["B"], y, signed))
    return cell_fn


def _compare(fn_unsigned, fn_signed):
    def cell_fn(ops: Ops, cell: Mapping[str, Any], c: Mapping[str, BV]) -> BV:
        signed = _signed(cell, "A", "B")
        w = max(c["A"].width, c["B"].width)
        a, b = _ext(ops, c["A"], w, signed), _ext(ops, c["B"], w, signed)
        return _bool_out(ops, cell, (fn_signed if signed else fn_unsigned)(ops, a, b))
    return cell_fn


def _reduce(fn):
    def cell_fn(ops: Ops, cell: Mapping[str, Any], c: Mapping[str, BV]) -> BV:
        return _bool_out(ops, cell, fn(ops, c["A"]))
    return cell_fn


def _nonzero(ops: Ops, x: BV) -> Bool:
    return ops.ne(x, 0)


def _parity(ops: Ops, x: BV) -> Bool:
    out = ops.bit(x, 0)
    for i in range(1, x.width):
        out = ops.xor_(out, ops.bit(x, i))
    return out


def _shift(kind: str):
    def cell_fn(ops: Ops, cell: Mapping[str, Any], c: Mapping[str, BV]) -> BV:
        y = _param(cell, "Y_WIDTH")
        a, amount = c["A"], c["B"]
        signed = _signed(cell, "A")
        if kind == "left":
            return ops.shl(_ext(ops, a, y, signed), amount)
        w = max(a.width, y)
        wide = _ext(ops, a, w, signed)
        shifted = (ops.ashr(wide, amount) if kind == "arith" and signed
                   else ops.lshr(wide, amount))
        return _ext(ops, shifted, y, False)
    return cell_fn


def _shift_signed_amount(ops: Ops, cell: Mapping[str, Any], c: Mapping[str, BV]) -> BV:
    """``$shift``/``$shiftx``: right by B, left when B is signed and negative; bits shifted
    in from outside A are 0 (``$shiftx``'s x read as 0)."""
    y = _param(cell, "Y_WIDTH")
    a, amount = c["A"], c["B"]
    w = max(a.width, y)
    wide = _ext(ops, a, w, _signed(cell, "A") and cell["type"] == "$shift")
    right = _ext(ops, ops.lshr(wide, amount), y, False)
    if not _param(cell, "B_SIGNED"):
        return right
    negative = ops.sign(amount)
    magnitude = ops.neg(ops.sext(amount, amount.width + 1))
    left = _ext(ops, ops.shl(wide, magnitude), y, False)
    return ops.ite(negative, left, right)


def _mux(ops: Ops, cell: Mapping[str, Any], c: Mapping[str, BV]) -> BV:
    return ops.ite(ops.bit(c["S"], 0), c["B"], c["A"])


def _pmux(ops: Ops, cell: Mapping[str, Any], c: Mapping[str, BV]) -> BV:
    """``$pmux``: the B word whose S bit is set (the lowest when several are), else A."""
    width = _param(cell, "WIDTH")
    out = c["A"]
    for i in reversed(range(c["S"].width)):
        out = ops.ite(ops.bit(c["S"], i), ops.extract(c["B"], width * i + width - 1, width * i),
                      out)
    return out


def _bmux(ops: Ops, cell: Mapping[str, Any], c: Mapping[str, BV]) -> BV:
    width = _param(cell, "WIDTH")
    words = [ops.extract(c["A"], width * i + width - 1, width * i)
             for i in range(c["A"].width // width)]
    out = words[0]
    for i in range(1, len(words)):
        out = ops.ite(ops.eq(c["S"], i), words[i], out)
    return out


def _logic(fn):
    def cell_fn(ops: Ops, cell: Mapping[str, Any], c: Mapping[str, BV]) -> BV:
        return _bool_out(ops, cell, fn(ops, *(_nonzero(ops, c[p]) for p in sorted(c))))
    return cell_fn


CELLS = {
    "$not": _unary(lambda ops, a: ops.bvnot(a)),
    "$pos": _unary(lambda ops, a: a),
    "$neg": _unary(lambda ops, a: ops.neg(a)),
    "$and": _binary(lambda ops, a, b: ops.bvand(a, b)),
    "$or": _binary(lambda ops, a, b: ops.bvor(a, b)),
    "$xor": _binary(lambda ops, a, b: ops.bvxor(a, b)),
    "$xnor": _binary(lambda ops, a, b: ops.bvnot(ops.bvxor(a, b))),
    "$add": _binary(lambda ops, a, b: ops.add(a, b)),
    "$sub": _binary(lambda ops, a, b: ops.sub(a, b)),
    "$mul": _binary(lambda ops, a, b: ops.mul(a, b)),
    "$reduce_and": _reduce(lambda ops, a: ops.eq(a, (1 << a.width) - 1)),
    "$reduce_or": _reduce(_nonzero),
    "$reduce_bool": _reduce(_nonzero),
    "$reduce_xor": _reduce(_parity),
    "$reduce_xnor": _reduce(lambda ops, a: ops.not_(_parity(ops, a))),
    "$logic_not": _logic(lambda ops, a: ops.not_(a)),
    "$logic_and": _logic(lambda ops, a, b: ops.and_(a, b)),
    "$logic_or": _logic(lambda ops, a, b: ops.or_(a, b)),
    "$eq": _compare(lambda ops, a, b: ops.eq(a, b), lambda ops, a, b: ops.eq(a, b)),
    "$eqx": _compare(lambda ops, a, b: ops.eq(a, b), lambda ops, a, b: ops.eq(a, b)),
    "$ne": _compare(lambda ops, a, b: ops.ne(a, b), lambda ops, a, b: ops.ne(a, b)),
    "$nex": _compare(lambda ops, a, b: ops.ne(a, b), lambda ops, a, b: ops.ne(a, b)),
    "$lt": _compare(lambda ops, a, b: ops.ult(a, b), lambda ops, a, b: ops.slt(a, b)),
    "$le": _compare(lambda ops, a, b: ops.ule(a, b), lambda ops, a, b: ops.sle(a, b)),
    "$gt": _compare(lambda ops, a, b: ops.ugt(a, b), lambda ops, a, b: ops.sgt(a, b)),
    "$ge": _compare(lambda ops, a, b: ops.uge(a, b), lambda ops, a, b: ops.sge(a, b)),
    "$shl": _shift("left"),
    "$sshl": _shift("left"),
    "$shr": _shift("logical"),
    "$sshr": _shift("arith"),
    "$shift": _shift_signed_amount,
    "$shiftx": _shift_signed_amount,
    "$mux": _mux,
    "$pmux": _pmux,
    "$bmux": _bmux,
}
"""Cell type -> its value from the cell and its input connections (the cell library's
rules, module docstring)."""
