// SPDX-License-Identifier: Apache-2.0
//
// Per-warp row scans written directly in CUDA C++ with CUB: the C++ contenders
// of bench/warp_bench.py.
//
// int32 inclusive row prefix sums (wrapping as the int32 adds do), one row per
// warp: warp w of block b scans row b * WARPS + w, tile by tile (32 lanes x
// ITEMS items a tile, lane l holding the tile's items l*ITEMS .. l*ITEMS +
// ITEMS-1: the blocked arrangement), the running total of the row's earlier
// tiles carried from tile to tile in a register. Per tile:
//
//   cub::WarpLoad             the tile into the blocked arrangement (io below)
//   cub::ThreadReduce         each lane's total
//   cub::WarpScan::ExclusiveSum   of the lane totals, with the warp aggregate
//                             (shuffles only: no shared memory, no barrier)
//   a sequential scan of each lane's items from running + its exclusive prefix
//   running += the warp aggregate (the same in every lane: no broadcast)
//   cub::WarpStore            the tile back
//
// which is what cub::BlockScan does for several items a thread, with the
// prefix functor's work done in a register.
//
// Tile I/O (io):
//
//   direct      WARP_LOAD_DIRECT / WARP_STORE_DIRECT: each lane reads and writes
//               its ITEMS consecutive items with 4-byte accesses (the access
//               pattern of the project's kernels)
//   vectorize   the same with 8- or 16-byte accesses (ITEMS = 2, or a multiple
//               of 4): cub::LoadDirectBlockedVectorized and WARP_STORE_VECTORIZE
//               for the full tiles. Not WARP_LOAD_VECTORIZE: CCCL 3.0's (CUDA
//               13.0's) never takes its vector path, its pointer overloads being
//               templates on a parameter that cannot be deduced (later CCCL
//               fixed it). CUB's vector store does not check the alignment, so
//               the kernel checks once per row that both rows are 16-byte
//               aligned (always, when cols is a multiple of 4) and falls back
//               to direct otherwise (the vector load checks its tile at each
//               call too)
//   transpose   WARP_LOAD_TRANSPOSE / WARP_STORE_TRANSPOSE: warp-striped
//               accesses (every instruction reads 128 consecutive bytes)
//               exchanged through shared memory (ITEMS x 128 bytes a warp)
//
// Written for speed:
//
// - the full tiles run unguarded in the loop; the partial tile, the last one,
//   once after it, guarded (padded with 0, the sum's identity);
// - no barrier: the warps are independent. With io = transpose, one
//   __syncwarp() after each load and each store keeps a lane from overwriting
//   the exchange buffer while another lane still reads it;
// - __launch_bounds__(WARPS * 32) on every kernel.
//
// Kernels are `extern "C"` (no name mangling), one per configuration, named
//   warp_rowscan_w<WARPS>_i<ITEMS>_<io>
// e.g. warp_rowscan_w4_i8_transpose, with the signature
//   (const int* src, int* out, int rows, int cols)
// over C-contiguous rows x cols arrays, launched with grid = ceil(rows / WARPS)
// and block = WARPS * 32.
//
// bench/warp_bench.py compiles this file several times in parallel, each time
// through a generated unit that defines WARP_GENERATED_INSTANCES, includes this
// file and lists its kernels with WARP_ROWSCAN_KERNEL(...). Compiled alone it
// emits the 4-warp, 8-item kernels:
//   nvcc -O3 -std=c++17 -arch=sm_90 -cubin -I$CUDA_HOME/include/cccl cub_warp.cu

#include <cub/block/block_load.cuh>
#include <cub/thread/thread_reduce.cuh>
#include <cub/warp/warp_load.cuh>
#include <cub/warp/warp_scan.cuh>
#include <cub/warp/warp_store.cuh>

#include <cuda/std/functional>

#include <cstddef>
#include <cstdint>

namespace warp_bench {

// ------------------------------------------------------------------ tile I/O

namespace io {
struct direct {
  static constexpr cub::WarpLoadAlgorithm load = cub::WARP_LOAD_DIRECT;
  static constexpr cub::WarpStoreAlgorithm store = cub::WARP_STORE_DIRECT;
  static constexpr bool exchanges = false;
};
struct vectorize {
  static constexpr cub::WarpLoadAlgorithm load = cub::WARP_LOAD_VECTORIZE;
  static constexpr cub::WarpStoreAlgorithm store = cub::WARP_STORE_VECTORIZE;
  static constexpr bool exchanges = false;
};
struct transpose {
  static constexpr cub::WarpLoadAlgorithm load = cub::WARP_LOAD_TRANSPOSE;
  static constexpr cub::WarpStoreAlgorithm store = cub::WARP_STORE_TRANSPOSE;
  static constexpr bool exchanges = true;
};
}  // namespace io

__device__ __forceinline__ bool aligned16(const void* p) {
  return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0;
}

// ------------------------------------------------------------------ one tile's scan

// Scans the warp's tile in place, seeded by `running` (the sum of the row's
// earlier tiles, the same in every lane), and adds the tile's sum to it.
template <int ITEMS>
__device__ __forceinline__ void scan_tile(int (&items)[ITEMS], int& running) {
  using Scan = cub::WarpScan<int>;
  typename Scan::TempStorage none;  // NullType: the shuffle-based scan stores nothing
  const int total = cub::ThreadReduce(items, ::cuda::std::plus<>{});
  int exclusive;
  int aggregate;
  Scan(none).ExclusiveSum(total, exclusive, aggregate);
  int acc = running + exclusive;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    acc += items[i];
    items[i] = acc;
  }
  running += aggregate;
}

