// SPDX-License-Identifier: Apache-2.0
//
// Per-row reductions written directly in CUDA C++ with CUB: the C++ contenders
// of bench/reduce_bench.py.
//
// One thread block per row walks its row tile by tile: cub::BlockLoad of a
// tile (THREADS x ITEMS items), cub::BlockReduce of the tile, the tile's
// result folded into a running value, the row's result written by thread 0.
// Three tasks:
//
//   sum_f32   float32 sum   BlockReduce::Sum(items)
//   sum_i32   int32 sum     BlockReduce::Sum(items) (wraps around as the adds do)
//   max_f32   float32 max   BlockReduce::Reduce(items, cuda::maximum<>{})
//
// Written for speed:
//
// - the loop runs over full tiles only, with unguarded loads; the last,
//   partial tile is handled once after it, its missing items loaded as the
//   operator's identity (0, -inf);
// - the running value is folded in every thread without a branch (only thread
//   0's is defined and written);
// - the load and the reduce have separate shared memory (the loads of the
//   default algorithms need none), so one __syncthreads() per tile, after the
//   reduce, is the only barrier the loop needs: it keeps the next tile's
//   reduce from overwriting what thread 0 still reads, and the next tile's
//   shared-memory load (warp_transpose, transpose) from overwriting what a
//   slower warp still reads of this one. BlockReduce's own barrier (all three
//   algorithms have one for blocks of more than one warp) separates the
//   reduce's writes from thread 0's reads within a tile;
// - no barrier after the partial tile: nothing reuses the storage after it;
// - __launch_bounds__(THREADS) on every kernel.
//
// Load algorithms (io): vectorize (BLOCK_LOAD_VECTORIZE: 16-byte vector loads
// of each thread's consecutive items where the tile is 16-byte aligned, else
// direct; CUB checks the alignment at run time), striped (BLOCK_LOAD_STRIPED:
// coalesced 4-byte loads, item i of thread t is tile item i * THREADS + t; the
// order does not matter to a reduce), direct, warp_transpose, transpose.
// Reduce algorithms (algo): warp_reductions, raking, raking_commutative_only.
//
// Kernels are `extern "C"` (no name mangling), one per configuration, named
//   reduce_<task>_t<THREADS>_i<ITEMS>_<io>_<algo>
// e.g. reduce_sum_f32_t256_i4_vectorize_warp_reductions, with the signature
//   (const T* in, T* out, int cols)
// over a C-contiguous rows x cols input and a rows-long output, launched with
// grid = rows and block = THREADS; T is float or int as the task says.
//
// bench/reduce_bench.py compiles this file several times in parallel, each
// time through a generated unit that defines REDUCE_GENERATED_INSTANCES,
// includes this file and lists its kernels with REDUCE_KERNEL(...). Compiled
// alone it emits the 256 x 4 vectorize kernels of every task and algorithm:
//   nvcc -O3 -std=c++17 -arch=sm_90 -cubin -I$CUDA_HOME/include/cccl cub_reduce.cu

#include <cub/block/block_load.cuh>
#include <cub/block/block_reduce.cuh>

#include <cuda/functional>
#include <cuda/std/limits>

#include <cstddef>

