// SPDX-License-Identifier: Apache-2.0
//
// Record-valued row scans written directly in CUDA C++ with CUB: the C++
// contenders of bench/records_bench.py.
//
// Two tasks, each one thread block per row walking its row tile by tile:
//
//   recurrence     h[t] = a[t] * h[t-1] + b[t] (h[-1] = 0), the selective-scan
//                  recurrence of Mamba. a and b are two float32 arrays; each
//                  (a, b) item is the affine map h -> a * h + b, loaded as two
//                  tiles, zipped into float2 pairs and scanned with map
//                  composition; h is the second field of the scanned pair.
//   segmented_sum  inclusive sum that restarts where a flag is set. int32
//                  flags and float32 values are loaded as two tiles, zipped
//                  into {flag, value} pairs and scanned with the segmented
//                  operator; the output is the value field.
//
// The structure is that of Mamba's selective_scan_fwd: cub::BlockLoad of both
// inputs, the pairs built in registers, cub::BlockScan<Pair, THREADS, ALGO>::
// InclusiveScan(items, items, op, prefix) where `prefix` is a stateful functor
// carrying the composed pair of every earlier tile, cub::BlockStore of the
// result. Written for speed:
//
// - the loop runs over full tiles only (no guarded path inside it), the last,
//   partial tile is handled once after it;
// - the two loads use separate shared memory, the store shares the first
//   load's; one __syncthreads() per tile, at its end. That is the only
//   barrier the reuse needs: within a tile the scan's own barriers separate
//   the first load's reads from the store's writes, and the end-of-tile
//   barrier separates the store and the scan from the next tile's load and
//   scan (see row_scan below);
// - __launch_bounds__(THREADS) on every kernel.
//
// Kernels are `extern "C"` (no name mangling), one per configuration, named
//   <task>_t<THREADS>_i<ITEMS>_<io>_<algo>
// e.g. recurrence_t256_i8_warp_transpose_warp_scans, with io one of
// warp_transpose, vectorize, direct and algo one of raking, warp_scans. The
// signature of every kernel is
//   (const First* first, const float* second, float* out, int cols)
// over C-contiguous rows x cols arrays, launched with grid = rows and
// block = THREADS; First is float (a) for the recurrence, int (flags) for the
// segmented sum.
//
// bench/records_bench.py compiles this file several times in parallel, each
// time through a generated unit that defines RECORDS_GENERATED_INSTANCES,
// includes this file and lists its kernels with RECORDS_KERNEL(...). Compiled
// alone it emits the 256 x 8 kernels of both tasks:
//   nvcc -O3 -std=c++17 -arch=sm_90 -cubin -I$CUDA_HOME/include/cccl cub_records.cu

#include <cub/block/block_load.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>

#include <cstddef>