// ------------------------------------------------------------------ one row

template <int WARPS, int ITEMS, typename IO>
struct Row {
  using Load = cub::WarpLoad<int, ITEMS, IO::load>;
  using Store = cub::WarpStore<int, ITEMS, IO::store>;
  // direct, vectorize: NullType (nothing stored)
  union TempStorage {
    typename Load::TempStorage load;
    typename Store::TempStorage store;
  };

  __device__ __forceinline__ static void sync() {
    if constexpr (IO::exchanges) {
      __syncwarp();
    }
  }

  // a full tile (the partial one goes through WarpLoad: guarded, 4-byte accesses)
  __device__ __forceinline__ static void load(TempStorage& temp, const int* tile,
                                              int (&items)[ITEMS]) {
    if constexpr (IO::load == cub::WARP_LOAD_VECTORIZE) {
      const int lane = static_cast<int>(threadIdx.x) % 32;
      cub::LoadDirectBlockedVectorized(lane, const_cast<int*>(tile), items);
    } else {
      Load(temp.load).Load(tile, items);
    }
  }

  __device__ __forceinline__ static void run(TempStorage& temp, const int* __restrict__ src,
                                             int* __restrict__ out, int cols) {
    constexpr int kTile = 32 * ITEMS;
    int running = 0;
    int items[ITEMS];
    const int full = cols / kTile * kTile;
    for (int base = 0; base < full; base += kTile) {
      load(temp, src + base, items);
      sync();
      scan_tile(items, running);
      Store(temp.store).Store(out + base, items);
      sync();
    }
    if (full < cols) {  // the partial tile, last
      const int valid = cols - full;
      Load(temp.load).Load(src + full, items, valid, 0);
      sync();
      scan_tile(items, running);
      Store(temp.store).Store(out + full, items, valid);
    }
  }
};

template <int WARPS, int ITEMS, typename IO>
__device__ __forceinline__ void rowscan_kernel(const int* __restrict__ src, int* __restrict__ out,
                                               int rows, int cols) {
  using Vector = Row<WARPS, ITEMS, IO>;
  using Direct = Row<WARPS, ITEMS, io::direct>;
  __shared__ typename Vector::TempStorage temp[WARPS];
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int row = static_cast<int>(blockIdx.x) * WARPS + warp;
  if (row >= rows) {
    return;  // the whole warp: nothing waits for it
  }
  const std::size_t offset = static_cast<std::size_t>(row) * cols;
  const int* row_src = src + offset;
  int* row_out = out + offset;
  if constexpr (IO::load == cub::WARP_LOAD_VECTORIZE) {
    // the same in every lane; voted, so that the compiler knows the branch is
    // warp-uniform (else it guards every shuffle after it for a diverged warp)
    if (!__all_sync(0xffffffffu, aligned16(row_src) && aligned16(row_out))) {
      typename Direct::TempStorage none;
      Direct::run(none, row_src, row_out, cols);
      return;
    }
  }
  Vector::run(temp[warp], row_src, row_out, cols);
}

}  // namespace warp_bench

// One extern "C" kernel per configuration (see the top of the file for the names).
#define WARP_ROWSCAN_KERNEL(WARPS, ITEMS, IO)                                                   \
  extern "C" __global__ void __launch_bounds__(WARPS * 32)                                     \
      warp_rowscan_w##WARPS##_i##ITEMS##_##IO(const int* __restrict__ src,                       \
                                              int* __restrict__ out, int rows, int cols) {       \
    warp_bench::rowscan_kernel<WARPS, ITEMS, warp_bench::io::IO>(src, out, rows, cols);        \
  }

#ifndef WARP_GENERATED_INSTANCES
WARP_ROWSCAN_KERNEL(4, 8, direct)
WARP_ROWSCAN_KERNEL(4, 8, vectorize)
WARP_ROWSCAN_KERNEL(4, 8, transpose)
#endif
