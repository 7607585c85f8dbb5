# SPDX-License-Identifier: Apache-2.0
"""``scan.launcher``: a compiled kernel bound to one launch shape, launched with less host work.

``kernel[grid, block](*args)`` does, at every launch, what numba-cuda needs
to find and run the right compiled kernel: it makes a launch configuration
(and a cuda.core stream object for it), types every argument and looks the
types up among the kernel's compiled versions, converts each argument into
the kernel's parameters, and makes a cuda.core ``LaunchConfig``. A loop
that launches the same kernel with the same shape thousands of times pays
all of it every time, where CUB's own C++ kernels, launched from Python
through cuda.core, pay for one ``launch``.

A :class:`Launcher` does the first launch exactly as ``kernel[...]`` does
(compiling the kernel, with its launch shape, if needed) and keeps what it
found: the compiled kernel, its parameter types and a ``LaunchConfig``.
Every later call checks the arguments' types against the compiled ones
(a different type is refused, never converted; a numba-cuda array or a
tile status passed again keeps the parameters it had) and launches with
cuda.core directly. A torch CUDA tensor is typed by its dtype, shape and
strides (the type numba-cuda gave the first tensor of those is remembered;
a tensor like the last one passed in its place is only addressed) and
packed from the tensor itself: numba-cuda types a tensor through DLPack and
another library's array through its array interface, tens of microseconds a
tensor at every launch.

Arguments are device arrays (numba-cuda's, CuPy's, torch's: anything with
``__cuda_array_interface__``, tile statuses included), integers, floats and
booleans; a kernel with any other
parameter, a kernel compiled with ``debug=True``, a numba-cuda-mlir kernel
and the simulator launch through ``kernel[...]`` every time, with the same
results.
"""

from __future__ import annotations

import ctypes
import math
import sys
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from .._tile_status import TileStatus

__all__ = ["Launcher", "launcher"]

_Dim = int | tuple[int, ...]


def launcher(
    kernel: Any, grid: _Dim, block: _Dim, *, stream: Any = None, sharedmem: int = 0
) -> Launcher:
    """Bind `kernel` (a ``cuda.jit`` kernel) to a launch shape, for repeated launches.

    ``launch = scan.launcher(kernel, grid, block)`` then ``launch(*args)``
    runs ``kernel[grid, block](*args)`` on `stream` (a numba-cuda stream,
    a cuda.core ``Stream``, or None for the default stream) with
    `sharedmem` bytes of dynamic shared memory. The first call compiles the
    kernel as a launch does; later calls with arguments of the same types
    launch it with cuda.core directly (torch CUDA tensors are typed by their
    dtype, shape and strides and packed from the tensor, with no DLPack
    export or array interface at each call).

    Parameters
    ----------
    kernel : numba-cuda dispatcher
        A ``@cuda.jit`` kernel (a numba-cuda-mlir kernel is launched through
        its own ``kernel[...]``).
    grid, block : int or tuple of int
        The launch's grid and block, as in ``kernel[grid, block]``.
    stream : optional
        The stream every launch goes to.
    sharedmem : int
        Dynamic shared memory per block, in bytes.

    Raises
    ------
    TypeError
        At a call, when an argument's type differs from the one the kernel
        was compiled for at the first call, or a host (NumPy) array is given
        for a device array.
    """
    if not callable(getattr(kernel, "__getitem__", None)):
        raise TypeError(
            f"scan.launcher takes a @cuda.jit kernel (got {type(kernel).__name__}); "
            "decorate the kernel function with @cuda.jit"
        )
    from numba.cuda.core import config

    if (
        stream
        and not config.ENABLE_CUDASIM  # the simulator's streams: kernel[...] takes them
        and not hasattr(stream, "handle")
    ):
        raise TypeError(_STREAM_ERROR.format(type(stream).__name__))
    if not isinstance(sharedmem, int) or isinstance(sharedmem, bool) or sharedmem < 0:
        raise ValueError(f"sharedmem must be a number of bytes, 0 or more (got {sharedmem!r})")
    return Launcher(kernel, _dim3(grid, "grid"), _dim3(block, "block"), stream, sharedmem)


