# SPDX-License-Identifier: Apache-2.0
"""The overloads of ``scan.block``'s scans and sums in ``block.pyi`` (see :mod:`scan._stubgen`).

Each :class:`~scan._primitives._stubs_common.Overload` lists every parameter
of the entry point in the call table's order, with its type in that overload
and whether the overload requires it; the names, defaults and keyword-only
flags are checked against :data:`scan._calls.CALLS` when the stubs are
generated. The tuples below are the pieces the overloads share, spelled once.

Every function's overloads come in the same order (the notes at the top of
``block.pyi`` say why the order matters for mypy's messages): a local array,
then one scalar (each with a stateful ``prefix_op``, a stateless one, and
none), then a Python ``int``/``float``; the operator scans then take records
(``np.void``) likewise; last the diagnostic overloads, which match no real
argument and whose marker types name the mistake.
"""

from __future__ import annotations

import attrs

from .._stubs_common import (
    Arg,
    Comment,
    Entry,
    Overload,
    StubFunction,
    any_tail,
    banner,
    opt,
    req,
    tail,
)

__all__ = ["FUNCTIONS", "WARP_FUNCTIONS"]


@attrs.frozen
class _Flavour:
    """What tells the block scans' overloads from the warp scans'."""

    aggregate: str  # the aggregate output's parameter
    marker: str  # the diagnostic marker type of an aggregate with prefix_op=
    tail: tuple[Arg, ...]  # the options after the prefix, as typed
    any_tail: tuple[Arg, ...]  # the same, as the diagnostic overloads take them
    # the options of a look-back scan (prefix_op=scan.lookback); empty: none
    lookback_tail: tuple[Arg, ...] = ()


_BLOCK = _Flavour(
    "block_aggregate",
    "BlockAggregateCannotBeCombinedWithPrefixOp",
    (*tail("_ScanAlgorithmLike"), opt("reverse", "bool"), opt("tile", "None")),
    (*any_tail(), opt("reverse", "Any"), opt("tile", "Any")),
    (
        opt("algorithm", "_ScanAlgorithmLike | None"),
        opt("temp_storage", "None"),
        opt("threads", "_Threads | None"),
        opt("items_per_thread", "int | None"),
        opt("auto_sync", "bool"),
        opt("reverse", "bool"),
        opt("tile", "int | None"),
    ),
)
_WARP_OPTIONS = ("lanes", "threads", "items_per_thread")
_WARP = _Flavour(
    "warp_aggregate",
    "WarpAggregateCannotBeCombinedWithPrefixOp",
    (
        opt("lanes", "int"),
        opt("threads", "_Threads | None"),
        opt("items_per_thread", "int | None"),
    ),
    tuple(opt(name, "Any") for name in _WARP_OPTIONS),
)

_NO_SEED = opt("initial_value", "None")

# values= and out= of each payload form
_ARRAY = (req("values", "NDArray[ValueT]"), opt("out", "_SameDtype[ValueT] | None"))
_SCALAR = (req("values", "ValueT"), opt("out", "None"))
_PY_SCALAR = (req("values", "_PyScalarT"), opt("out", "None"))
_RECORD_ARRAY = (req("values", "NDArray[np.void]"), opt("out", "NDArray[np.void] | None"))
_RECORD = (req("values", "_RecordT"), opt("out", "None"))
_ANY = (req("values", "Any"), opt("out", "Any"))


# prefix_op=, prefix_state= and the aggregate of each prefix form
def _stateful(state: str, value: str, f: _Flavour) -> tuple[Arg, ...]:
    return (
        req("prefix_op", f"StatefulFunction[{state}, {value}]"),
        req("prefix_state", f"_StateArray[{state}]"),
        opt(f.aggregate, "None"),
    )


def _stateless(callback: str, f: _Flavour) -> tuple[Arg, ...]:
    return (req("prefix_op", callback), opt("prefix_state", "None"), opt(f.aggregate, "None"))