namespace records {

// ------------------------------------------------------------------ tile I/O and scan algorithms

namespace io {
struct warp_transpose {
  static constexpr cub::BlockLoadAlgorithm load = cub::BLOCK_LOAD_WARP_TRANSPOSE;
  static constexpr cub::BlockStoreAlgorithm store = cub::BLOCK_STORE_WARP_TRANSPOSE;
};
struct vectorize {
  static constexpr cub::BlockLoadAlgorithm load = cub::BLOCK_LOAD_VECTORIZE;
  static constexpr cub::BlockStoreAlgorithm store = cub::BLOCK_STORE_VECTORIZE;
};
struct direct {
  static constexpr cub::BlockLoadAlgorithm load = cub::BLOCK_LOAD_DIRECT;
  static constexpr cub::BlockStoreAlgorithm store = cub::BLOCK_STORE_DIRECT;
};
}  // namespace io

namespace algo {
struct raking {
  static constexpr cub::BlockScanAlgorithm value = cub::BLOCK_SCAN_RAKING;
};
struct warp_scans {
  static constexpr cub::BlockScanAlgorithm value = cub::BLOCK_SCAN_WARP_SCANS;
};
}  // namespace algo

// ------------------------------------------------------------------ the prefix functor

// CUB calls it from the block's first warp with the tile's aggregate; lane 0's
// result seeds the tile's scan. It returns the composition of every earlier
// tile and folds this tile's aggregate in. Only the first warp's copy is ever
// updated and read, so it lives in that warp's registers from tile to tile.
template <typename Pair, typename Op>
struct RunningPrefix {
  Pair running;
  __device__ __forceinline__ Pair operator()(const Pair& tile_aggregate) {
    const Pair prefix = running;
    running = Op{}(prefix, tile_aggregate);
    return prefix;
  }
};

// ------------------------------------------------------------------ the tasks

// (a, b) is the map h -> a * h + b; `first` is applied first, then `then`:
// h -> then.a * (first.a * h + first.b) + then.b.
struct AffineCompose {
  __device__ __forceinline__ float2 operator()(const float2& first, const float2& then) const {
    return make_float2(first.x * then.x, then.x * first.y + then.y);
  }
};

struct recurrence {
  using first_t = float;
  using pair_t = float2;
  using op_t = AffineCompose;
  static constexpr float first_oob = 1.0f;  // the identity map (1, 0) pads a partial tile
  static constexpr float second_oob = 0.0f;
  static __device__ __forceinline__ pair_t identity() { return make_float2(1.0f, 0.0f); }
  static __device__ __forceinline__ pair_t zip(float a, float b) { return make_float2(a, b); }
  static __device__ __forceinline__ float result(const pair_t& p) { return p.y; }
};

struct __align__(8) FlagValue {
  int flag;
  float value;
};

// A set flag on the right operand starts a segment: what came before is dropped.
struct SegmentedAdd {
  __device__ __forceinline__ FlagValue operator()(const FlagValue& first,
                                                  const FlagValue& then) const {
    FlagValue r;
    r.flag = first.flag | then.flag;
    r.value = then.flag ? then.value : first.value + then.value;
    return r;
  }
};

struct segmented_sum {
  using first_t = int;
  using pair_t = FlagValue;
  using op_t = SegmentedAdd;
  static constexpr int first_oob = 0;  // (0, 0) pads a partial tile
  static constexpr float second_oob = 0.0f;
  static __device__ __forceinline__ pair_t identity() { return FlagValue{0, 0.0f}; }
  static __device__ __forceinline__ pair_t zip(int flag, float value) {
    return FlagValue{flag, value};
  }
  static __device__ __forceinline__ float result(const pair_t& p) { return p.value; }
};

// ------------------------------------------------------------------ the row kernel

// One tile: load both inputs, zip them into pairs, scan (seeded by `prefix`),
// store the result field. FULL tiles move whole; the last, partial tile is
// guarded, padded with the operator's identity.
template <typename Task, int THREADS, int ITEMS, typename IO, typename ALGO>
struct RowTile {
  using First = typename Task::first_t;
  using Pair = typename Task::pair_t;
  using Prefix = RunningPrefix<Pair, typename Task::op_t>;
  using LoadFirst = cub::BlockLoad<First, THREADS, ITEMS, IO::load>;
  using LoadSecond = cub::BlockLoad<float, THREADS, ITEMS, IO::load>;
  using Store = cub::BlockStore<float, THREADS, ITEMS, IO::store>;
  using Scan = cub::BlockScan<Pair, THREADS, ALGO::value>;

  // The store shares the first load's memory; see row_scan for the barriers.
  struct TempStorage {
    union {
      typename LoadFirst::TempStorage load_first;
      typename Store::TempStorage store;
    } first_or_store;
    typename LoadSecond::TempStorage load_second;
    typename Scan::TempStorage scan;
  };

