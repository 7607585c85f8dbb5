# SPDX-License-Identifier: Apache-2.0
# Stubs for the kernel-side subset of numba.cuda (numba-cuda 0.30), plus the host
# calls that launch kernels and move arrays. Types only; see typing_stubs/README.md.

from collections.abc import Callable, Sequence
from typing import Any, Generic, Literal, ParamSpec, SupportsIndex, TypeAlias, TypeVar, overload

import numpy as np
from numpy.typing import NDArray

from . import launchconfig as launchconfig
from . import types as types

__all__ = [
    "Archive",
    "CUSource",
    "Cubin",
    "Fatbin",
    "LTOIR",
    "LinkableCode",
    "Object",
    "PTXSource",
    "activemask",
    "all_sync",
    "any_sync",
    "as_cuda_array",
    "atomic",
    "ballot_sync",
    "blockDim",
    "blockIdx",
    "brev",
    "cbrt",
    "close",
    "clz",
    "compile",
    "compile_all",
    "compile_ptx",
    "const",
    "declare_device",
    "default_stream",
    "detect",
    "device_array",
    "device_array_like",
    "eq_sync",
    "event",
    "event_elapsed_time",
    "external_stream",
    "ffs",
    "fma",
    "get_current_device",
    "grid",
    "gridDim",
    "gridsize",
    "is_available",
    "is_bfloat16_supported",
    "is_cuda_array",
    "is_float16_supported",
    "jit",
    "laneid",
    "lanemask_lt",
    "launchconfig",
    "legacy_default_stream",
    "list_devices",
    "local",
    "managed_array",
    "mapped_array",
    "mapped_array_like",
    "nanosleep",
    "per_thread_default_stream",
    "pinned_array",
    "pinned_array_like",
    "popc",
    "select_device",
    "selp",
    "shared",
    "shfl_down_sync",
    "shfl_sync",
    "shfl_up_sync",
    "shfl_xor_sync",
    "stream",
    "synchronize",
    "syncthreads",
    "syncthreads_and",
    "syncthreads_count",
    "syncthreads_or",
    "syncwarp",
    "threadIdx",
    "threadfence",
    "threadfence_block",
    "threadfence_system",
    "to_device",
    "types",
    "warpsize",
]

_P = ParamSpec("_P")
_R = TypeVar("_R")
_ScalarT = TypeVar("_ScalarT", bound=np.generic)
_NumberT = TypeVar("_NumberT", bound=np.number[Any] | np.bool)
_ShapeT_co = TypeVar("_ShapeT_co", bound=tuple[int, ...], covariant=True)
_DTypeT_co = TypeVar("_DTypeT_co", bound=np.dtype[Any], covariant=True)

# ------------------------------------------------------------------ aliases

_ShapeLike: TypeAlias = SupportsIndex | tuple[SupportsIndex, ...]
_Dim: TypeAlias = int | tuple[int] | tuple[int, int] | tuple[int, int, int]
_DTypeOf: TypeAlias = type[_ScalarT] | np.dtype[_ScalarT]
_Index: TypeAlias = SupportsIndex | tuple[SupportsIndex, ...]
# the scalar operand of a device intrinsic: a NumPy scalar or a Python number
_Scalar: TypeAlias = np.number[Any] | np.bool | int | float
_Predicate: TypeAlias = bool | int | np.bool | np.integer[Any]
# what @cuda.jit(sig) accepts as signatures: "void(int32[:])", a numba signature,
# or a list of those
_SignatureLike: TypeAlias = str | types._Signature | types.Type | Sequence[str | types._Signature]
_Link: TypeAlias = Sequence[str | LinkableCode]

# ------------------------------------------------------------- host objects

class _Stream:
    def synchronize(self) -> None: ...

class _Event:
    def record(self, stream: _Stream | int = ...) -> None: ...
    def synchronize(self) -> None: ...
    def elapsed_time(self, evtend: _Event) -> float: ...

