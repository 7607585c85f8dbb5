# SPDX-License-Identifier: Apache-2.0
"""Tile loops in a kernel's Numba IR: ``tiles`` calls made ``range`` loops, and their mistakes.

Both Numba-based front ends run :class:`TileLoops` on a function's IR before
type inference (numba-cuda as a rewrite, numba-cuda-mlir as a whole-function
planner):

* :meth:`TileLoops.rewrite` replaces each ``block.tiles(n, items)`` call by
  ``range(0, n, TILE)`` and each ``reverse=True`` one by
  ``range((n - 1) // TILE * TILE, -1, -TILE)``, the loops written by hand,
  with ``TILE`` a constant (:func:`scan._tiles.step`); ``warp.tile_size``
  becomes that constant. The loop that compiles is the hand-written one, so
  the iterators cost nothing.
* :meth:`TileLoops.check` refuses, at the call's line, the mistakes the IR
  shows: a tile loop's offset passed to the other family's tile I/O (a
  ``block.tiles`` offset to ``warp.load``), a warp loop's ``lanes=`` or a
  loop's items array that differs from its load's or store's, a carried scan
  whose direction is not its loop's (a ``reverse=True`` scan on tiles that
  :func:`scan.block.tiles` walks forward), a ``lanes=`` that differs between
  the warp calls on one items array, and an offset, ``valid``/``valid_items``
  or ``tile`` computed from the thread's index (each thread would pass its
  own, where the block, or the logical warp, passes one).

What the IR cannot show (a step written by hand, values known only at run
time) the simulator checks while the kernel runs. Nothing here imports Numba:
a front end hands in its IR module and its ``cuda`` objects.
"""

from __future__ import annotations

import inspect
import operator
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs

from . import _tiles as tiles
from ._calls import CALLS
from ._errors import PlanError, ScanError
from ._lookback import Lookback
from ._numba_cuda._compat import set_definition
from ._numba_facts import IRFacts
from ._plan import Block
from ._primitives import PRIMITIVES

__all__ = ["TileLoops"]

#: The calls that move one tile at an ``offset`` (:attr:`scan._spec.Primitive.moves_tiles`).
_TILE_IO = frozenset(entry.key for spec in PRIMITIVES if spec.moves_tiles for entry in spec.calls)
_ARITHMETIC = (operator.add, operator.sub, operator.mul, operator.iadd, operator.isub)
_NOT_LITERAL = object()


@attrs.frozen
class _TileLoop:
    """A ``tiles`` call of the function: its facts and its loop variable's definitions."""

    function: str
    reverse: bool
    lanes: int
    items: Any  # the items array's allocating call, or the literal items per thread
    loc: Any