  template <bool FULL>
  static __device__ __forceinline__ void run(TempStorage& temp, const First* first,
                                             const float* second, float* out, int valid,
                                             Prefix& prefix) {
    First f[ITEMS];
    float s[ITEMS];
    if constexpr (FULL) {
      LoadFirst(temp.first_or_store.load_first).Load(first, f);
      LoadSecond(temp.load_second).Load(second, s);
    } else {
      LoadFirst(temp.first_or_store.load_first).Load(first, f, valid, Task::first_oob);
      LoadSecond(temp.load_second).Load(second, s, valid, Task::second_oob);
    }
    Pair items[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      items[i] = Task::zip(f[i], s[i]);
    }
    Scan(temp.scan).InclusiveScan(items, items, typename Task::op_t{}, prefix);
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      s[i] = Task::result(items[i]);
    }
    if constexpr (FULL) {
      Store(temp.first_or_store.store).Store(out, s);
    } else {
      Store(temp.first_or_store.store).Store(out, s, valid);
    }
  }
};

// Shared memory and barriers, for tile t (L1, L2: the two loads; S: the scan,
// whose own barriers are B; W: the store; E: the end-of-tile barrier):
//   L1(t) A, L2(t) B, S(t) C [B inside], W(t) A, E
// - W(t) writes A after every thread passed B(t), so after every L1(t) read;
// - L1(t+1) writes A, L2(t+1) writes B and S(t+1) writes C after E(t), so after
//   every read of W(t), L2(t) and S(t).
// Both scan algorithms with a prefix functor contain at least one barrier
// (the broadcast of the functor's result) for blocks of more than one warp.
// With direct and vectorize I/O the loads and the store use no shared memory;
// E then protects the scan alone.
template <typename Task, int THREADS, int ITEMS, typename IO, typename ALGO>
__device__ __forceinline__ void row_scan(const typename Task::first_t* __restrict__ first,
                                         const float* __restrict__ second,
                                         float* __restrict__ out, int cols) {
  static_assert(THREADS > 32, "the barrier analysis above needs more than one warp");
  using Tile = RowTile<Task, THREADS, ITEMS, IO, ALGO>;
  __shared__ typename Tile::TempStorage temp;

  constexpr int kTile = THREADS * ITEMS;
  const std::size_t row_offset = static_cast<std::size_t>(blockIdx.x) * cols;
  const typename Task::first_t* row_first = first + row_offset;
  const float* row_second = second + row_offset;
  float* row_out = out + row_offset;
  typename Tile::Prefix prefix{Task::identity()};

  const int full = cols / kTile * kTile;
  int base = 0;
  for (; base < full; base += kTile) {
    Tile::template run<true>(temp, row_first + base, row_second + base, row_out + base, kTile,
                             prefix);
    __syncthreads();
  }
  if (base < cols) {
    Tile::template run<false>(temp, row_first + base, row_second + base, row_out + base,
                              cols - base, prefix);
  }
}

}  // namespace records

// One extern "C" kernel per configuration (see the top of the file for the name).
#define RECORDS_KERNEL(TASK, THREADS, ITEMS, IO, ALGO)                                           \
  extern "C" __global__ void __launch_bounds__(THREADS)                                        \
      TASK##_t##THREADS##_i##ITEMS##_##IO##_##ALGO(                                              \
          const records::TASK::first_t* __restrict__ first, const float* __restrict__ second,    \
          float* __restrict__ out, int cols) {                                                   \
    records::row_scan<records::TASK, THREADS, ITEMS, records::io::IO, records::algo::ALGO>(      \
        first, second, out, cols);                                                               \
  }

#ifndef RECORDS_GENERATED_INSTANCES
RECORDS_KERNEL(recurrence, 256, 8, warp_transpose, warp_scans)
RECORDS_KERNEL(recurrence, 256, 8, warp_transpose, raking)
RECORDS_KERNEL(segmented_sum, 256, 8, warp_transpose, warp_scans)
RECORDS_KERNEL(segmented_sum, 256, 8, warp_transpose, raking)
#endif