class LinkableCode:
    def __init__(self, data: bytes | str, name: str | None = None) -> None: ...

class Archive(LinkableCode): ...
class CUSource(LinkableCode): ...
class Cubin(LinkableCode): ...
class Fatbin(LinkableCode): ...
class LTOIR(LinkableCode): ...
class Object(LinkableCode): ...
class PTXSource(LinkableCode): ...

# NOTE: a device array is typed as an ndarray subclass so that it can be passed
# where a kernel parameter is annotated NDArray[...]; host code must still copy it
# back (copy_to_host) before using NumPy on it, which the types do not enforce.
class _DeviceNDArray(np.ndarray[tuple[Any, ...], np.dtype[_ScalarT]]):
    def copy_to_host(
        self, ary: NDArray[_ScalarT] | None = None, stream: _Stream | int = 0
    ) -> NDArray[_ScalarT]: ...
    def copy_to_device(self, ary: NDArray[_ScalarT], stream: _Stream | int = 0) -> None: ...
    def is_c_contiguous(self) -> bool: ...
    def is_f_contiguous(self) -> bool: ...
    def split(self, section: int, stream: _Stream | int = 0) -> list[_DeviceNDArray[_ScalarT]]: ...
    def get_ipc_handle(self) -> Any: ...
    @property
    def alloc_size(self) -> int: ...
    @property
    def nbytes(self) -> int: ...

# ------------------------------------------------------- kernels, functions

class _KernelLaunch(Generic[_P]):
    @property
    def griddim(self) -> tuple[int, int, int]: ...
    @property
    def blockdim(self) -> tuple[int, int, int]: ...
    @property
    def sharedmem(self) -> int: ...
    def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> None: ...

class _Kernel(Generic[_P]):
    @property
    def py_func(self) -> Callable[_P, None]: ...
    @overload
    def __getitem__(self, config: tuple[_Dim, _Dim]) -> _KernelLaunch[_P]: ...
    @overload
    def __getitem__(self, config: tuple[_Dim, _Dim, _Stream | int]) -> _KernelLaunch[_P]: ...
    @overload
    def __getitem__(self, config: tuple[_Dim, _Dim, _Stream | int, int]) -> _KernelLaunch[_P]: ...
    def configure(
        self, griddim: _Dim, blockdim: _Dim, stream: _Stream | int = 0, sharedmem: int = 0
    ) -> _KernelLaunch[_P]: ...
    def forall(
        self, ntasks: int, tpb: int = 0, stream: _Stream | int = 0, sharedmem: int = 0
    ) -> _KernelLaunch[_P]: ...
    def compile(self, sig: _SignatureLike) -> Any: ...
    def specialize(self, *args: Any) -> _Kernel[_P]: ...
    def inspect_types(self, file: Any = None) -> None: ...
    def inspect_asm(self, signature: Any = None) -> Any: ...
    def inspect_llvm(self, signature: Any = None) -> Any: ...
    def get_regs_per_thread(self, signature: Any = None) -> Any: ...
    def get_shared_mem_per_block(self, signature: Any = None) -> Any: ...

class _DeviceFunction(Generic[_P, _R]):
    @property
    def py_func(self) -> Callable[_P, _R]: ...
    def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _R: ...
    def compile(self, sig: _SignatureLike) -> Any: ...

# @cuda.jit and cuda.jit(func, ...): a kernel (kernels return nothing)
@overload
def jit(
    func_or_sig: Callable[_P, None],
    /,
    *,
    device: Literal[False] = False,
    inline: Literal["never", "always"] = "never",
    forceinline: bool = False,
    link: _Link = (),
    debug: bool | None = None,
    opt: bool | None = None,
    lineinfo: bool = False,
    cache: bool = False,
    launch_bounds: int | tuple[int, ...] | None = None,
    lto: bool | None = None,
    shared_memory_carveout: str | int | None = None,
    fastmath: bool = False,
    max_registers: int | None = None,
    extensions: Sequence[Any] | None = None,
) -> _Kernel[_P]: ...

