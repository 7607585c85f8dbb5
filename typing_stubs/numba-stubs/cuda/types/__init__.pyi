# SPDX-License-Identifier: Apache-2.0
# The part of numba.cuda.types that host code names when it spells kernel
# signatures (compile, compile_all, declare_device, @cuda.jit(sig)). Anything
# else resolves to Any.

# typing names are imported privately: unknown attributes of this module are Any,
# and numba.cuda.types has its own Literal and Any types
from typing import Any as _Any
from typing import Literal as _Literal
from typing import TypeAlias as _TypeAlias

_Layout: _TypeAlias = _Literal["C", "F", "A"]

class Type:
    name: str
    def __call__(self, *args: Type) -> _Signature: ...
    def __getitem__(self, index: slice | tuple[slice, ...]) -> Array: ...

class _Signature:
    return_type: Type
    args: tuple[Type, ...]

class Dummy(Type): ...
class NoneType(Dummy): ...
class Boolean(Type): ...
class Number(Type): ...
class Integer(Number): ...
class Float(Number): ...
class Complex(Number): ...

class Array(Type):
    dtype: Type
    ndim: int
    layout: _Layout
    def __init__(
        self,
        dtype: Type,
        ndim: int,
        layout: _Layout,
        readonly: bool = False,
        name: str | None = None,
        aligned: bool = True,
    ) -> None: ...

class UniTuple(Type):
    dtype: Type
    count: int
    def __init__(self, dtype: Type, count: int) -> None: ...

class Tuple(Type):
    types: tuple[Type, ...]
    def __init__(self, types: tuple[Type, ...] | list[Type]) -> None: ...

class CPointer(Type):
    dtype: Type
    def __init__(self, dtype: Type, addrspace: int | None = None) -> None: ...

void: NoneType
none: NoneType
boolean: Boolean
bool_: Boolean
b1: Boolean
int8: Integer
int16: Integer
int32: Integer
int64: Integer
uint8: Integer
uint16: Integer
uint32: Integer
uint64: Integer
intp: Integer
uintp: Integer
i1: Integer
i2: Integer
i4: Integer
i8: Integer
u1: Integer
u2: Integer
u4: Integer
u8: Integer
float16: Float
float32: Float
float64: Float
f2: Float
f4: Float
f8: Float
complex64: Complex
complex128: Complex
c8: Complex
c16: Complex
voidptr: Type

def __getattr__(name: str) -> _Any: ...
