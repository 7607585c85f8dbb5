# SPDX-License-Identifier: Apache-2.0
"""The host runtime and CUB shim catch what they claim to: each check, on a small kernel.

Every check of docs/gpu-testing.md ("Host execution") has a kernel here that
breaks it, and the message it must fail with; the same kernels with the
barrier (or bound) right must pass, in every schedule tried.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from hostexec.program import HostViolationError, run_source
from hostexec.toolchain import Builder
from hostexec.units import rewrite_shared

SEEDS = (0, 1, 7)


def program(body: str, *, threads: int = 64, blocks: int = 1, prelude: str = "") -> str:
    """A harness whose kernel runs `body` in every thread (``rank``, buffers ``src``/``dst``)."""
    text = f"""
#include <hostexec/harness.h>
#include <cub/block/block_load.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>
#include <cub/warp/warp_scan.cuh>
#include <cub/agent/single_pass_scan_operators.cuh>
namespace {{
struct Args {{ int* src; int* dst; long long n; }};
{prelude}
void kernel(void* p) {{
  Args& a = *static_cast<Args*>(p);
  const int rank = ::hx::rank();
  (void)a;
  (void)rank;
{body}
}}
}}  // namespace
int main(int argc, char** argv) {{
  ::hx::Harness h(argc, argv);
  Args a;
  a.src = h.buffer<int>("src");
  a.dst = h.buffer<int>("dst");
  a.n = h.param("n");
  ::hx::Launch launch;
  launch.grid = dim3{{{blocks}, 1, 1}};
  launch.block = dim3{{{threads}, 1, 1}};
  launch.kernel = kernel;
  launch.args = &a;
  launch.seed = static_cast<uint64_t>(h.param("seed"));
  ::hx::launch(launch);
  h.finish();
  return 0;
}}
"""
    return rewrite_shared(text)[0]


def launch(builder: Builder, source: str, seed: int = 0, n: int = 256) -> dict[str, np.ndarray]:
    buffers = {"src": np.arange(n, dtype=np.int32), "dst": np.zeros(n, np.int32)}
    return run_source(builder, source, "runtime check", buffers, {"seed": seed, "n": n})


def refused(builder: Builder, source: str, message: str, seeds: tuple[int, ...] = SEEDS) -> None:
    for seed in seeds:
        with pytest.raises(HostViolationError, match=message):
            launch(builder, source, seed)


def passes(builder: Builder, source: str, seeds: tuple[int, ...] = SEEDS) -> list[np.ndarray]:
    return [launch(builder, source, seed)["dst"] for seed in seeds]


EXCHANGE = """
  __shared__ int slot[64];
  slot[rank] = 0;
  __syncthreads();
  slot[rank] = rank + 1;
{sync}
  a.dst[rank] = slot[(rank + {step}) % 64];
"""


@pytest.mark.parametrize("step", [1, 63, 32])
def test_a_read_of_another_threads_unsynchronised_write_is_a_race(
    builder: Builder, step: int
) -> None:
    refused(builder, program(EXCHANGE.format(sync="", step=step)), "data race")


@pytest.mark.parametrize("step", [1, 63, 32])
def test_a_barrier_orders_the_write_before_the_read(builder: Builder, step: int) -> None:
    for dst in passes(builder, program(EXCHANGE.format(sync="  __syncthreads();", step=step))):
        np.testing.assert_array_equal(dst[:64], (np.arange(64) + step) % 64 + 1)


def test_a_warp_barrier_orders_lanes_of_its_warp_only(builder: Builder) -> None:
    within = EXCHANGE.format(sync="  __syncwarp();", step=1).replace(
        "(rank + 1) % 64", "rank / 32 * 32 + (rank + 1) % 32"
    )
    for dst in passes(builder, program(within)):
        ranks = np.arange(64)
        np.testing.assert_array_equal(dst[:64], ranks // 32 * 32 + (ranks + 1) % 32 + 1)
    across = EXCHANGE.format(sync="  __syncwarp();", step=32)
    refused(builder, program(across), "data race")


def test_an_index_past_a_shared_arrays_extent_is_refused(builder: Builder) -> None:
    body = "  __shared__ int slots[2][64];\n  slots[rank / 64][rank + 1] = rank;"
    refused(builder, program(body), re.escape("out-of-bounds index 64 into slots (extent 64)"))


def test_a_read_of_shared_memory_no_thread_wrote_is_refused(builder: Builder) -> None:
    body = "  __shared__ int slot[64];\n  if (rank > 0) slot[rank] = 1;\n  __syncthreads();\n"
    body += "  a.dst[rank] = slot[(rank + 1) % 64];"
    refused(builder, program(body), "slot\\+0, which no thread has written")


def test_a_barrier_not_reached_by_every_thread_is_refused(builder: Builder) -> None:
    body = "  if (rank < 32) __syncthreads();"
    refused(builder, program(body), "not reached by every thread")


SCANS = """
  using scan_t = cub::BlockScan<int, 64, cub::{algo}>;
  using temp_storage_t = scan_t::TempStorage;
  __shared__ temp_storage_t temp_storage;
  struct Prefix {{ int operator()(int aggregate) {{ return aggregate; }} }};
  Prefix prefix;
  int x = rank, y = 0;
  scan_t(temp_storage).{call};
{sync}
  scan_t(temp_storage).{call};
  a.dst[rank] = y;