def _lookback(value: str, f: _Flavour) -> tuple[Arg, ...]:
    """``prefix_op=scan.lookback`` with a tile status of the values' type, then its options."""
    return (
        req("prefix_op", "Lookback"),
        req("prefix_state", f"TileStatus[{value}]"),
        opt(f.aggregate, "None"),
        *f.lookback_tail,
    )


def _no_prefix(aggregate: str, f: _Flavour) -> tuple[Arg, ...]:
    return (
        opt("prefix_op", "None"),
        opt("prefix_state", "None"),
        opt(f.aggregate, f"{aggregate} | None"),
    )


# the diagnostic overloads' prefix forms: their marker types are the message
def _diagnose_aggregate(f: _Flavour) -> tuple[Arg, ...]:
    return (
        req("prefix_op", "_AnyPrefixOp"),
        opt("prefix_state", "Any"),
        req(f.aggregate, f"NDArray[{f.marker}]"),
    )


def _diagnose_prefix_state(f: _Flavour) -> tuple[Arg, ...]:
    return (
        req("prefix_op", "_StatelessLike[Any]"),
        req("prefix_state", "NDArray[PrefixStateNeedsAStatefulPrefixOp]"),
        opt(f.aggregate, "Any"),
    )


def _diagnose_initial_value(f: _Flavour) -> tuple[Arg, ...]:
    return (
        req("initial_value", "InitialValueCannotBeCombinedWithPrefixOp[Never]"),
        req("prefix_op", "_AnyPrefixOp"),
        opt("prefix_state", "Any"),
        opt(f.aggregate, "Any"),
    )


_NEXT = Comment("#")
_RECORDS = Comment(
    "# records (np.void): a scan_op= function returning a tuple; see the note at the top"
)
_DIAGNOSTICS = Comment("# diagnostics: never match; see the note at the top")


def _sum(name: str, f: _Flavour = _BLOCK) -> StubFunction:
    """``inclusive_sum``/``exclusive_sum``: numeric state only (``StateT``), no records."""

    def numeric(payload: tuple[Arg, ...], returns: str) -> tuple[Entry, ...]:
        lookback = (Overload((*payload, *_lookback("ValueT", f)), returns),)
        return (
            Overload((*payload, *_stateful("StateT", "ValueT", f), *f.tail), returns),
            Overload((*payload, *_stateless("_StatelessLike[ValueT]", f), *f.tail), returns),
            *(lookback if f.lookback_tail else ()),
            Overload((*payload, *_no_prefix("NDArray[ValueT]", f), *f.tail), returns),
        )

    return StubFunction(
        name,
        (
            banner(name),
            *numeric(_ARRAY, "None"),
            _NEXT,
            *numeric(_SCALAR, "ValueT"),
            _NEXT,
            Overload((*_PY_SCALAR, *_no_prefix("NDArray[Any]", f), *f.tail), "_PyScalarT"),
            _DIAGNOSTICS,
            Overload((*_ANY, *_diagnose_aggregate(f), *f.any_tail), "Any"),
            Overload((*_ANY, *_diagnose_prefix_state(f), *f.any_tail), "Any"),
        ),
    )