def _dim3(dim: object, what: str) -> tuple[int, int, int]:
    dims = dim if isinstance(dim, tuple) else (dim,)
    if not 1 <= len(dims) <= 3 or not all(
        isinstance(d, int) and not isinstance(d, bool) and d >= 1 for d in dims
    ):
        raise ValueError(
            f"{what} must be a positive int or a tuple of 1 to 3 positive ints (got {dim!r})"
        )
    return (*dims, *(1,) * (3 - len(dims)))


class Launcher:
    """A kernel bound to its grid, block, stream and dynamic shared memory (:func:`launcher`)."""

    def __init__(
        self,
        kernel: Any,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        stream: Any,
        sharedmem: int,
    ) -> None:
        self.kernel = kernel
        self.grid = grid
        self.block = block
        self.stream = stream
        self.sharedmem = sharedmem
        self._bound: _Bound | None = None
        self._delegate = False

    def __repr__(self) -> str:
        how = "not launched yet"
        if self._bound is not None:
            how = "cuda.core launches"
        elif self._delegate:
            how = "kernel[...] launches"
        name = getattr(getattr(self.kernel, "py_func", None), "__name__", "kernel")
        return f"<scan.Launcher {name}[{self.grid}, {self.block}] ({how})>"

    @property
    def direct(self) -> bool:
        """Whether calls after the first launch with cuda.core directly."""
        return self._bound is not None

    def __call__(self, *args: Any) -> None:
        bound = self._bound
        if bound is not None:
            bound.launch(args)
            return
        configured = self.kernel[self.grid, self.block, self.stream or 0, self.sharedmem]
        if self._delegate:
            configured(*args)
            return
        launched: list[Any] = []
        callbacks = getattr(configured, "pre_launch_callbacks", None)
        if callbacks is not None:
            callbacks.append(lambda compiled, config: launched.append(compiled))
        configured(*args)
        self._bound = _bind(launched[0], self, args) if len(launched) == 1 else None
        self._delegate = self._bound is None


class _Bound:
    """What a launcher keeps from its first launch: the compiled kernel and its parameters."""

    def __init__(
        self,
        function: Any,
        config: Any,
        stream: Any,
        types: Sequence[Any],
        packers: Sequence[Callable[[Any, list[Any]], bool]],
        typeof: Callable[[Any], Any],
    ) -> None:
        from cuda.core import launch

        self._launch = launch
        self._function = function
        self._config = config
        self._stream = stream
        self._types = tuple(types)
        self._packers = tuple(packers)
        self._typeof = typeof
        # per argument, the last array passed (weakly) and its parameters: an
        # array's type, address and shape do not change, so passing it again
        # is not checked and converted again
        self._last: list[tuple[weakref.ref[Any], list[Any]] | None] = [None] * len(self._types)
        # per argument, the (dtype, shape, strides) of the last torch tensor passed and the
        # parameters those settle: a tensor like it (a new one each call, as torch code makes
        # them) is neither typed nor compared again, only its address read
        self._tensors: list[tuple[tuple[Any, ...], list[Any], list[Any]] | None] = [None] * len(
            self._types
        )

    def launch(self, args: Sequence[Any]) -> None:
        if len(args) != len(self._types):
            raise TypeError(
                f"scan.launcher: the kernel takes {len(self._types)} arguments ({len(args)} given)"
            )
        params: list[Any] = []
        last = self._last
        tensors = self._tensors
        for i, value in enumerate(args):
            key = None
            if _cuda_tensor(value):
                key = (value.dtype, value.shape, value.stride())
                known = tensors[i]
                if known is not None and known[0] == key:
                    params += known[1]
                    params.append(value.data_ptr() if known[1][2] else 0)
                    params += known[2]
                    continue
            else:
                seen = last[i]
                if seen is not None and seen[0]() is value:  # the array of the last launch
                    params += seen[1]
                    continue
            got = self._typeof(value)
            if got != self._types[i]:
                raise TypeError(
                    f"scan.launcher: argument {i} is {got} where the kernel was compiled for "
                    f"{self._types[i]} at this launcher's first call; make a launcher for each "
                    "set of argument types (or launch with kernel[grid, block](...), which "
                    "compiles for each)"
                )
            part: list[Any] = []
            if self._packers[i](value, part):
                last[i] = (weakref.ref(value), part)
            elif key is not None:  # meminfo, parent, size, itemsize | data | shape, strides
                tensors[i] = (key, part[:4], part[5:])
            params += part
        self._launch(self._stream, self._config, self._function, *params)


