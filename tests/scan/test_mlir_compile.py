# SPDX-License-Identifier: Apache-2.0
"""The numba-cuda-mlir front end: kernels compile and link for sm_90 without a GPU.

The same cases as ``test_lower.py`` (every entry point, dtype and option at
least once), written against ``numba_cuda_mlir.cuda``; the same rejections
with the same classes and words as under numba-cuda (the kernel bodies are
compiled by both front ends); the one private setting the front end relies on
(``scan._numba_cuda_mlir._target``) still works.
"""

from __future__ import annotations

import types as pytypes
from typing import Any

import numpy as np
import pytest

import scan
import statefn
from scan import block

mlir = pytest.importorskip(
    "numba_cuda_mlir",
    reason="!!!!! numba-cuda-mlir is not installed (pip install 'statefn-scan[mlir]'): "
    "the numba-cuda-mlir front end is NOT tested",
)
from numba_cuda_mlir import cuda  # noqa: E402
from numba_cuda_mlir.numba_cuda import types  # noqa: E402
from numba_cuda_mlir.numba_cuda.np.numpy_support import from_dtype  # noqa: E402

pytestmark = pytest.mark.nvrtc

CC = (9, 0)
DTYPES = [
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.float32,
    np.float64,
]


def arr(dtype: Any, ndim: int = 1) -> Any:
    return types.Array(from_dtype(np.dtype(dtype)), ndim, "C")