# @cuda.jit(...) and @cuda.jit("void(int32[:])", ...): a kernel decorator
@overload
def jit(
    func_or_sig: _SignatureLike | None = None,
    /,
    *,
    device: Literal[False] = False,
    inline: Literal["never", "always"] = "never",
    forceinline: bool = False,
    link: _Link = (),
    debug: bool | None = None,
    opt: bool | None = None,
    lineinfo: bool = False,
    cache: bool = False,
    launch_bounds: int | tuple[int, ...] | None = None,
    lto: bool | None = None,
    shared_memory_carveout: str | int | None = None,
    fastmath: bool = False,
    max_registers: int | None = None,
    extensions: Sequence[Any] | None = None,
) -> Callable[[Callable[_P, None]], _Kernel[_P]]: ...

# @cuda.jit(device=True, ...) and @cuda.jit("int32(int32)", device=True): a device-function
# decorator. NOTE: numba types are callable (types.int32(x) spells a signature), so this
# overlaps the device-function overload below; a signature argument belongs here.
@overload
def jit(  # type: ignore[overload-overlap]
    func_or_sig: _SignatureLike | None = None,
    /,
    *,
    device: Literal[True],
    inline: Literal["never", "always"] = "never",
    forceinline: bool = False,
    link: _Link = (),
    debug: bool | None = None,
    opt: bool | None = None,
    lineinfo: bool = False,
    cache: bool = False,
    launch_bounds: int | tuple[int, ...] | None = None,
    lto: bool | None = None,
    shared_memory_carveout: str | int | None = None,
    fastmath: bool = False,
    max_registers: int | None = None,
    extensions: Sequence[Any] | None = None,
) -> Callable[[Callable[_P, _R]], _DeviceFunction[_P, _R]]: ...

# cuda.jit(func, device=True, ...): a device function
@overload
def jit(
    func_or_sig: Callable[_P, _R],
    /,
    *,
    device: Literal[True],
    inline: Literal["never", "always"] = "never",
    forceinline: bool = False,
    link: _Link = (),
    debug: bool | None = None,
    opt: bool | None = None,
    lineinfo: bool = False,
    cache: bool = False,
    launch_bounds: int | tuple[int, ...] | None = None,
    lto: bool | None = None,
    shared_memory_carveout: str | int | None = None,
    fastmath: bool = False,
    max_registers: int | None = None,
    extensions: Sequence[Any] | None = None,
) -> _DeviceFunction[_P, _R]: ...

# NOTE: foreign functions are declared from a signature the checker cannot read,
# so their call is typed loosely.
class _DeclaredDevice:
    def __call__(self, *args: Any) -> Any: ...

def declare_device(
    name: str,
    sig: str | types._Signature,
    link: LinkableCode | str | Sequence[LinkableCode | str] | None = None,
    use_cooperative: bool = False,
    abi: Literal["numba", "c"] = "numba",
) -> _DeclaredDevice: ...

# ------------------------------------------------------------- host compile

_Output: TypeAlias = Literal["ptx", "ltoir"]

