# SPDX-License-Identifier: Apache-2.0
"""``scan.launcher``'s parameters, as numba-cuda passes them to a kernel (no GPU needed).

The launches themselves are tests/sim/test_sim_launcher.py, on a GPU too.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
import pytest
from numba.cuda import types
from numba.cuda.np.numpy_support import as_dtype

from scan._numba_cuda._launch import _core_stream, _packer

STREAM = r"stream must be a numba-cuda stream \(cuda.stream\(\)\), a cuda.core Stream"


class DeviceLike:
    """An object with a CUDA array interface (no memory behind it: never launched)."""

    def __init__(self, shape: tuple[int, ...], strides: Any, typestr: str = "<i8") -> None:
        self.__cuda_array_interface__ = {
            "shape": shape,
            "strides": strides,
            "typestr": typestr,
            "data": (0x7000, False),
            "version": 3,
        }


def _params(ty: Any, value: Any) -> list[Any]:
    pack = _packer(ty, types, as_dtype)
    assert pack is not None
    params: list[Any] = []
    pack(value, params)
    return params


def test_a_c_contiguous_array_is_its_size_itemsize_data_shape_and_strides():
    # numba-cuda's array ABI: meminfo, parent, nitems, itemsize, data, shape..., strides...
    got = _params(types.int64[:, ::1], DeviceLike((3, 5), None))
    assert got == [0, 0, 15, 8, 0x7000, 3, 5, 40, 8]


def test_a_strided_array_keeps_its_strides():
    got = _params(types.Array(types.float32, 2, "A"), DeviceLike((4, 3), (48, 8), "<f4"))
    assert got == [0, 0, 12, 4, 0x7000, 4, 3, 48, 8]


def test_scalars_take_the_parameters_c_types():
    (i32,) = _params(types.int32, 7)
    assert isinstance(i32, ctypes.c_int32)
    assert i32.value == 7
    (u64,) = _params(types.uint64, 2**63)
    assert isinstance(u64, ctypes.c_uint64)
    (f32,) = _params(types.float32, 0.5)
    assert isinstance(f32, ctypes.c_float)
    (f64,) = _params(types.float64, 0.25)
    assert isinstance(f64, ctypes.c_double)
    assert _params(types.boolean, 1) == [True]


@pytest.mark.parametrize("ty", [types.complex64, types.UniTuple(types.int32, 2), types.float16])
def test_other_parameters_launch_through_the_kernel(ty):
    # no direct packing: the launcher keeps launching through kernel[...]
    assert _packer(ty, types, as_dtype) is None


def test_a_host_array_is_refused_with_the_fix():
    pack = _packer(types.int64[::1], types, as_dtype)
    with pytest.raises(TypeError, match=r"a ndarray is not device memory; copy it to the device"):
        pack(np.zeros(3, np.int64), [])


def test_streams():
    from cuda.core import Stream

    assert int(_core_stream(None).handle) == 0
    assert int(_core_stream(0).handle) == 0
    with pytest.raises(TypeError, match=STREAM):
        _core_stream("default")
    assert isinstance(_core_stream(None), Stream)


def test_a_stream_that_is_none_is_refused_when_bound():
    from numba import cuda

    import scan

    @cuda.jit
    def kernel(x):
        pass

    with pytest.raises(TypeError, match=STREAM):
        scan.launcher(kernel, 1, 32, stream="default")


class NumbaLike(DeviceLike):
    """Marked as numba-cuda's own device memory."""

    __cuda_memory__ = True


def test_which_arrays_parameters_are_kept():
    pack = _packer(types.int64[:, ::1], types, as_dtype)
    assert pack(NumbaLike((3, 5), None), []) is True  # numba-cuda's arrays do not change
    assert pack(DeviceLike((3, 5), None), []) is False  # another library's may be reshaped
    assert _packer(types.int32, types, as_dtype)(1, []) is False