@statefn.stateful(np.int64)
def running_total(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


@statefn.stateful(np.float64)
def running_max(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    if block_aggregate > prefix:
        state[0] = block_aggregate
    return prefix


@statefn.stateless
def constant_prefix(block_aggregate: Any) -> Any:
    return block_aggregate - block_aggregate + 7


@cuda.jit(device=True)
def saturating_add(a: Any, b: Any) -> Any:
    s = a + b
    return 100 if s > 100 else s


def build(kernel: Any, argtypes: Any, **options: Any) -> list[bytes]:
    jitted = cuda.jit(kernel) if not hasattr(kernel, "py_func") else kernel
    cubin = scan.compile(jitted, tuple(argtypes), cc=CC, **options)
    assert isinstance(cubin, bytes)
    assert cubin[:4] == b"\x7fELF"
    objects = scan.compile(jitted, tuple(argtypes), cc=CC, output="ltoir", **options)
    assert isinstance(objects, list)
    return objects


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_scalar_exclusive_sum_every_dtype(dtype: Any) -> None:
    def k(a: Any) -> None:
        i = cuda.threadIdx.x
        a[i] = block.exclusive_sum(a[i], threads=64)

    build(k, (arr(dtype),))


@pytest.mark.parametrize(
    ("dtype", "algorithm", "ipt"),
    [
        (np.int8, "direct", 4),
        (np.uint16, "striped", 3),
        (np.int32, "vectorize", 4),
        (np.uint32, "transpose", 2),
        (np.int64, "warp_transpose", 2),
        (np.float64, "warp_transpose_timesliced", 2),
        (np.float32, "warp_transpose", 8),
        (np.uint64, "direct", 1),
    ],
)
def test_tile_io_every_algorithm(dtype: Any, algorithm: str, ipt: int) -> None:
    def k(src: Any, dst: Any, n: Any) -> None:
        items = cuda.local.array(ipt, dtype)
        block.load(src, n, items, algorithm=algorithm, oob_default=0, threads=64)
        block.store(dst, n, items, algorithm=algorithm, valid_items=n, threads=64)

    build(k, (arr(dtype), arr(dtype), types.int64))


def test_row_scan_stateful_all_entry_points_link_once() -> None:
    def k(src: Any, dst: Any) -> None:
        state = cuda.local.array(1, np.int64)
        state[0] = 0
        items = cuda.local.array(4, np.int32)
        row = cuda.blockIdx.x
        for base in range(0, src.shape[1], 512):
            block.load(src[row], base, items, threads=128)
            block.inclusive_sum(
                items, items, prefix_op=running_total, prefix_state=state, threads=128
            )
            block.exclusive_sum(
                items, items, prefix_op=running_total, prefix_state=state, threads=128
            )
            block.store(dst[row], base, items, threads=128)

    objects = build(k, (arr(np.int32, 2), arr(np.int32, 2)))
    # kernel + the providers' units (one, or more where earlier kernels
    # compiled some of the calls) + the callback, each exactly once
    assert 3 <= len(objects) <= 6
    assert len(set(objects)) == len(objects)


def test_a_kernels_providers_compile_in_one_unit() -> None:
    """As under numba-cuda: one NVRTC unit for all of a kernel's calls (their
    temp storage overlaid), when no earlier kernel compiled any of them."""

    def k(src: Any, dst: Any) -> None:
        state = cuda.local.array(1, np.int64)
        state[0] = 0
        items = cuda.local.array(3, np.int16)
        block.load(src, 0, items, threads=160)
        block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state, threads=160)
        block.exclusive_sum(items, items, threads=160)
        block.store(dst, 0, items, threads=160)

    # kernel + one unit + the callback
    assert len(build(k, (arr(np.int16), arr(np.int16)))) == 3


def test_two_callbacks_never_collide() -> None:
    def k(a: Any, b: Any) -> None:
        s1 = cuda.local.array(1, np.int64)
        s1[0] = 0
        s2 = cuda.local.array(1, np.float64)
        s2[0] = 0
        i = cuda.threadIdx.x
        a[i] = block.inclusive_sum(a[i], prefix_op=running_total, prefix_state=s1, threads=32)
        b[i] = block.inclusive_scan(
            b[i], scan_op="max", prefix_op=running_max, prefix_state=s2, threads=32
        )

    # kernel + the scan providers' unit(s) + two callbacks
    objects = build(k, (arr(np.int32), arr(np.float32)))
    assert 4 <= len(objects) <= 5
    assert len(set(objects)) == len(objects)


def _case(case: str) -> tuple[Any, tuple[Any, ...]]:
    if case == "scan_inclusive_mul":

        def k(a: Any) -> None:
            i = cuda.threadIdx.x
            a[i] = block.scan(a[i], mode="inclusive", scan_op="*", threads=32)

        return k, (arr(np.uint32),)
    if case == "scan_exclusive_min_init":

        def k(a: Any) -> None:
            items = cuda.local.array(3, np.float64)
            for j in range(3):
                items[j] = a[cuda.threadIdx.x * 3 + j]
            block.scan(
                items, items, mode="exclusive", scan_op=np.minimum, initial_value=1e30, threads=32
            )
            for j in range(3):
                a[cuda.threadIdx.x * 3 + j] = items[j]

        return k, (arr(np.float64),)
    if case == "inclusive_scan_user_op":

        def k(a: Any) -> None:
            i = cuda.threadIdx.x
            a[i] = block.inclusive_scan(a[i], scan_op=saturating_add, threads=32)

        return k, (arr(np.int32),)
    if case == "exclusive_scan_stateless_prefix":

        def k(a: Any) -> None:
            i = cuda.threadIdx.x
            a[i] = block.exclusive_scan(a[i], scan_op="max", prefix_op=constant_prefix, threads=32)

        return k, (arr(np.int16),)
    if case == "inclusive_scan_and_or_xor":

        def k(a: Any) -> None:
            i = cuda.threadIdx.x
            x = block.inclusive_scan(a[i], scan_op="&", threads=32)
            y = block.inclusive_scan(a[i], scan_op="|", threads=32)
            a[i] = block.inclusive_scan(x + y, scan_op="^", threads=32)

        return k, (arr(np.uint64),)
    if case == "block_aggregate":

        def k(a: Any) -> None:
            agg = cuda.local.array(1, np.int32)
            i = cuda.threadIdx.x
            a[i] = block.inclusive_sum(a[i], block_aggregate=agg, threads=32)
            a[i] += agg[0]

        return k, (arr(np.int32),)
    if case == "raking_memoize_2d":

        def k(a: Any) -> None:
            items = cuda.local.array(2, np.int32)
            block.inclusive_sum(items, algorithm="raking_memoize", threads=(8, 16))
            a[0] = items[0]

        return k, (arr(np.int32),)
    if case == "warp_scans_3d":

        def k(a: Any) -> None:
            items = cuda.local.array(2, np.float32)
            out = cuda.local.array(2, np.float32)
            block.exclusive_sum(items, out, algorithm="warp_scans", threads=(4, 4, 8))
            a[0] = out[1]

        return k, (arr(np.float32),)
    if case == "caller_temp":
        nbytes, align = block.temp_storage("scan", np.int32, 128, 4, cc=CC)
        align = max(8, align)

        def k(a: Any) -> None:
            temp = cuda.shared.array(nbytes, np.uint8, alignment=align)
            items = cuda.local.array(4, np.int32)
            block.load(a, 0, items, temp_storage=temp, threads=128)
            block.inclusive_sum(items, items, temp_storage=temp, threads=128)
            block.store(a, 0, items, temp_storage=temp, threads=128)

        return k, (arr(np.int32),)
    if case == "dynamic_temp":

        def k(a: Any) -> None:
            temp = cuda.shared.array(0, np.uint8)
            a[0] = block.inclusive_sum(a[0], temp_storage=temp, threads=128)

        return k, (arr(np.int32),)
    if case == "no_auto_sync":

        def k(a: Any) -> None:
            a[0] = block.inclusive_sum(a[0], auto_sync=False, threads=32)
            cuda.syncthreads()

        return k, (arr(np.int32),)
    if case == "launch_block_shape":

        def k(a: Any) -> None:
            i = cuda.threadIdx.x
            a[i] = block.inclusive_sum(a[i])

        return k, (arr(np.int32),)
    if case == "stateful_functor_class":

        @statefn.stateful(np.int32)
        class Doubling:
            def __call__(self: Any, block_aggregate: Any) -> Any:
                prefix = self[0]
                self[0] = prefix + 2 * block_aggregate
                return prefix

        def k(a: Any) -> None:
            state = cuda.local.array(1, np.int32)
            state[0] = 0
            i = cuda.threadIdx.x
            a[i] = block.inclusive_sum(a[i], prefix_op=Doubling, prefix_state=state, threads=32)

        return k, (arr(np.int32),)
    assert case == "items_per_thread_explicit"

    def k(a: Any) -> None:
        items = cuda.local.array(2, np.int32)
        view = items[:]
        block.inclusive_sum(view, items_per_thread=2, threads=32)
        a[0] = items[0]

    return k, (arr(np.int32),)


CASES = [
    "scan_inclusive_mul",
    "scan_exclusive_min_init",
    "inclusive_scan_user_op",
    "exclusive_scan_stateless_prefix",
    "inclusive_scan_and_or_xor",
    "block_aggregate",
    "raking_memoize_2d",
    "warp_scans_3d",
    "caller_temp",
    "dynamic_temp",
    "no_auto_sync",
    "launch_block_shape",
    "stateful_functor_class",
    "items_per_thread_explicit",
]


@pytest.mark.parametrize("case", CASES)
def test_scan_options(case: str) -> None:
    kernel, argtypes = _case(case)
    options = {"block": 64} if case == "launch_block_shape" else {}
    build(kernel, argtypes, **options)


def test_kernel_options_are_honoured() -> None:
    def k(a: Any) -> None:
        i = cuda.threadIdx.x
        a[i] = block.inclusive_sum(a[i], threads=128)

    jitted = cuda.jit(fastmath=True, lineinfo=True, max_registers=64)(k)
    assert scan.compile(jitted, (arr(np.float32),), cc=CC)[:4] == b"\x7fELF"


# ---------------------------------------------------------------------------
# the same rejections, in the same words, under both front ends


def _kernel_bodies() -> dict[str, Any]:
    def missing_state(a: Any) -> None:
        i = cuda.threadIdx.x
        a[i] = block.inclusive_sum(a[i], prefix_op=running_total, threads=32)

    def wrong_state_dtype(a: Any) -> None:
        state = cuda.local.array(1, np.int32)
        i = cuda.threadIdx.x
        a[i] = block.inclusive_sum(a[i], prefix_op=running_total, prefix_state=state, threads=32)

    def prefix_with_initial_value(a: Any) -> None:
        state = cuda.local.array(1, np.int64)
        i = cuda.threadIdx.x
        a[i] = block.exclusive_scan(
            a[i],
            scan_op="max",
            initial_value=0,
            prefix_op=running_total,
            prefix_state=state,
            threads=32,
        )

    def old_keyword(a: Any) -> None:
        i = cuda.threadIdx.x
        a[i] = block.inclusive_sum(a[i], block_prefix_callback_op=running_total, threads=32)

    def warp_scans_odd_block(a: Any) -> None:
        i = cuda.threadIdx.x
        a[i] = block.inclusive_sum(a[i], algorithm="warp_scans", threads=48)

    def exclusive_max_without_seed(a: Any) -> None:
        i = cuda.threadIdx.x
        a[i] = block.exclusive_scan(a[i], scan_op="max", threads=32)

    def no_block_shape(a: Any) -> None:
        i = cuda.threadIdx.x
        a[i] = block.inclusive_sum(a[i])

    def runtime_threads(a: Any) -> None:
        i = cuda.threadIdx.x
        a[i] = block.inclusive_sum(a[i], threads=a.shape[0])

    def shared_state(a: Any) -> None:
        state = cuda.shared.array(1, np.int64)
        i = cuda.threadIdx.x
        a[i] = block.inclusive_sum(a[i], prefix_op=running_total, prefix_state=state, threads=32)

    def lambda_with_state(a: Any) -> None:
        i = cuda.threadIdx.x
        a[i] = block.inclusive_sum(a[i], prefix_op=two_args, threads=32)

    def unknown_algorithm(a: Any) -> None:
        items = cuda.local.array(4, np.int32)
        block.load(a, 0, items, algorithm="sideways", threads=32)

    return {
        fn.__name__: fn
        for fn in (
            missing_state,
            wrong_state_dtype,
            prefix_with_initial_value,
            old_keyword,
            warp_scans_odd_block,
            exclusive_max_without_seed,
            no_block_shape,
            runtime_threads,
            shared_state,
            lambda_with_state,
            unknown_algorithm,
        )
    }


def two_args(state: Any, block_aggregate: Any) -> Any:
    return block_aggregate


BODIES = _kernel_bodies()


def _with_cuda(fn: Any, module: Any) -> Any:
    """`fn` with the global name ``cuda`` bound to `module` (one body, either front end)."""
    return pytypes.FunctionType(
        fn.__code__,
        {**fn.__globals__, "cuda": module},
        fn.__name__,
        fn.__defaults__,
        fn.__closure__,
    )


def _rejection(compile_it: Any) -> tuple[type[BaseException], str]:
    try:
        compile_it()
    except Exception as exc:
        exc = getattr(exc, "rejection", exc)
        return type(exc), str(exc)
    raise AssertionError("the kernel compiled but was expected to be rejected")


@pytest.mark.parametrize("name", sorted(BODIES))
def test_rejections_match_numba_cuda(name: str) -> None:
    from helpers.kernels import compile_kernel
    from numba import cuda as numba_cuda
    from numba.cuda import types as numba_types

    body = BODIES[name]
    mlir_kernel = cuda.jit(_with_cuda(body, cuda))
    got = _rejection(lambda: scan.compile(mlir_kernel, (arr(np.int64),), cc=CC))
    want = _rejection(
        lambda: compile_kernel(
            _with_cuda(body, numba_cuda), (numba_types.Array(numba_types.int64, 1, "C"),)
        )
    )
    assert got == want
    assert issubclass(got[0], scan.ScanError | statefn.StatefnError)


# ---------------------------------------------------------------------------
# the front end's own machinery


def test_private_target_setting_still_works() -> None:
    """numba-cuda-mlir compiles offline only through ``tools._cached_cc``: it must still exist."""
    from numba_cuda_mlir import tools

    from scan._numba_cuda_mlir._target import PRIVATE_SETTING, offline_target

    assert hasattr(tools, PRIVATE_SETTING)

    def plain(a: Any) -> None:
        a[cuda.threadIdx.x] += 1

    with offline_target((8, 0)):
        ptx = cuda.compile_ptx(plain, (arr(np.int32),), device=False, cc=(8, 0))[0]
    assert ".target sm_80" in ptx


def test_registration_follows_the_import() -> None:
    from scan import _numba_cuda_mlir

    assert _numba_cuda_mlir.installed()
    assert _numba_cuda_mlir.owns(cuda.jit(lambda a: None))
    assert not _numba_cuda_mlir.owns(lambda a: None)


def test_callbacks_have_their_own_cache_entries() -> None:
    from scan._numba_cuda_mlir._lowering import CALLBACKS

    assert CALLBACKS.frontend.startswith("numba-cuda-mlir ")
    symbol, _, ltoir = CALLBACKS.lower(running_total, np.dtype(np.int32), CC)
    assert symbol == statefn.pointer_abi(running_total, np.int32)[0]
    assert ltoir


# ---------------------------------------------------------------------------
# launch bounds


def _linked_ptx(kernel: Any, **options: Any) -> str:
    from cuda.core import Linker, LinkerOptions, ObjectCode

    objects = scan.compile(
        cuda.jit(kernel), (arr(np.int32), arr(np.int32)), cc=CC, output="ltoir", **options
    )
    opts = LinkerOptions(arch="sm_90", link_time_optimization=True, ptx=True)
    code = Linker(*map(ObjectCode.from_ltoir, objects), options=opts).link("ptx").code
    return code.decode() if isinstance(code, bytes | bytearray) else str(code)


def test_kernel_declares_its_launch_block_as_maxntid() -> None:
    """As under numba-cuda: the launch's thread count is the kernel's .maxntid
    (ptxas sizes registers for it); a kernel typed without a launch has none."""

    def k(src: Any, dst: Any) -> None:
        items = cuda.local.array(4, np.int32)
        block.load(src, 0, items)
        block.inclusive_sum(items, items)
        block.store(dst, 0, items)

    def literal(src: Any, dst: Any) -> None:
        items = cuda.local.array(4, np.int32)
        block.load(src, 0, items, threads=64)
        block.store(dst, 0, items, threads=64)

    ptx = _linked_ptx(k, block=(128, 2, 1))
    assert [line.split() for line in ptx.splitlines() if ".maxntid" in line] == [
        [".maxntid", "256,", "1,", "1"]
    ]
    assert ".maxntid" not in _linked_ptx(literal)


def test_512_by_16_warp_transpose_fits_in_48_kib() -> None:
    """The kernel's calls overlay one library-owned temp storage, as under
    numba-cuda: with a unit per call, 512 threads x 16 int32 items with
    warp_transpose load and store needed 69808 bytes of static shared memory,
    which ptxas refuses (48 KiB is the static limit)."""

    def k(src: Any, dst: Any) -> None:
        state = cuda.local.array(1, np.int64)
        state[0] = 0
        items = cuda.local.array(16, np.int32)
        row = cuda.blockIdx.x
        for base in range(0, src.shape[1], 512 * 16):
            block.load(src[row], base, items, algorithm="warp_transpose", oob_default=0)
            block.inclusive_sum(items, items, prefix_op=running_total, prefix_state=state)
            block.store(dst[row], base, items, algorithm="warp_transpose")

    build(k, (arr(np.int32, 2), arr(np.int32, 2)), block=512)


CAP = 1000


@statefn.stateful(np.int64)
def capped_total(state: Any, block_aggregate: Any) -> Any:
    prefix = state[0]
    state[0] = min(prefix + block_aggregate, CAP)
    return prefix


def test_kernel_compiled_after_a_global_changes_sees_the_new_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from statefn import _descriptors

    counted: list[str] = []
    original = _descriptors.descriptor_key

    def counting(kind: str, **kwargs: Any) -> str:
        if kind == "stateful":
            counted.append(kind)
        return original(kind, **kwargs)

    def k(a: Any) -> None:
        state = cuda.local.array(1, np.int64)
        state[0] = 0
        i = cuda.threadIdx.x
        a[i] = block.inclusive_sum(a[i], prefix_op=capped_total, prefix_state=state, threads=64)
        a[i] = block.inclusive_sum(a[i], prefix_op=capped_total, prefix_state=state, threads=64)

    monkeypatch.setattr(_descriptors, "descriptor_key", counting)
    first = scan.compile(cuda.jit(k), (arr(np.int32),), cc=CC, output="ltoir")
    assert len(counted) == 1  # one key for the kernel's two calls
    monkeypatch.setitem(globals(), "CAP", 200)
    second = scan.compile(cuda.jit(k), (arr(np.int32),), cc=CC, output="ltoir")
    assert len(counted) == 2
    assert set(first[1:]) != set(second[1:])