@overload
def compile(
    pyfunc: Callable[..., Any],
    sig: _SignatureLike,
    debug: bool | None = None,
    lineinfo: bool = False,
    device: bool = True,
    fastmath: bool = False,
    cc: tuple[int, int] | None = None,
    opt: bool | None = None,
    abi: Literal["c", "numba"] = "c",
    abi_info: dict[str, str] | None = None,
    output: Literal["ptx"] = "ptx",
    forceinline: bool = False,
    launch_bounds: int | tuple[int, ...] | None = None,
) -> tuple[str, types.Type]: ...
@overload
def compile(
    pyfunc: Callable[..., Any],
    sig: _SignatureLike,
    debug: bool | None = None,
    lineinfo: bool = False,
    device: bool = True,
    fastmath: bool = False,
    cc: tuple[int, int] | None = None,
    opt: bool | None = None,
    abi: Literal["c", "numba"] = "c",
    abi_info: dict[str, str] | None = None,
    *,
    output: Literal["ltoir"],
    forceinline: bool = False,
    launch_bounds: int | tuple[int, ...] | None = None,
) -> tuple[bytes, types.Type]: ...
def compile_all(
    pyfunc: Callable[..., Any],
    sig: _SignatureLike,
    debug: bool | None = None,
    lineinfo: bool = False,
    device: bool = True,
    fastmath: bool = False,
    cc: tuple[int, int] | None = None,
    opt: bool | None = None,
    abi: Literal["c", "numba"] = "c",
    abi_info: dict[str, str] | None = None,
    output: _Output = "ltoir",
    forceinline: bool = False,
    launch_bounds: int | tuple[int, ...] | None = None,
) -> tuple[list[str | bytes], types.Type]: ...
def compile_ptx(
    pyfunc: Callable[..., Any],
    sig: _SignatureLike,
    debug: bool | None = None,
    lineinfo: bool = False,
    device: bool = False,
    fastmath: bool = False,
    cc: tuple[int, int] | None = None,
    opt: bool | None = None,
    abi: Literal["c", "numba"] = "numba",
    abi_info: dict[str, str] | None = None,
    forceinline: bool = False,
    launch_bounds: int | tuple[int, ...] | None = None,
) -> tuple[str, types.Type]: ...

# ------------------------------------------------------------ host memory

def to_device(
    obj: NDArray[_ScalarT],
    stream: _Stream | int = 0,
    copy: bool = True,
    to: _DeviceNDArray[_ScalarT] | None = None,
) -> _DeviceNDArray[_ScalarT]: ...
@overload
def device_array(
    shape: _ShapeLike,
    dtype: _DTypeOf[_ScalarT],
    strides: tuple[int, ...] | None = None,
    order: Literal["C", "F"] = "C",
    stream: _Stream | int = 0,
) -> _DeviceNDArray[_ScalarT]: ...
@overload
def device_array(
    shape: _ShapeLike,
    *,
    strides: tuple[int, ...] | None = None,
    order: Literal["C", "F"] = "C",
    stream: _Stream | int = 0,
) -> _DeviceNDArray[np.float64]: ...
def device_array_like(
    ary: NDArray[_ScalarT], stream: _Stream | int = 0
) -> _DeviceNDArray[_ScalarT]: ...
def pinned_array(
    shape: _ShapeLike,
    dtype: _DTypeOf[_ScalarT],
    strides: tuple[int, ...] | None = None,
    order: Literal["C", "F"] = "C",
) -> NDArray[_ScalarT]: ...
def mapped_array(
    shape: _ShapeLike,
    dtype: _DTypeOf[_ScalarT],
    strides: tuple[int, ...] | None = None,
    order: Literal["C", "F"] = "C",
    stream: _Stream | int = 0,
    portable: bool = False,
    wc: bool = False,
) -> _DeviceNDArray[_ScalarT]: ...
def managed_array(
    shape: _ShapeLike,
    dtype: _DTypeOf[_ScalarT],
    strides: tuple[int, ...] | None = None,
    order: Literal["C", "F"] = "C",
    stream: _Stream | int = 0,
    attach_global: bool = True,
) -> _DeviceNDArray[_ScalarT]: ...
def pinned_array_like(ary: NDArray[_ScalarT]) -> NDArray[_ScalarT]: ...
def mapped_array_like(
    ary: NDArray[_ScalarT], stream: _Stream | int = 0, portable: bool = False, wc: bool = False
) -> _DeviceNDArray[_ScalarT]: ...
def as_cuda_array(obj: Any, sync: bool = True) -> _DeviceNDArray[Any]: ...
def is_cuda_array(obj: object) -> bool: ...
def synchronize() -> None: ...
def stream() -> _Stream: ...
def default_stream() -> _Stream: ...
def per_thread_default_stream() -> _Stream: ...
def legacy_default_stream() -> _Stream: ...
def external_stream(ptr: int) -> _Stream: ...
def event(timing: bool = True) -> _Event: ...
def event_elapsed_time(evtstart: _Event, evtend: _Event) -> float: ...