namespace reduce_bench {

// ------------------------------------------------------------------ load and reduce algorithms

namespace io {
struct vectorize {
  static constexpr cub::BlockLoadAlgorithm value = cub::BLOCK_LOAD_VECTORIZE;
};
struct striped {
  static constexpr cub::BlockLoadAlgorithm value = cub::BLOCK_LOAD_STRIPED;
};
struct direct {
  static constexpr cub::BlockLoadAlgorithm value = cub::BLOCK_LOAD_DIRECT;
};
struct warp_transpose {
  static constexpr cub::BlockLoadAlgorithm value = cub::BLOCK_LOAD_WARP_TRANSPOSE;
};
struct transpose {
  static constexpr cub::BlockLoadAlgorithm value = cub::BLOCK_LOAD_TRANSPOSE;
};
}  // namespace io

namespace algo {
struct warp_reductions {
  static constexpr cub::BlockReduceAlgorithm value = cub::BLOCK_REDUCE_WARP_REDUCTIONS;
};
struct raking {
  static constexpr cub::BlockReduceAlgorithm value = cub::BLOCK_REDUCE_RAKING;
};
struct raking_commutative_only {
  static constexpr cub::BlockReduceAlgorithm value = cub::BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY;
};
}  // namespace algo

// ------------------------------------------------------------------ the tasks

// T: the item type; identity(): what a partial tile's missing items are loaded
// as; tile(): the block's reduction of a tile (defined in thread 0); fold():
// the running value and a tile's result.
struct sum_f32 {
  using T = float;
  static __device__ __forceinline__ T identity() { return 0.0f; }
  template <typename BlockReduce, int ITEMS>
  static __device__ __forceinline__ T tile(BlockReduce&& reduce, T (&items)[ITEMS]) {
    return reduce.Sum(items);
  }
  static __device__ __forceinline__ T fold(T running, T tile) { return running + tile; }
};

struct sum_i32 {
  using T = int;
  static __device__ __forceinline__ T identity() { return 0; }
  template <typename BlockReduce, int ITEMS>
  static __device__ __forceinline__ T tile(BlockReduce&& reduce, T (&items)[ITEMS]) {
    return reduce.Sum(items);
  }
  static __device__ __forceinline__ T fold(T running, T tile) { return running + tile; }
};

struct max_f32 {
  using T = float;
  static __device__ __forceinline__ T identity() {
    return -cuda::std::numeric_limits<float>::infinity();
  }
  template <typename BlockReduce, int ITEMS>
  static __device__ __forceinline__ T tile(BlockReduce&& reduce, T (&items)[ITEMS]) {
    return reduce.Reduce(items, cuda::maximum<>{});
  }
  static __device__ __forceinline__ T fold(T running, T tile) {
    return cuda::maximum<>{}(running, tile);
  }
};

// ------------------------------------------------------------------ the row kernel

template <typename Task, int THREADS, int ITEMS, typename IO, typename ALGO>
__device__ __forceinline__ void row_reduce(const typename Task::T* __restrict__ in,
                                           typename Task::T* __restrict__ out, int cols) {
  static_assert(THREADS > 32, "the barrier analysis above needs more than one warp");
  using T = typename Task::T;
  using Load = cub::BlockLoad<T, THREADS, ITEMS, IO::value>;
  using Reduce = cub::BlockReduce<T, THREADS, ALGO::value>;
  struct TempStorage {
    typename Load::TempStorage load;
    typename Reduce::TempStorage reduce;
  };
  __shared__ TempStorage temp;

  constexpr int kTile = THREADS * ITEMS;
  const T* row = in + static_cast<std::size_t>(blockIdx.x) * cols;
  T running = Task::identity();
  T items[ITEMS];

  const int full = cols / kTile * kTile;
  int base = 0;
  for (; base < full; base += kTile) {
    Load(temp.load).Load(row + base, items);
    running = Task::fold(running, Task::tile(Reduce(temp.reduce), items));
    __syncthreads();
  }
  if (base < cols) {
    Load(temp.load).Load(row + base, items, cols - base, Task::identity());
    running = Task::fold(running, Task::tile(Reduce(temp.reduce), items));
  }
  if (threadIdx.x == 0) {
    out[blockIdx.x] = running;
  }
}

}  // namespace reduce_bench

// One extern "C" kernel per configuration (see the top of the file for the name).
#define REDUCE_KERNEL(TASK, THREADS, ITEMS, IO, ALGO)                                             \
  extern "C" __global__ void __launch_bounds__(THREADS)                                         \
      reduce_##TASK##_t##THREADS##_i##ITEMS##_##IO##_##ALGO(                                      \
          const reduce_bench::TASK::T* __restrict__ in, reduce_bench::TASK::T* __restrict__ out,  \
          int cols) {                                                                             \
    reduce_bench::row_reduce<reduce_bench::TASK, THREADS, ITEMS, reduce_bench::io::IO,           \
                             reduce_bench::algo::ALGO>(in, out, cols);                            \
  }

#ifndef REDUCE_GENERATED_INSTANCES
REDUCE_KERNEL(sum_f32, 256, 4, vectorize, warp_reductions)
REDUCE_KERNEL(sum_f32, 256, 4, vectorize, raking)
REDUCE_KERNEL(sum_f32, 256, 4, vectorize, raking_commutative_only)
REDUCE_KERNEL(sum_i32, 256, 4, vectorize, warp_reductions)
REDUCE_KERNEL(sum_i32, 256, 4, vectorize, raking)
REDUCE_KERNEL(sum_i32, 256, 4, vectorize, raking_commutative_only)
REDUCE_KERNEL(max_f32, 256, 4, vectorize, warp_reductions)
REDUCE_KERNEL(max_f32, 256, 4, vectorize, raking)
REDUCE_KERNEL(max_f32, 256, 4, vectorize, raking_commutative_only)
#endif