@attrs.frozen
class TileLoops:
    """One front end's tile-loop rewrite and checks.

    Attributes
    ----------
    facts : IRFacts
        The front end's IR facts.
    ir : module
        Its IR module (``Const``, ``Expr``, ``Assign``, ``Var``).
    functions : mapping of int to str
        The tile-loop helpers by object id: ``tiles``, ``warp.tiles`` and
        ``warp.tile_size`` (:data:`scan._tiles.TILE_FUNCTIONS`).
    signatures : mapping of str to inspect.Signature
        Their signatures, by key.
    thread_index : object
        The front end's ``cuda.threadIdx``.
    lane_id : object
        Its ``cuda.laneid``.
    """

    facts: IRFacts
    ir: Any
    functions: Mapping[int, str]
    signatures: Mapping[str, inspect.Signature]
    thread_index: Any
    lane_id: Any

    # ------------------------------------------------------------------ reading

    def _tile_call(self, func_ir: Any, stmt: Any) -> tuple[str, Any, dict[str, Any]] | None:
        """(key, call, bound argument variables) of a statement calling a tile-loop helper."""
        if not (isinstance(stmt, self.facts.assign) and isinstance(stmt.value, self.facts.expr)):
            return None
        expr = stmt.value
        if expr.op != "call":
            return None
        try:
            fn = self.facts.resolve(func_ir, expr.func)
        except (LookupError, AttributeError):
            return None
        name = self.functions.get(id(fn))
        if name is None:
            return None
        try:
            bound = self.signatures[name].bind(*expr.args, **dict(expr.kws))
        except TypeError as exc:
            raise PlanError(
                f"{name}: {exc}; see help(scan.{name if '.' in name else 'block.' + name})"
            ) from None
        return name, expr, dict(bound.arguments)

    def _literal(self, func_ir: Any, var: Any, depth: int = 0) -> Any:
        """The Python value a variable holds when it is a literal (else ``_NOT_LITERAL``)."""
        if var is None:
            return None
        if depth > 8 or not isinstance(var, self.facts.var):
            return _NOT_LITERAL
        defn = self.facts.definition(func_ir, var)
        if isinstance(defn, self.facts.var):
            return self._literal(func_ir, defn, depth + 1)
        if isinstance(defn, self.facts.const + self.facts.global_):
            return defn.value
        if isinstance(defn, self.facts.expr) and defn.op == "build_tuple":
            items = tuple(self._literal(func_ir, v, depth + 1) for v in defn.items)
            return _NOT_LITERAL if _NOT_LITERAL in items else items
        if isinstance(defn, self.facts.expr) and defn.op == "getattr":
            try:
                return self.facts.resolve(func_ir, var)
            except (LookupError, AttributeError):
                return _NOT_LITERAL
        return _NOT_LITERAL

    def _option(self, func_ir: Any, name: str, option: str, var: Any) -> Any:
        value = self._literal(func_ir, var)
        if value is _NOT_LITERAL:
            what = "direction" if option == "reverse" else "step"
            raise PlanError(
                f"{name}: {option}= must be a literal (written in the call, or a constant of "
                f"the kernel's module); the loop's {what} is a constant of the compiled loop"
            )
        return value

    def _step(
        self,
        func_ir: Any,
        name: str,
        bound: Mapping[str, Any],
        kernel: bool,
        launch: Callable[[str], Block | None],
    ) -> int:
        items = bound["items"]
        per_thread = self._literal(func_ir, items)
        if not isinstance(per_thread, int) or isinstance(per_thread, bool):
            per_thread = self.facts.length(func_ir, items, kernel)
        threads = self._option(func_ir, name, "threads", bound.get("threads"))
        lanes = self._option(func_ir, name, "lanes", bound.get("lanes"))
        block = launch(name) if name == "tiles" and threads is None else None
        return tiles.step(name, per_thread, threads=threads, lanes=lanes, launch=block)

    def _allocation(self, func_ir: Any, var: Any, kernel: bool) -> Any:
        """The ``cuda.local.array`` call an items variable is, or None."""
        if var is None:
            return None
        where, call = self.facts.allocation(func_ir, var, kernel)
        return call if where == "local" else None

    # ------------------------------------------------------------------ rewriting

    def rewrite(
        self,
        func_ir: Any,
        block: Any,
        kernel: bool,
        launch: Callable[[str], Block | None],
    ) -> list[Any] | None:
        """The statements of `block` with every tile-loop helper call made its loop or constant.

        None when the block calls none. `launch(name)` gives the launch's
        block shape (None when not known).

        Raises
        ------
        ScanError
            With the call's ``loc`` as ``exc.loc``, for a call that cannot be
            made a loop (items per thread, block shape or a literal unknown).
        """
        if not any(self._safe_tile_call(func_ir, stmt) for stmt in block.body):
            return None
        body: list[Any] = []
        for stmt in block.body:
            found = self._safe_tile_call(func_ir, stmt)
            if found is None:
                body.append(stmt)
                continue
            name, _, bound = found
            try:
                step = self._step(func_ir, name, bound, kernel, launch)
                reverse = tiles.check_reverse(
                    name, self._option(func_ir, name, "reverse", bound.get("reverse"))
                )
            except ScanError as exc:
                exc.loc = stmt.loc  # type: ignore[attr-defined]
                raise
            body += self._replacement(func_ir, block.scope, stmt, name, bound, step, reverse)
        return body

    def _safe_tile_call(self, func_ir: Any, stmt: Any) -> tuple[str, Any, dict[str, Any]] | None:
        try:
            return self._tile_call(func_ir, stmt)
        except ScanError as exc:
            exc.loc = stmt.loc  # type: ignore[attr-defined]
            raise

    def _replacement(
        self,
        func_ir: Any,
        scope: Any,
        stmt: Any,
        name: str,
        bound: Mapping[str, Any],
        step: int,
        reverse: bool,
    ) -> list[Any]:
        ir, loc = self.ir, stmt.loc
        out: list[Any] = []

        def assign(value: Any, hint: str) -> Any:
            var = ir.Var(scope, scope.redefine(f"$scan_{hint}", loc).name, loc)
            out.append(ir.Assign(value, var, loc))
            set_definition(func_ir, var.name, value)
            return var

        if name == "warp.tile_size":
            value: Any = ir.Const(step, loc)
        else:
            n = bound["n"]
            if reverse:  # range((n - 1) // step * step, -1, -step)
                one = assign(ir.Const(1, loc), "one")
                tile = assign(ir.Const(step, loc), "tile")
                last = assign(ir.Expr.binop(operator.sub, n, one, loc), "last")
                count = assign(ir.Expr.binop(operator.floordiv, last, tile, loc), "tiles")
                args = [
                    assign(ir.Expr.binop(operator.mul, count, tile, loc), "start"),
                    assign(ir.Const(-1, loc), "stop"),
                    assign(ir.Const(-step, loc), "step"),
                ]
            else:  # range(0, n, step)
                args = [assign(ir.Const(0, loc), "start"), n, assign(ir.Const(step, loc), "step")]
            fn = assign(ir.Global("range", range, loc), "range")
            value = ir.Expr.call(fn, args, (), loc)
        out.append(ir.Assign(value, stmt.target, loc))
        set_definition(func_ir, stmt.target.name, value)
        return out

    # ------------------------------------------------------------------ checking

    def check(self, func_ir: Any, kernel: bool, block_shape: Callable[[], Block | None]) -> None:
        """Refuse the tile-loop mistakes the function's IR shows (see the module docstring).

        `block_shape()` is the launch's block shape, when known (a thread
        index along a dimension of 1 thread is the same in every thread);
        asked only where an index argument is computed from one.

        Raises
        ------
        PlanError
            With the offending call's ``loc`` as ``exc.loc``.
        """
        loops: dict[int, _TileLoop] = {}  # by the id of the tiles call
        calls: list[tuple[Any, str, dict[str, Any]]] = []
        for stmt in self._statements(func_ir):
            found = self._safe_tile_call(func_ir, stmt)
            if found is not None:
                name, _, bound = found
                if name == "warp.tile_size":
                    continue
                lanes = self._literal(func_ir, bound.get("lanes"))
                reverse = self._literal(func_ir, bound.get("reverse"))
                items = self._allocation(func_ir, bound["items"], kernel)
                if items is None:
                    items = self._literal(func_ir, bound["items"])
                loops[id(stmt.value)] = _TileLoop(
                    function=name,
                    reverse=reverse is True,
                    lanes=lanes if isinstance(lanes, int) else 32,
                    items=items,
                    loc=stmt.loc,
                )
                continue
            entry = self._entry_call(func_ir, stmt)
            if entry is not None:
                calls.append((stmt, *entry))
        loaded: dict[int, _TileLoop] = {}  # items allocations moved at a loop's offsets
        lanes_of: dict[int, tuple[int, str]] = {}  # items allocations of warp calls: lanes
        for stmt, name, bound in calls:
            try:
                self._check_uniform(func_ir, name, bound, block_shape)
                self._check_call(func_ir, name, bound, kernel, loops, loaded, lanes_of)
            except ScanError as exc:
                exc.loc = stmt.loc  # type: ignore[attr-defined]
                raise

    def _statements(self, func_ir: Any) -> Iterator[Any]:
        for label in sorted(func_ir.blocks):
            yield from func_ir.blocks[label].body

    def _entry_call(self, func_ir: Any, stmt: Any) -> tuple[str, dict[str, Any]] | None:
        if not (isinstance(stmt, self.facts.assign) and isinstance(stmt.value, self.facts.expr)):
            return None
        expr = stmt.value
        if expr.op != "call":
            return None
        try:
            fn = self.facts.resolve(func_ir, expr.func)
        except (LookupError, AttributeError):
            return None
        name = self.facts.functions.get(id(fn))
        if name is None:
            return None
        kws = {k: v for k, v in expr.kws if k != self.facts.hidden}
        try:
            bound = CALLS[name].signature.bind(*expr.args, **kws)
        except TypeError:
            return None  # the typing reports it
        return name, dict(bound.arguments)

    def _loop_of(self, func_ir: Any, var: Any, loops: Mapping[int, _TileLoop]) -> _TileLoop | None:
        """The tile loop whose offset a variable is (``base`` of ``for base in block.tiles(...)``).

        Its definition (plain copies followed) is the loop's
        ``pair_first(iternext(getiter(<the tiles call>)))``.
        """
        if not loops or not isinstance(var, self.facts.var):
            return None
        defn: Any = var
        for op in ("pair_first", "iternext", "getiter"):
            defn = self.facts.definition(func_ir, defn)
            if not (isinstance(defn, self.facts.expr) and defn.op == op):
                return None
            defn = defn.value
        return loops.get(id(self.facts.definition(func_ir, defn)))

    def _check_call(
        self,
        func_ir: Any,
        name: str,
        bound: Mapping[str, Any],
        kernel: bool,
        loops: Mapping[int, _TileLoop],
        loaded: dict[int, _TileLoop],
        lanes_of: dict[int, tuple[int, str]],
    ) -> None:
        warp = name.startswith("warp.")
        lanes = self._literal(func_ir, bound.get("lanes")) if warp else None
        lanes = lanes if isinstance(lanes, int) and not isinstance(lanes, bool) else 32
        if name in _TILE_IO:
            items = self._allocation(func_ir, bound.get("items"), kernel)
            loop = self._loop_of(func_ir, bound.get("offset"), loops)
            if loop is not None:
                self._check_tile_io(func_ir, name, bound, kernel, loop, lanes)
                if items is not None:
                    loaded[id(items)] = loop
            if warp and items is not None:
                self._same_lanes(name, items, lanes, lanes_of)
            return
        values = [self._allocation(func_ir, bound.get(p), kernel) for p in ("values", "out")]
        if warp:
            for items in values:
                if items is not None:
                    self._same_lanes(name, items, lanes, lanes_of)
        prefix = self._literal(func_ir, bound.get("prefix_op"))
        if bound.get("prefix_op") is None or prefix is None or isinstance(prefix, Lookback):
            return
        loop = next((loaded[id(v)] for v in values if v is not None and id(v) in loaded), None)
        if loop is None:
            return
        if warp:
            if loop.reverse:
                raise PlanError(
                    f"{name}: its items come from a tile loop that walks the row from its end "
                    f"(warp.tiles(..., reverse=True)), but warp scans run forward and the "
                    "prefix callback carries each tile's prefix to the next tile to the right: "
                    "walk the tiles forward (warp.tiles(n, items))"
                )
            return
        reverse = self._literal(func_ir, bound.get("reverse"))
        if reverse is _NOT_LITERAL:
            return  # the typing refuses it
        if bool(reverse) != loop.reverse:
            raise PlanError(_direction_error(name, bool(reverse), _qualified(loop.function)))

    def _check_tile_io(
        self,
        func_ir: Any,
        name: str,
        bound: Mapping[str, Any],
        kernel: bool,
        loop: _TileLoop,
        lanes: int,
    ) -> None:
        family = "warp" if name.startswith("warp.") else "block"
        loop_family = "warp" if loop.function.startswith("warp.") else "block"
        if family != loop_family:
            tile = (
                "the block's threads x the items per thread"
                if loop_family == "block"
                else "lanes x the items per thread"
            )
            fix = "warp.tiles(n, items, lanes=...)" if family == "warp" else "block.tiles(n, items)"
            raise PlanError(
                f"{name}: its offset comes from {loop_family}.tiles, which steps by a "
                f"{loop_family}'s tile ({tile}), but {name} moves a {family}'s tile: the loop "
                f"would skip or repeat items of the row; walk the tiles with {fix}"
            )
        if family == "warp" and lanes != loop.lanes:
            raise PlanError(
                f"{name}: lanes={lanes}, but its offset comes from warp.tiles(..., "
                f"lanes={loop.lanes}), which steps by {loop.lanes} lanes' tiles: the loop would "
                "skip or repeat items of the row; pass the same lanes= to warp.tiles and to "
                "every warp call of the loop"
            )
        items = self._allocation(func_ir, bound.get("items"), kernel)
        mine = None if items is None else self.facts.static_length(func_ir, items)
        if isinstance(loop.items, int):
            theirs: int | None = loop.items
        elif loop.items is None or loop.items is _NOT_LITERAL:
            theirs = None
        else:
            theirs = self.facts.static_length(func_ir, loop.items)
        if mine is not None and theirs is not None and mine != theirs:
            raise PlanError(
                f"{name}: it moves {mine} items a thread, but its offset comes from "
                f"{_qualified(loop.function)}(n, items) with {theirs} items a thread, which "
                "steps by that tile: the loop would skip or repeat items of the row; pass the "
                "load's items array to the loop"
            )

    def _same_lanes(
        self, name: str, items: Any, lanes: int, lanes_of: dict[int, tuple[int, str]]
    ) -> None:
        earlier = lanes_of.setdefault(id(items), (lanes, name))
        if earlier[0] != lanes:
            raise PlanError(
                f"{name}: lanes={lanes}, but {earlier[1]} on the same items array has "
                f"lanes={earlier[0]}: each logical warp would scan or move other items than "
                "its tile's (a warp tile is lanes x items a thread); pass the same lanes= to "
                "the warp.load, the scans and the warp.store of one tile"
            )

    def _check_uniform(
        self,
        func_ir: Any,
        name: str,
        bound: Mapping[str, Any],
        block_shape: Callable[[], Block | None],
    ) -> None:
        """Refuse an index argument computed from the thread's index (see the module docstring)."""
        warp = name.startswith("warp.")
        lanes = self._literal(func_ir, bound.get("lanes")) if warp else None
        if warp and lanes == 1:
            return
        for param in CALLS[name].params:
            var = bound.get(param.name)
            if param.role != "index" or var is None:
                continue
            axis = self._thread_axis(func_ir, var, 0)
            if axis is None:
                continue
            if warp and axis not in ("x", "laneid"):
                continue  # threadIdx.y may be the warp's row of a (32, k) block
            dims = dict(zip("xyz", block_shape() or (2, 2, 2), strict=True))
            if dims.get(axis, 2) == 1:
                continue
            group = "lanes of a logical warp" if warp else "threads of the block"
            one = "its logical warp's" if warp else "the block's"
            source = "cuda.laneid" if axis == "laneid" else f"cuda.threadIdx.{axis}"
            raise PlanError(
                f"{name}: {param.name} is computed from {source}, so each thread passes its "
                f"own, but the {group} pass one {param.name} ({one}: every thread of the call "
                f"moves or reduces the same tile); compute it from values the {group} share "
                "(the tile loop's offset, cuda.blockIdx, a warp's index "
                "cuda.threadIdx.x // 32)"
            )

    def _thread_axis(self, func_ir: Any, var: Any, depth: int) -> str | None:
        """The thread-index axis a value is computed from by +, - and * only, if any."""
        if depth > 24 or not isinstance(var, self.facts.var):
            return None
        defn = self.facts.definition(func_ir, var)
        if isinstance(defn, self.facts.var):
            return self._thread_axis(func_ir, defn, depth + 1)
        if not isinstance(defn, self.facts.expr):
            return None
        if defn.op == "getattr":
            try:
                owner = self.facts.resolve(func_ir, defn.value)
            except (LookupError, AttributeError):
                owner = None
            if owner is self.thread_index and defn.attr in ("x", "y", "z"):
                return str(defn.attr)
            try:
                if self.facts.resolve(func_ir, var) is self.lane_id:
                    return "laneid"
            except (LookupError, AttributeError):
                return None
            return None
        if defn.op in ("binop", "inplace_binop"):
            fn = defn.fn if defn.op == "binop" else defn.immutable_fn
            if fn not in _ARITHMETIC:
                return None
            return self._thread_axis(func_ir, defn.lhs, depth + 1) or self._thread_axis(
                func_ir, defn.rhs, depth + 1
            )
        if defn.op == "unary" and defn.fn in (operator.neg, operator.pos):
            return self._thread_axis(func_ir, defn.value, depth + 1)
        return None


def _qualified(function: str) -> str:
    return function if "." in function else f"block.{function}"


def _direction_error(name: str, reverse: bool, loop: str) -> str:
    if reverse:
        return (
            f"{name}: reverse=True carries the suffix from each tile to the tile to its left, "
            f"but its items come from {loop}(...) without reverse=True, which walks the row "
            "from its start: each tile would take the suffix of the tiles to its left; walk "
            f"the tiles from the row's end with {loop}(n, items, reverse=True)"
        )
    return (
        f"{name}: a forward scan carries the prefix from each tile to the tile to its right, "
        f"but its items come from {loop}(..., reverse=True), which walks the row from its "
        "end: each tile would take the prefix of the tiles to its right; walk the tiles from "
        f"the row's start with {loop}(n, items), or pass reverse=True to the scan for a suffix"
    )