def _bind(compiled: Any, launcher: Launcher, args: Sequence[Any]) -> _Bound | None:
    """The direct launch of `compiled` (numba-cuda's kernel), or None where it cannot be made."""
    # imported here: the simulator's numba.cuda has no typing (it never binds)
    from numba.cuda import types
    from numba.cuda.np.numpy_support import as_dtype
    from numba.cuda.typing.typeof import Purpose, typeof

    library = getattr(compiled, "library", None)  # a numba-cuda kernel's code library
    if getattr(compiled, "debug", False) or library is None:
        return None
    argtypes = list(getattr(compiled, "argument_types", ()))
    if len(argtypes) != len(args):
        return None
    packers = []
    for ty in argtypes:
        pack = _packer(ty, types, as_dtype)
        if pack is None:
            return None
        packers.append(pack)
    function = library.get_cufunc().kernel
    config = _launch_config(launcher, bool(getattr(compiled, "cooperative", False)))
    return _Bound(
        function,
        config,
        _core_stream(launcher.stream),
        argtypes,
        packers,
        _TensorTypes(lambda value: typeof(value, Purpose.argument)),
    )


def _cuda_tensor(value: Any) -> bool:
    """Whether `value` is a plain torch CUDA tensor, dense, whose Numba type its dtype, shape
    and strides settle (torch is looked up, never imported: without it nothing is a tensor).
    Others (subclasses, tensors that require grad, sparse or conjugate views) take
    numba-cuda's own typing and the array interface, with their messages."""
    torch = sys.modules.get("torch")
    return (
        torch is not None
        and type(value) is torch.Tensor
        and value.is_cuda
        and not value.requires_grad
        and not value.is_sparse
        and not value.is_conj()
        and not value.is_neg()
    )


class _TensorTypes:
    """numba-cuda's ``typeof``, remembered for torch CUDA tensors of one dtype, shape and
    strides: numba-cuda types a tensor through DLPack, tens of microseconds a launch, and the
    type follows from those three (an array type: dtype, dimensions, layout)."""

    LIMIT = 256  # shapes remembered; others are typed each time

    def __init__(self, typeof: Callable[[Any], Any]) -> None:
        self._typeof = typeof
        self._known: dict[tuple[Any, ...], Any] = {}

    def __call__(self, value: Any) -> Any:
        if not _cuda_tensor(value):
            return self._typeof(value)
        key = (value.dtype, value.shape, value.stride())
        ty = self._known.get(key)
        if ty is None:
            ty = self._typeof(value)
            if len(self._known) < self.LIMIT:
                self._known[key] = ty
        return ty


def _launch_config(launcher: Launcher, cooperative: bool) -> Any:
    from cuda.core import LaunchConfig

    try:
        return LaunchConfig(
            grid=launcher.grid,
            block=launcher.block,
            shmem_size=launcher.sharedmem,
            is_cooperative=cooperative,
        )
    except TypeError:  # cuda.core before 1.0
        return LaunchConfig(
            grid=launcher.grid,
            block=launcher.block,
            shmem_size=launcher.sharedmem,
            cooperative_launch=cooperative,
        )