def _operator_scan(name: str, f: _Flavour = _BLOCK) -> StubFunction:
    """``scan`` (``mode=``, ``scan_op="+"`` by default), ``inclusive_scan``, ``exclusive_scan``.

    ``exclusive_scan`` without a prefix takes ``initial_value=`` required, or a
    sum-like ``scan_op=`` without it.
    """
    mode = (req("mode", "_ModeCodes"),) if name == "scan" else ()
    any_mode = (req("mode", "Any"),) if name == "scan" else ()
    scan_op = opt if name == "scan" else req  # records require scan_op= everywhere
    exclusive = name == "exclusive_scan"

    def numeric(payload: tuple[Arg, ...], returns: str) -> tuple[Entry, ...]:
        head = (*payload, *mode, scan_op("scan_op", "_ScanOpLike[ValueT]"))
        seed = (
            req("initial_value", "_InitialLike[ValueT]")
            if exclusive
            else opt("initial_value", "_InitialLike[ValueT] | None")
        )
        unseeded = (
            *payload,
            req("scan_op", "_ExclusiveSeedlessOpLike[ValueT]"),
            _NO_SEED,
            *_no_prefix("NDArray[ValueT]", f),
            *f.tail,
        )
        lookback = (
            Overload(
                (
                    *head,
                    opt("initial_value", "_InitialLike[ValueT] | None"),
                    *_lookback("ValueT", f),
                ),
                returns,
            ),
        )
        return (
            Overload(
                (*head, _NO_SEED, *_stateful("ScanStateT", "ValueT", f), *f.tail),
                returns,
            ),
            Overload(
                (*head, _NO_SEED, *_stateless("_StatelessLike[ValueT]", f), *f.tail),
                returns,
            ),
            *(lookback if f.lookback_tail else ()),
            Overload((*head, seed, *_no_prefix("NDArray[ValueT]", f), *f.tail), returns),
            *((Overload(unseeded, returns),) if exclusive else ()),
        )

    def records(payload: tuple[Arg, ...], returns: str) -> tuple[Entry, ...]:
        head = (*payload, *mode, req("scan_op", "_RecordScanOpLike"))
        lookback = (
            Overload(
                (
                    *head,
                    opt("initial_value", "_RecordInitialLike | None"),
                    *_lookback("np.void", f),
                ),
                returns,
            ),
        )
        return (
            Overload(
                (*head, _NO_SEED, *_stateful("ScanStateT", "np.void", f), *f.tail),
                returns,
            ),
            Overload(
                (*head, _NO_SEED, *_stateless("_RecordStatelessLike", f), *f.tail),
                returns,
            ),
            *(lookback if f.lookback_tail else ()),
            Overload(
                (
                    *head,
                    opt("initial_value", "_RecordInitialLike | None"),
                    *_no_prefix("NDArray[np.void]", f),
                    *f.tail,
                ),
                returns,
            ),
        )

    python = (
        *_PY_SCALAR,
        *mode,
        scan_op("scan_op", "_PyScanOpLike[_PyScalarT]"),
        opt("initial_value", "_PyScalarT | None"),
        *_no_prefix("NDArray[Any]", f),
        *f.tail,
    )
    diagnostic = (*_ANY, *any_mode, scan_op("scan_op", "Any"))
    return StubFunction(
        name,
        (
            banner(name),
            *numeric(_ARRAY, "None"),
            _NEXT,
            *numeric(_SCALAR, "ValueT"),
            _NEXT,
            Overload(python, "_PyScalarT"),
            _RECORDS,
            *records(_RECORD_ARRAY, "None"),
            _NEXT,
            *records(_RECORD, "_RecordT"),
            _DIAGNOSTICS,
            Overload((*diagnostic, *_diagnose_initial_value(f), *f.any_tail), "Any"),
            Overload(
                (*diagnostic, _NO_SEED, *_diagnose_aggregate(f), *f.any_tail),
                "Any",
            ),
            Overload(
                (*diagnostic, _NO_SEED, *_diagnose_prefix_state(f), *f.any_tail),
                "Any",
            ),
        ),
    )


FUNCTIONS: tuple[StubFunction, ...] = (
    _operator_scan("scan"),
    _sum("inclusive_sum"),
    _sum("exclusive_sum"),
    _operator_scan("inclusive_scan"),
    _operator_scan("exclusive_scan"),
)

#: ``scan.warp``'s functions in ``warp.pyi``: the block scans' overloads with
#: ``warp_aggregate=`` and the warp options (``lanes=``) in place of the block's.
WARP_FUNCTIONS: tuple[StubFunction, ...] = (
    _operator_scan("scan", _WARP),
    _sum("inclusive_sum", _WARP),
    _sum("exclusive_sum", _WARP),
    _operator_scan("inclusive_scan", _WARP),
    _operator_scan("exclusive_scan", _WARP),
)