def test_a_bound_launch_checks_and_converts_an_array_once():
    from scan._numba_cuda._launch import _Bound

    typed: list[Any] = []
    launched: list[tuple[Any, ...]] = []
    arr = types.int64[:, ::1]

    def typeof(value: Any) -> Any:
        typed.append(value)
        return arr if hasattr(value, "__cuda_array_interface__") else types.int64

    packers = [_packer(arr, types, as_dtype), _packer(types.int64, types, as_dtype)]
    bound = _Bound("kernel", "config", "stream", [arr, types.int64], packers, typeof)
    bound._launch = lambda *a: launched.append(a)
    a, b = NumbaLike((3, 5), None), NumbaLike((3, 5), None)
    bound.launch((a, 1))
    bound.launch((a, 2))  # the same array: neither typed nor converted again
    assert typed == [a, 1, 2]
    assert launched[0][:3] == ("stream", "config", "kernel")
    assert launched[0][3:12] == launched[1][3:12] == (0, 0, 15, 8, 0x7000, 3, 5, 40, 8)
    assert (launched[0][12].value, launched[1][12].value) == (1, 2)
    bound.launch((b, 3))  # another array is
    assert typed[-2:] == [b, 3]
    wrong = DeviceLike((3,), None)
    with pytest.raises(TypeError, match=r"argument 1 is .* where the kernel was compiled"):
        bound.launch((a, wrong))


def test_tensor_types_are_remembered_per_dtype_shape_and_strides(monkeypatch):
    # CUDA tensors take this path (tests/gpu/test_launcher_torch_gpu.py launches them); here
    # CPU tensors stand in for them, to count the typings a launch would do
    torch = pytest.importorskip("torch")
    from scan._numba_cuda import _launch

    monkeypatch.setattr(_launch, "_cuda_tensor", lambda value: isinstance(value, torch.Tensor))
    typed: list[Any] = []
    types_of = _launch._TensorTypes(lambda value: typed.append(value) or len(typed))
    a = torch.zeros(3, 5)
    assert types_of(a) == types_of(torch.ones(3, 5)) == 1  # typed once: same dtype, shape, strides
    assert types_of(a.double()) == 2
    assert types_of(torch.zeros(3, 6)) == 3
    assert types_of(torch.zeros(5, 3).t()) == 4  # (3, 5) with other strides
    assert types_of("not a tensor") == 5  # typed every time
    assert types_of("not a tensor") == 6
    assert len(typed) == 6


def test_a_tensor_like_the_last_one_is_only_addressed(monkeypatch):
    # per argument, a launcher keeps the last tensor's (dtype, shape, strides) and the
    # parameters they settle: a new tensor like it (torch code makes new ones each call) is
    # neither typed nor compared again, only its address read; another is typed (CPU tensors
    # stand in for CUDA ones, as above; the launches themselves are the GPU tests')
    torch = pytest.importorskip("torch")
    from scan._numba_cuda import _launch

    monkeypatch.setattr(_launch, "_cuda_tensor", lambda value: isinstance(value, torch.Tensor))
    f32 = types.Array(types.float32, 2, "C")
    typed: list[Any] = []

    def typeof(value: Any) -> Any:
        if isinstance(value, int):
            return types.int64
        typed.append(value)
        layout = "C" if value.is_contiguous() else "A"
        return types.Array(getattr(types, str(value.dtype).split(".")[1]), value.dim(), layout)

    launches: list[tuple[Any, ...]] = []
    packers = [_packer(ty, types, as_dtype) for ty in (f32, types.int64)]
    bound = _launch._Bound(None, None, None, [f32, types.int64], packers, typeof)
    bound._launch = lambda stream, config, function, *params: launches.append(params)
    first, second = torch.zeros(3, 5), torch.ones(3, 5)
    bound.launch([first, 7])
    bound.launch([second, 8])
    assert len(typed) == 1  # the second tensor was not typed
    head = [0, 0, 15, 4]
    tail = [3, 5, 20, 4]
    assert list(launches[0][:4]) == list(launches[1][:4]) == head
    assert launches[0][4] == first.data_ptr()
    assert launches[1][4] == second.data_ptr()
    assert list(launches[1][5:9]) == tail
    assert [p.value for p in launches[1][9:]] == [8]
    bound.launch([torch.zeros(2, 5), 9])  # another shape: typed, then remembered
    bound.launch([torch.ones(2, 5), 9])
    assert len(typed) == 2
    assert list(launches[3][:4]) == [0, 0, 10, 4]
    assert list(launches[3][5:9]) == [2, 5, 20, 4]
    with pytest.raises(TypeError, match="argument 0 is array\\(float64"):
        bound.launch([torch.zeros(3, 5, dtype=torch.float64), 1])  # another dtype: refused
    with pytest.raises(TypeError, match="argument 0 is array\\(float32, 2d, A\\)"):
        bound.launch([torch.zeros(5, 3).t(), 1])  # other strides: typed, refused
    empty = torch.zeros(0, 5)
    bound.launch([empty, 1])
    bound.launch([torch.zeros(0, 5), 1])
    assert launches[-1][4] == launches[-2][4] == 0  # no address for no items
