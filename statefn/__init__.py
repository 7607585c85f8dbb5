# SPDX-License-Identifier: Apache-2.0
"""Typed, stateful prefix callbacks for CUB block scans in numba-cuda kernels.

Declare a callback once; every scan accepts it::

    import numpy as np
    import statefn

    @statefn.stateful(np.int64)
    def running_total(state, block_aggregate):
        prefix = state[0]
        state[0] = prefix + block_aggregate
        return prefix

Every accepted callable becomes one of three immutable descriptors
(:class:`StatefulFunction`, :class:`StatelessFunction`, :class:`ScanOperator`);
:func:`normalize` is the one entry point that makes them from any accepted
spelling. Importing this package imports no CUDA module.
"""

from __future__ import annotations

from ._abi import (
    CallbackABI,
    LoweredCallback,
    callback_abi,
    pointer_abi,
    result_error,
    result_kind,
)
from ._descriptors import (
    BUILTIN_OPERATORS,
    BuiltinOperator,
    Descriptor,
    ScanOperator,
    StatefulFunction,
    StatelessFunction,
    StateT,
    ValueT,
)
from ._dtypes import (
    MAX_RECORD_FIELDS,
    RECORD_FIELD_DTYPES,
    STATE_DTYPES,
    RecordField,
    as_value_dtype,
    dtype_key,
    dtype_name,
    record_fields,
    record_tuple,
)
from ._errors import (
    ArityError,
    CallbackCompileError,
    NotCallableError,
    RoleError,
    StateDtypeError,
    StatefnError,
    UnkeyableValueError,
    UnknownOperatorError,
)
from ._normalize import PrefixDescriptor, Role, normalize, scan_op, stateful, stateless

__all__ = [
    "BUILTIN_OPERATORS",
    "MAX_RECORD_FIELDS",
    "RECORD_FIELD_DTYPES",
    "STATE_DTYPES",
    "ArityError",
    "BuiltinOperator",
    "CallbackABI",
    "CallbackCompileError",
    "Descriptor",
    "LoweredCallback",
    "NotCallableError",
    "PrefixDescriptor",
    "RecordField",
    "Role",
    "RoleError",
    "ScanOperator",
    "StateDtypeError",
    "StateT",
    "StatefnError",
    "StatefulFunction",
    "StatelessFunction",
    "UnkeyableValueError",
    "UnknownOperatorError",
    "ValueT",
    "as_value_dtype",
    "callback_abi",
    "dtype_key",
    "dtype_name",
    "normalize",
    "pointer_abi",
    "record_fields",
    "record_tuple",
    "result_error",
    "result_kind",
    "scan_op",
    "stateful",
    "stateless",
]

#: The distribution's version (``statefn-scan``); the same as ``scan.__version__``.
__version__ = "0.1.0"