class _Device:
    @property
    def id(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def compute_capability(self) -> tuple[int, int]: ...
    def reset(self) -> None: ...

def get_current_device() -> _Device: ...
def select_device(device_id: int) -> _Device: ...
def list_devices() -> list[_Device]: ...
def close() -> None: ...
def is_float16_supported() -> bool: ...
def is_bfloat16_supported() -> bool: ...
def is_available() -> bool: ...
def detect() -> bool: ...

# ------------------------------------------------------------ kernel side

class _Dim3:
    @property
    def x(self) -> int: ...
    @property
    def y(self) -> int: ...
    @property
    def z(self) -> int: ...

threadIdx: _Dim3
blockIdx: _Dim3
blockDim: _Dim3
gridDim: _Dim3
warpsize: int
laneid: int

@overload
def grid(ndim: Literal[1], /) -> int: ...
@overload
def grid(ndim: Literal[2], /) -> tuple[int, int]: ...
@overload
def grid(ndim: Literal[3], /) -> tuple[int, int, int]: ...
@overload
def gridsize(ndim: Literal[1], /) -> int: ...
@overload
def gridsize(ndim: Literal[2], /) -> tuple[int, int]: ...
@overload
def gridsize(ndim: Literal[3], /) -> tuple[int, int, int]: ...

# One item of a local or shared array of a record (structured) dtype: NumPy's
# np.void, whose fields numba reads and writes as attributes (state[0].a = 1.0).
# The field names are not part of the dtype's static type, so every attribute is
# Any; a misspelt field is caught when the kernel compiles. (NumPy's own stubs
# declare np.void with the same ignore: its base class is marked final.)
class _Record(np.void):  # type: ignore[misc]
    def __getattr__(self, name: str, /) -> Any: ...
    def __setattr__(self, name: str, value: Any, /) -> None: ...

# NOTE: NumPy types an element of any ndarray as Any. A local or shared array
# whose shape is written as an int or a tuple of one to three ints carries that
# shape, and an index with one int per dimension gives its scalar type, so that a
# scalar or a 2-D array where a 1-D array is expected is a type error. Other
# indices (slices, one int into a 2-D array) give an array of unknown shape. An
# item of a record array is a _Record (np.void with its fields as attributes).
class _ShapedNDArray(np.ndarray[_ShapeT_co, _DTypeT_co]):
    @overload
    def __getitem__(
        self: _ShapedNDArray[tuple[int], np.dtype[np.void]], key: SupportsIndex, /
    ) -> _Record: ...
    @overload
    def __getitem__(
        self: _ShapedNDArray[tuple[int, int], np.dtype[np.void]],
        key: tuple[SupportsIndex, SupportsIndex],
        /,
    ) -> _Record: ...
    @overload
    def __getitem__(
        self: _ShapedNDArray[tuple[int, int, int], np.dtype[np.void]],
        key: tuple[SupportsIndex, SupportsIndex, SupportsIndex],
        /,
    ) -> _Record: ...
    @overload
    def __getitem__(
        self: _ShapedNDArray[tuple[int], np.dtype[_ScalarT]], key: SupportsIndex, /
    ) -> _ScalarT: ...
    @overload
    def __getitem__(
        self: _ShapedNDArray[tuple[int, int], np.dtype[_ScalarT]],
        key: tuple[SupportsIndex, SupportsIndex],
        /,
    ) -> _ScalarT: ...
    @overload
    def __getitem__(
        self: _ShapedNDArray[tuple[int, int, int], np.dtype[_ScalarT]],
        key: tuple[SupportsIndex, SupportsIndex, SupportsIndex],
        /,
    ) -> _ScalarT: ...
    @overload
    def __getitem__(self, key: Any, /) -> np.ndarray[tuple[Any, ...], _DTypeT_co]: ...

class local:
    @overload
    @staticmethod
    def array(
        shape: SupportsIndex | tuple[SupportsIndex],
        dtype: _DTypeOf[_ScalarT],
        alignment: int | None = None,
    ) -> _ShapedNDArray[tuple[int], np.dtype[_ScalarT]]: ...
    @overload
    @staticmethod
    def array(
        shape: tuple[SupportsIndex, SupportsIndex],
        dtype: _DTypeOf[_ScalarT],
        alignment: int | None = None,
    ) -> _ShapedNDArray[tuple[int, int], np.dtype[_ScalarT]]: ...
    @overload
    @staticmethod
    def array(
        shape: tuple[SupportsIndex, SupportsIndex, SupportsIndex],
        dtype: _DTypeOf[_ScalarT],
        alignment: int | None = None,
    ) -> _ShapedNDArray[tuple[int, int, int], np.dtype[_ScalarT]]: ...
    @overload
    @staticmethod
    def array(
        shape: tuple[SupportsIndex, ...], dtype: _DTypeOf[_ScalarT], alignment: int | None = None
    ) -> NDArray[_ScalarT]: ...

class shared:
    @overload
    @staticmethod
    def array(
        shape: SupportsIndex | tuple[SupportsIndex],
        dtype: _DTypeOf[_ScalarT],
        alignment: int | None = None,
    ) -> _ShapedNDArray[tuple[int], np.dtype[_ScalarT]]: ...
    @overload
    @staticmethod
    def array(
        shape: tuple[SupportsIndex, SupportsIndex],
        dtype: _DTypeOf[_ScalarT],
        alignment: int | None = None,
    ) -> _ShapedNDArray[tuple[int, int], np.dtype[_ScalarT]]: ...
    @overload
    @staticmethod
    def array(
        shape: tuple[SupportsIndex, SupportsIndex, SupportsIndex],
        dtype: _DTypeOf[_ScalarT],
        alignment: int | None = None,
    ) -> _ShapedNDArray[tuple[int, int, int], np.dtype[_ScalarT]]: ...
    @overload
    @staticmethod
    def array(
        shape: tuple[SupportsIndex, ...], dtype: _DTypeOf[_ScalarT], alignment: int | None = None
    ) -> NDArray[_ScalarT]: ...

class const:
    @staticmethod
    def array_like(ndarray: NDArray[_ScalarT], /) -> NDArray[_ScalarT]: ...

def syncthreads() -> None: ...
def syncthreads_count(predicate: _Predicate, /) -> int: ...
def syncthreads_and(predicate: _Predicate, /) -> int: ...
def syncthreads_or(predicate: _Predicate, /) -> int: ...
def syncwarp(mask: int = 0xFFFFFFFF, /) -> None: ...
def threadfence() -> None: ...
def threadfence_block() -> None: ...
def threadfence_system() -> None: ...
def activemask() -> int: ...
def lanemask_lt() -> int: ...
def all_sync(mask: int, predicate: _Predicate, /) -> bool: ...
def any_sync(mask: int, predicate: _Predicate, /) -> bool: ...
def eq_sync(mask: int, predicate: _Predicate, /) -> bool: ...
def ballot_sync(mask: int, predicate: _Predicate, /) -> int: ...
@overload
def shfl_sync(mask: int, value: _NumberT, src_lane: int, /) -> _NumberT: ...
@overload
def shfl_sync(mask: int, value: int, src_lane: int, /) -> int: ...
@overload
def shfl_sync(mask: int, value: float, src_lane: int, /) -> float: ...
@overload
def shfl_up_sync(mask: int, value: _NumberT, delta: int, /) -> _NumberT: ...
@overload
def shfl_up_sync(mask: int, value: int, delta: int, /) -> int: ...
@overload
def shfl_up_sync(mask: int, value: float, delta: int, /) -> float: ...
@overload
def shfl_down_sync(mask: int, value: _NumberT, delta: int, /) -> _NumberT: ...
@overload
def shfl_down_sync(mask: int, value: int, delta: int, /) -> int: ...
@overload
def shfl_down_sync(mask: int, value: float, delta: int, /) -> float: ...
@overload
def shfl_xor_sync(mask: int, value: _NumberT, lane_mask: int, /) -> _NumberT: ...
@overload
def shfl_xor_sync(mask: int, value: int, lane_mask: int, /) -> int: ...
@overload
def shfl_xor_sync(mask: int, value: float, lane_mask: int, /) -> float: ...
def popc(x: int | np.integer[Any], /) -> int: ...
def brev(x: int | np.integer[Any], /) -> int: ...
def clz(x: int | np.integer[Any], /) -> int: ...
def ffs(x: int | np.integer[Any], /) -> int: ...
@overload
def fma(a: _NumberT, b: _NumberT, c: _NumberT, /) -> _NumberT: ...
@overload
def fma(a: float, b: float, c: float, /) -> float: ...
@overload
def cbrt(x: _NumberT, /) -> _NumberT: ...
@overload
def cbrt(x: float, /) -> float: ...
@overload
def selp(predicate: _Predicate, a: _NumberT, b: _NumberT, /) -> _NumberT: ...
@overload
def selp(predicate: _Predicate, a: float, b: float, /) -> float: ...
def nanosleep(ns: int, /) -> None: ...

class atomic:
    @staticmethod
    def add(ary: NDArray[_ScalarT], idx: _Index, val: _ScalarT | int | float, /) -> _ScalarT: ...
    @staticmethod
    def sub(ary: NDArray[_ScalarT], idx: _Index, val: _ScalarT | int | float, /) -> _ScalarT: ...
    @staticmethod
    def and_(ary: NDArray[_ScalarT], idx: _Index, val: _ScalarT | int, /) -> _ScalarT: ...
    @staticmethod
    def or_(ary: NDArray[_ScalarT], idx: _Index, val: _ScalarT | int, /) -> _ScalarT: ...
    @staticmethod
    def xor(ary: NDArray[_ScalarT], idx: _Index, val: _ScalarT | int, /) -> _ScalarT: ...
    @staticmethod
    def inc(ary: NDArray[_ScalarT], idx: _Index, val: _ScalarT | int, /) -> _ScalarT: ...
    @staticmethod
    def dec(ary: NDArray[_ScalarT], idx: _Index, val: _ScalarT | int, /) -> _ScalarT: ...
    @staticmethod
    def exch(ary: NDArray[_ScalarT], idx: _Index, val: _ScalarT | int | float, /) -> _ScalarT: ...
    @staticmethod
    def max(ary: NDArray[_ScalarT], idx: _Index, val: _ScalarT | int | float, /) -> _ScalarT: ...
    @staticmethod
    def min(ary: NDArray[_ScalarT], idx: _Index, val: _ScalarT | int | float, /) -> _ScalarT: ...
    @staticmethod
    def nanmax(
        ary: NDArray[_ScalarT], idx: _Index, val: _ScalarT | int | float, /
    ) -> _ScalarT: ...
    @staticmethod
    def nanmin(
        ary: NDArray[_ScalarT], idx: _Index, val: _ScalarT | int | float, /
    ) -> _ScalarT: ...
    @staticmethod
    def compare_and_swap(
        ary: NDArray[_ScalarT], old: _ScalarT | int, val: _ScalarT | int, /
    ) -> _ScalarT: ...
    @staticmethod
    def cas(
        ary: NDArray[_ScalarT], idx: _Index, old: _ScalarT | int, val: _ScalarT | int, /
    ) -> _ScalarT: ...
