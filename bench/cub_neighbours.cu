// SPDX-License-Identifier: Apache-2.0
//
// Row-wise adjacent differences and run heads written directly in CUDA C++
// with CUB: the C++ contenders of bench/neighbours_bench.py.
//
// One thread block per row walks its row tile by tile (THREADS x ITEMS int32
// items): cub::BlockLoad of the tile, then
//
//   diff   cub::BlockAdjacentDifference::SubtractLeft(items, items, minus,
//          tile_predecessor)        out[i] = x[i] - x[i - 1], x[-1] = 0
//   heads  cub::BlockDiscontinuity::FlagHeads(flags, items, not_equal,
//          tile_predecessor)        out[i] = x[i] != x[i - 1], x[-1] = 0
//
// and cub::BlockStore of the results. Written for speed, as a CUB user
// would write it:
//
// - the tile's predecessor is read by thread 0 from global memory
//   (row[base - 1], in L2 or L1 after the previous tile), so no value is
//   carried between tiles and no barrier is spent on it (only thread 0 uses
//   the predecessor);
// - the loop runs over full tiles with unguarded loads and stores; the last,
//   partial tile is handled once after it, guarded;
// - load, primitive and store share one union of temp storage, a barrier
//   between each reuse (the direct and vectorize algorithms use none for the
//   load and store, but the same code serves every algorithm);
// - __launch_bounds__(THREADS) on every kernel.
//
// Tile I/O (io): vectorize (BLOCK_LOAD_VECTORIZE / BLOCK_STORE_VECTORIZE:
// 16-byte accesses where the tile is aligned), warp_transpose.
//
// Kernels are `extern "C"`, one per configuration, named
//   neighbours_<task>_t<THREADS>_i<ITEMS>_<io>
// with the signature (const int* in, int* out, int cols) over C-contiguous
// rows x cols arrays, launched with grid = rows and block = THREADS.
//
// bench/neighbours_bench.py compiles this file through a generated unit per
// threads x items that defines NEIGHBOURS_GENERATED_INSTANCES, includes this
// file and lists its kernels with NEIGHBOURS_KERNEL(...). Compiled alone it
// emits the 256 x 4 kernels:
//   nvcc -O3 -std=c++17 -arch=sm_90 -cubin -I$CUDA_HOME/include/cccl cub_neighbours.cu

#include <cub/block/block_adjacent_difference.cuh>
#include <cub/block/block_discontinuity.cuh>
#include <cub/block/block_load.cuh>
#include <cub/block/block_store.cuh>

namespace neighbours_bench {

namespace io {
struct vectorize {
  static constexpr cub::BlockLoadAlgorithm load = cub::BLOCK_LOAD_VECTORIZE;
  static constexpr cub::BlockStoreAlgorithm store = cub::BLOCK_STORE_VECTORIZE;
};
struct warp_transpose {
  static constexpr cub::BlockLoadAlgorithm load = cub::BLOCK_LOAD_WARP_TRANSPOSE;
  static constexpr cub::BlockStoreAlgorithm store = cub::BLOCK_STORE_WARP_TRANSPOSE;
};
}  // namespace io

struct minus {
  __device__ __forceinline__ int operator()(const int& a, const int& b) const { return a - b; }
};
struct not_equal {
  __device__ __forceinline__ bool operator()(const int& a, const int& b) const { return a != b; }
};

// task::diff and task::heads: the primitive applied to one tile in place
namespace task {
template <int THREADS>
struct diff {
  using primitive_t = cub::BlockAdjacentDifference<int, THREADS>;
  template <int ITEMS>
  static __device__ __forceinline__ void apply(
      typename primitive_t::TempStorage& temp, int (&items)[ITEMS], int predecessor) {
    primitive_t(temp).SubtractLeft(items, items, minus{}, predecessor);
  }
};
template <int THREADS>
struct heads {
  using primitive_t = cub::BlockDiscontinuity<int, THREADS>;
  template <int ITEMS>
  static __device__ __forceinline__ void apply(
      typename primitive_t::TempStorage& temp, int (&items)[ITEMS], int predecessor) {
    int flags[ITEMS];
    primitive_t(temp).FlagHeads(flags, items, not_equal{}, predecessor);
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) items[i] = flags[i];
  }
};
}  // namespace task

template <template <int> class TASK, int THREADS, int ITEMS, class IO>
__device__ __forceinline__ void rows(const int* in, int* out, int cols) {
  using load_t = cub::BlockLoad<int, THREADS, ITEMS, IO::load>;
  using store_t = cub::BlockStore<int, THREADS, ITEMS, IO::store>;
  using task_t = TASK<THREADS>;
  __shared__ union {
    typename load_t::TempStorage load;
    typename task_t::primitive_t::TempStorage primitive;
    typename store_t::TempStorage store;
  } temp;
  constexpr int TILE = THREADS * ITEMS;
  const int* row = in + static_cast<long long>(blockIdx.x) * cols;
  int* dst = out + static_cast<long long>(blockIdx.x) * cols;
  int items[ITEMS];
  int base = 0;
  for (; base + TILE <= cols; base += TILE) {
    const int predecessor = (threadIdx.x == 0 && base > 0) ? row[base - 1] : 0;
    load_t(temp.load).Load(row + base, items);
    __syncthreads();
    task_t::apply(temp.primitive, items, predecessor);
    __syncthreads();
    store_t(temp.store).Store(dst + base, items);
    __syncthreads();
  }
  if (base < cols) {
    const int valid = cols - base;
    const int predecessor = (threadIdx.x == 0 && base > 0) ? row[base - 1] : 0;
    load_t(temp.load).Load(row + base, items, valid, 0);
    __syncthreads();
    task_t::apply(temp.primitive, items, predecessor);
    __syncthreads();
    store_t(temp.store).Store(dst + base, items, valid);
  }
}

}  // namespace neighbours_bench

#define NEIGHBOURS_KERNEL(TASK, THREADS, ITEMS, IO)                                            \
  extern "C" __global__ void __launch_bounds__(THREADS)                                        \
      neighbours_##TASK##_t##THREADS##_i##ITEMS##_##IO(const int* in, int* out, int cols) {     \
    neighbours_bench::rows<neighbours_bench::task::TASK, THREADS, ITEMS,                       \
                           neighbours_bench::io::IO>(in, out, cols);                            \
  }

#ifndef NEIGHBOURS_GENERATED_INSTANCES
NEIGHBOURS_KERNEL(diff, 256, 4, vectorize)
NEIGHBOURS_KERNEL(diff, 256, 4, warp_transpose)
NEIGHBOURS_KERNEL(heads, 256, 4, vectorize)
NEIGHBOURS_KERNEL(heads, 256, 4, warp_transpose)
#endif