"""


@pytest.mark.parametrize(
    ("algo", "call", "allowed"),
    [
        ("BLOCK_SCAN_RAKING", "InclusiveSum(x, y)", False),
        ("BLOCK_SCAN_WARP_SCANS", "InclusiveSum(x, y)", False),
        ("BLOCK_SCAN_RAKING", "InclusiveSum(x, y, prefix)", False),
        # CUB's barrier after the callback separates two such calls (_codegen relies on it)
        ("BLOCK_SCAN_WARP_SCANS", "InclusiveSum(x, y, prefix)", True),
    ],
)
def test_temp_storage_is_reused_only_after_a_barrier(
    builder: Builder, algo: str, call: str, allowed: bool
) -> None:
    unsynced = program(SCANS.format(algo=algo, call=call, sync=""))
    if allowed:
        passes(builder, unsynced)
    else:
        refused(builder, unsynced, "may only be reused after a barrier")
    passes(builder, program(SCANS.format(algo=algo, call=call, sync="  __syncthreads();")))


def test_logical_warps_sharing_one_warp_scan_storage_race(builder: Builder) -> None:
    body = """
  using warp_scan_t = cub::WarpScan<int, 8>;
  using temp_storage_t = warp_scan_t::TempStorage[8];
  __shared__ temp_storage_t temp_storage;
  int y = 0;
  warp_scan_t(temp_storage[{index}]).InclusiveSum(rank, y);
  a.dst[rank] = y;
"""
    own = passes(builder, program(body.format(index="rank / 8")))
    ranks = np.arange(64)
    np.testing.assert_array_equal(own[0][:64], [sum(range(r // 8 * 8, r + 1)) for r in ranks])
    refused(builder, program(body.format(index="0")), "data race|reused after a barrier")


def test_undefined_results_are_poisoned(builder: Builder) -> None:
    body = """
  using reduce_t = cub::BlockReduce<int, 64>;
  using temp_storage_t = reduce_t::TempStorage;
  __shared__ temp_storage_t temp_storage;
  a.dst[rank] = reduce_t(temp_storage).Sum(rank);
"""
    (dst, *_) = passes(builder, program(body))
    assert dst[0] == sum(range(64))
    assert (dst[1:64] == np.int32(np.uint32(0xA5A5A5A5))).all()


def test_a_store_that_exchanges_leaves_the_items_undefined(builder: Builder) -> None:
    body = """
  using store_t = cub::BlockStore<int, 64, 2, cub::{algo}>;
  using temp_storage_t = store_t::TempStorage;
  __shared__ temp_storage_t temp_storage;
  int items[2] = {{rank, -rank}};
  store_t(temp_storage).Store(a.dst, items);
  __syncthreads();
  a.dst[128 + rank] = items[0];
"""
    (direct, *_) = passes(builder, program(body.format(algo="BLOCK_STORE_DIRECT")))
    np.testing.assert_array_equal(direct[128:192], np.arange(64))
    (moved, *_) = passes(builder, program(body.format(algo="BLOCK_STORE_WARP_TRANSPOSE")))
    np.testing.assert_array_equal(moved[:128:2], np.arange(64))
    assert (moved[128:192] == np.int32(np.uint32(0xA5A5A5A5))).all()


def test_a_primitive_for_another_block_shape_is_refused(builder: Builder) -> None:
    body = """
  using scan_t = cub::BlockScan<int, 32>;
  using temp_storage_t = scan_t::TempStorage;
  __shared__ temp_storage_t temp_storage;
  int y;
  scan_t(temp_storage).InclusiveSum(rank, y);
"""
    refused(builder, program(body), re.escape("for blocks of (32, 1, 1) threads runs in a block"))


def test_global_accesses_outside_the_arrays_are_refused(builder: Builder) -> None:
    shim = "  int items[4];\n  cub::LoadDirectBlocked(rank, a.src, items);"
    refused(builder, program(shim, threads=128), "outside the array")
    raw = "  if (rank == 0) a.dst[a.n] = 1;"
    refused(builder, program(raw), "changed its guard bytes")


STATUS = """
  using state_t = cub::ScanTileState<int>;
  state_t tile_state;
  tile_state.Init(4, a.dst, 1024);
{init}
  __syncthreads();
  if (rank == 1 && {publish}) tile_state.SetInclusive(0, 5);
  if (rank < 32) {{  // a warp collective, as CUB's
    state_t::StatusWord s;
    int v;
    tile_state.WaitForValid(0, s, v);
    if (rank == 0) a.src[0] = v;
  }}
"""


def test_a_status_nobody_initialised_is_refused(builder: Builder) -> None:
    source = program(STATUS.format(init="", publish="true"))
    refused(builder, source, "the status was not initialised")


def test_a_look_back_that_would_wait_forever_is_refused(builder: Builder) -> None:
    init = "  tile_state.InitializeStatus(4);"
    refused(builder, program(STATUS.format(init=init, publish="false")), "would wait forever")
    passes(builder, program(STATUS.format(init=init, publish="true")))


def test_shuffles(builder: Builder) -> None:
    body = """
  const int lane = rank % 32;
  a.dst[rank] = __shfl_up_sync(0xffffffffu, lane, 1) + 100 * __shfl_xor_sync(0xffffffffu, lane, 3)
              + 10000 * __shfl_sync(0xffffffffu, lane, 5, 8);
"""
    (dst, *_) = passes(builder, program(body))
    lane = np.arange(64) % 32
    want = np.where(lane >= 1, lane - 1, lane) + 100 * (lane ^ 3) + 10000 * (lane // 8 * 8 + 5)
    np.testing.assert_array_equal(dst[:64], want)