def _core_stream(stream: Any) -> Any:
    """The cuda.core stream `stream` names (0 or None: the default stream, handle 0)."""
    from cuda.core import Stream

    if not stream:
        return Stream.from_handle(0)
    if isinstance(stream, Stream):
        return stream
    handle = getattr(stream, "handle", None)  # a numba-cuda stream, as kernel[...] reads it
    if handle is not None:
        return Stream.from_handle(int(getattr(handle, "value", handle) or 0))
    raise TypeError(_STREAM_ERROR.format(type(stream).__name__))


_STREAM_ERROR = (
    "stream must be a numba-cuda stream (cuda.stream()), a cuda.core Stream, or None for the "
    "default stream, as kernel[grid, block, stream] takes (got {})"
)


def _packer(ty: Any, types: Any, as_dtype: Callable[[Any], Any]) -> Any:
    """How a value of Numba type `ty` becomes the kernel's parameters (numba-cuda's ABI)."""
    if isinstance(ty, types.Array):
        # bfloat16 has no NumPy dtype of numba-cuda's own (ml_dtypes gives it one)
        bfloat16 = ty.dtype == getattr(types, "bfloat16", None)
        return _array_packer(ty, 2 if bfloat16 else as_dtype(ty.dtype).itemsize)
    if isinstance(ty, types.Boolean):
        return _scalar(bool)
    if isinstance(ty, types.Integer):
        return _scalar(getattr(ctypes, f"c_{ty}"))
    if ty == types.float64:
        return _scalar(ctypes.c_double)
    if ty == types.float32:
        return _scalar(ctypes.c_float)
    return None


def _scalar(convert: Callable[[Any], Any]) -> Callable[[Any, list[Any]], bool]:
    def pack(value: Any, params: list[Any]) -> bool:
        params.append(convert(value))
        return False  # numbers are converted at every launch

    return pack


def _array_packer(ty: Any, itemsize: int) -> Callable[[Any, list[Any]], bool]:
    """Parameters of an array; True where they hold for every launch with the same array."""
    from cuda.core import Stream
    from numba.cuda.core import config

    ndim = ty.ndim

    def pack(value: Any, params: list[Any]) -> bool:
        if _cuda_tensor(value):
            # what torch's __cuda_array_interface__ gives (no producer stream; strides only
            # where not C-contiguous), read from the tensor without building the interface
            shape = tuple(value.shape)
            if value.is_contiguous():
                strides = _c_strides(shape, itemsize)
            else:
                strides = [step * itemsize for step in value.stride()]
            size = value.numel()
            params += [0, 0, size, itemsize, value.data_ptr() if size else 0, *shape, *strides]
            return False  # a tensor may be resized in place
        interface = getattr(value, "__cuda_array_interface__", None)
        if interface is None:
            raise TypeError(
                f"scan.launcher: a {type(value).__name__} is not device memory; copy it to the "
                "device once (cuda.to_device) and launch with the device array (kernel[...] "
                "copies a host array to the device and back at every launch)"
            )
        producer = interface.get("stream")
        sync = (
            producer is not None
            and config.CUDA_ARRAY_INTERFACE_SYNC
            and not getattr(value, "__cuda_memory__", False)
        )
        if sync:
            # as numba-cuda does for another library's array: its producer
            # stream is synchronised first, at every launch (numba-cuda's own
            # arrays are not)
            Stream.from_handle(int(producer)).sync()
        shape = tuple(interface["shape"])
        strides = interface.get("strides")
        if strides is None:  # C-contiguous
            strides = _c_strides(shape, itemsize)
        # meminfo, parent, size, itemsize, data, shape..., strides...
        params += [0, 0, math.prod(shape), itemsize, interface["data"][0], *shape, *strides]
        assert len(shape) == ndim
        # numba-cuda's arrays and tile statuses keep their address and shape;
        # another library's array may be reshaped in place (CuPy's a.shape = ...)
        return getattr(value, "__cuda_memory__", False) is True or isinstance(value, TileStatus)

    return pack


def _c_strides(shape: tuple[int, ...], itemsize: int) -> list[int]:
    """The byte strides of a C-contiguous array of `shape`."""
    strides, step = [], itemsize
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    strides.reverse()
    return strides
