// SPDX-License-Identifier: Apache-2.0
//
// Reverse row scans written directly in CUDA C++ with CUB: the C++ contenders
// of bench/reverse_bench.py.
//
// One thread block per row walks its row from its end, tile by tile (THREADS x
// ITEMS items a tile; the tiles aligned at the row's start, so the partial
// tile, if any, is the first one walked). CUB has no reverse block scan, so
// each thread loads the items of the *reversed* tile directly: thread t holds
// the tile's items THREADS*ITEMS-1 - (t*ITEMS + i), i = 0..ITEMS-1, which are
// the ITEMS consecutive items of the mirrored chunk (THREADS-1-t) of the tile,
// last first. The chunk is loaded with 16-byte vector loads (the row is
// 16-byte aligned: checked once per block at run time, else 4-byte loads) and
// reversed in registers (free: a renaming of registers). CUB's forward
// BlockScan over the reversed tile is the reverse scan; the results go back
// the same way. No shared-memory exchange, no extra barrier.
//
// Two tasks:
//
//   suffix_i32   int32 suffix sums, out[t] = src[t] + src[t+1] + ... + src[n-1]
//                (wrapping as the int32 adds do): BlockScan<int>::InclusiveSum
//                (items, items, prefix) with a stateful functor carrying the
//                int32 sum of every tile to the right.
//   recurrence   the backward recurrence h[t] = g[t] + a[t+1] * h[t+1], h[n] = 0
//                (docs/reverse.md), over float32 a and g, float32 h. Item t is
//                the map h -> c * h + g with (c, g) = (a[t+1], g[t]) as a
//                float2; BlockScan<float2>::InclusiveScan(items, items, compose,
//                prefix), the functor carrying the composition of every tile
//                to the right. h[t] is the g field of the scanned item. The
//                c of a thread's last item in the reversed order, a[p+ITEMS]
//                for a chunk starting at p, is the first a of the chunk to the
//                right, which the previous lane holds: one __shfl_up_sync,
//                lane 0 reads it from global memory (an L1/L2 hit).
//
// Written for speed:
//
// - the full tiles run unguarded in the loop; the partial tile, the first one
//   walked, once before it, guarded, padded with the operator's identity (0;
//   the identity map (1, 0));
// - the only shared memory is the scan's; one __syncthreads() per tile, after
//   the scan, keeps the next tile's scan from overwriting what a slower warp
//   still reads (the prefix broadcast). Nothing after the last tile;
// - __launch_bounds__(THREADS) on every kernel.
//
// Scan algorithms (algo): raking, warp_scans.
//
// Kernels are `extern "C"` (no name mangling), one per configuration, named
//   reverse_<task>_t<THREADS>_i<ITEMS>_<algo>
// e.g. reverse_suffix_i32_t256_i8_warp_scans, with the signatures
//   suffix_i32:  (const int* src, int* out, int cols)
//   recurrence:  (const float* a, const float* g, float* h, int cols)
// over C-contiguous rows x cols arrays, launched with grid = rows and
// block = THREADS.
//
// bench/reverse_bench.py compiles this file several times in parallel, each
// time through a generated unit that defines REVERSE_GENERATED_INSTANCES,
// includes this file and lists its kernels with REVERSE_SUFFIX_KERNEL(...) and
// REVERSE_RECURRENCE_KERNEL(...). Compiled alone it emits the 256 x 8 kernels:
//   nvcc -O3 -std=c++17 -arch=sm_90 -cubin -I$CUDA_HOME/include/cccl cub_reverse.cu

#include <cub/block/block_scan.cuh>

#include <cstddef>
#include <cstdint>

namespace reverse_bench {

// ------------------------------------------------------------------ scan algorithms

namespace algo {
struct raking {
  static constexpr cub::BlockScanAlgorithm value = cub::BLOCK_SCAN_RAKING;
};
struct warp_scans {
  static constexpr cub::BlockScanAlgorithm value = cub::BLOCK_SCAN_WARP_SCANS;
};
}  // namespace algo

// ------------------------------------------------------------------ reversed tile I/O

// 16 bytes of T at once.
template <typename T>
struct Vec4;
template <>
struct Vec4<int> {
  using type = int4;
};
template <>
struct Vec4<float> {
  using type = float4;
};

// items[i] = chunk[ITEMS-1-i]: a thread's chunk, last item first. FULL: every
// item is in the row; VECTOR: the chunk is 16-byte aligned. Otherwise items at
// or past `valid` (counted from the chunk's start) are `oob`.
template <bool FULL, bool VECTOR, typename T, int ITEMS>
__device__ __forceinline__ void load_reversed(const T* __restrict__ chunk, T (&items)[ITEMS],
                                              int valid, T oob) {
  if constexpr (FULL && VECTOR && ITEMS % 4 == 0) {
    using V = typename Vec4<T>::type;
    const V* v = reinterpret_cast<const V*>(chunk);
#pragma unroll
    for (int k = 0; k < ITEMS / 4; ++k) {
      const V x = v[k];
      items[ITEMS - 1 - 4 * k] = x.x;
      items[ITEMS - 2 - 4 * k] = x.y;
      items[ITEMS - 3 - 4 * k] = x.z;
      items[ITEMS - 4 - 4 * k] = x.w;
    }
  } else {
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      items[ITEMS - 1 - i] = (FULL || i < valid) ? chunk[i] : oob;
    }
  }
}

// chunk[i] = items[ITEMS-1-i], for i < valid unless FULL.
template <bool FULL, bool VECTOR, typename T, int ITEMS>
__device__ __forceinline__ void store_reversed(T* __restrict__ chunk, const T (&items)[ITEMS],
                                               int valid) {
  if constexpr (FULL && VECTOR && ITEMS % 4 == 0) {
    using V = typename Vec4<T>::type;
    V* v = reinterpret_cast<V*>(chunk);
#pragma unroll
    for (int k = 0; k < ITEMS / 4; ++k) {
      V x;
      x.x = items[ITEMS - 1 - 4 * k];
      x.y = items[ITEMS - 2 - 4 * k];
      x.z = items[ITEMS - 3 - 4 * k];
      x.w = items[ITEMS - 4 - 4 * k];
      v[k] = x;
    }
  } else {
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      if (FULL || i < valid) {
        chunk[i] = items[ITEMS - 1 - i];
      }
    }
  }
}

__device__ __forceinline__ bool aligned16(const void* p) {
  return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0;
}

// ------------------------------------------------------------------ prefix functors

// CUB calls them from the block's first warp with the tile's aggregate (the
// reversed tile combined in scan order); lane 0's result seeds the tile. Only
// the first warp's copy is updated and read: it stays in registers.
struct SuffixSum {
  int running;  // the sum of every tile to the right (int32, wrapping)
  __device__ __forceinline__ int operator()(int tile_aggregate) {
    const int suffix = running;
    running = suffix + tile_aggregate;
    return suffix;
  }
};

// (c, g) is the map h -> c * h + g. In the scan over the reversed tile the
// earlier operand is the map to the right, applied first:
// compose(right, left) = h -> left.c * (right.c * h + right.g) + left.g.
struct Compose {
  __device__ __forceinline__ float2 operator()(const float2& right, const float2& left) const {
    return make_float2(right.x * left.x, left.x * right.y + left.y);
  }
};

struct SuffixMap {
  float2 running;  // the composition of every tile to the right; (1, 0) at first
  __device__ __forceinline__ float2 operator()(const float2& tile_aggregate) {
    const float2 suffix = running;
    running = Compose{}(suffix, tile_aggregate);
    return suffix;
  }
};

// ------------------------------------------------------------------ suffix sums

template <int THREADS, int ITEMS, typename ALGO, bool VECTOR>
__device__ __forceinline__ void suffix_row(const int* __restrict__ src, int* __restrict__ out,
                                           int cols) {
  static_assert(THREADS > 32, "one barrier per tile needs more than one warp to matter");
  using Scan = cub::BlockScan<int, THREADS, ALGO::value>;
  __shared__ typename Scan::TempStorage temp;
  constexpr int kTile = THREADS * ITEMS;
  // this thread's chunk of the reversed tile, counted from the tile's start
  const int chunk = (THREADS - 1 - static_cast<int>(threadIdx.x)) * ITEMS;
  SuffixSum prefix{0};
  int items[ITEMS];

  const int full = cols / kTile * kTile;
  if (full < cols) {  // the partial tile first: the row's end
    const int valid = cols - full - chunk;
    load_reversed<false, false>(src + full + chunk, items, valid, 0);
    Scan(temp).InclusiveSum(items, items, prefix);
    store_reversed<false, false>(out + full + chunk, items, valid);
    __syncthreads();
  }
  for (int base = full - kTile; base >= 0; base -= kTile) {
    load_reversed<true, VECTOR>(src + base + chunk, items, ITEMS, 0);
    Scan(temp).InclusiveSum(items, items, prefix);
    store_reversed<true, VECTOR>(out + base + chunk, items, ITEMS);
    __syncthreads();
  }
}

template <int THREADS, int ITEMS, typename ALGO>
__device__ __forceinline__ void suffix_kernel(const int* __restrict__ src, int* __restrict__ out,
                                              int cols) {
  const std::size_t offset = static_cast<std::size_t>(blockIdx.x) * cols;
  const int* row = src + offset;
  int* row_out = out + offset;
  if (aligned16(row) && aligned16(row_out)) {
    suffix_row<THREADS, ITEMS, ALGO, true>(row, row_out, cols);
  } else {
    suffix_row<THREADS, ITEMS, ALGO, false>(row, row_out, cols);
  }
}

// ------------------------------------------------------------------ the backward recurrence

// One tile at `base`: a and g of this thread's chunk (reversed), c from a
// shifted by one, the scan, h stored back.
template <bool FULL, bool VECTOR, int THREADS, int ITEMS, typename Scan>
__device__ __forceinline__ void recurrence_tile(typename Scan::TempStorage& temp,
                                                const float* __restrict__ a,
                                                const float* __restrict__ g,
                                                float* __restrict__ h, int cols, int start,
                                                SuffixMap& prefix) {
  const int valid = cols - start;  // items of the chunk in the row (>= ITEMS when FULL)
  float av[ITEMS];
  float gv[ITEMS];
  load_reversed<FULL, VECTOR>(a + start, av, valid, 1.0f);
  load_reversed<FULL, VECTOR>(g + start, gv, valid, 0.0f);
  // a[start + ITEMS]: the previous lane's av[ITEMS-1]; lane 0 reads it itself.
  float next = __shfl_up_sync(0xffffffffu, av[ITEMS - 1], 1);
  if ((threadIdx.x & 31) == 0) {
    next = start + ITEMS < cols ? a[start + ITEMS] : 1.0f;
  }
  float2 items[ITEMS];
  // item i is position start + ITEMS-1-i, whose c is a[start + ITEMS - i]
  items[0] = make_float2(next, gv[0]);
#pragma unroll
  for (int i = 1; i < ITEMS; ++i) {
    items[i] = make_float2(av[i - 1], gv[i]);
  }
  // past the row: the identity map (1, 0) (a and g padded with 1 and 0)
  Scan(temp).InclusiveScan(items, items, Compose{}, prefix);
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    gv[i] = items[i].y;
  }
  store_reversed<FULL, VECTOR>(h + start, gv, valid);
}

template <int THREADS, int ITEMS, typename ALGO, bool VECTOR>
__device__ __forceinline__ void recurrence_row(const float* __restrict__ a,
                                               const float* __restrict__ g,
                                               float* __restrict__ h, int cols) {
  static_assert(THREADS > 32, "one barrier per tile needs more than one warp to matter");
  static_assert(THREADS % 32 == 0, "the shuffle reads the previous lane of a full warp");
  using Scan = cub::BlockScan<float2, THREADS, ALGO::value>;
  __shared__ typename Scan::TempStorage temp;
  constexpr int kTile = THREADS * ITEMS;
  const int chunk = (THREADS - 1 - static_cast<int>(threadIdx.x)) * ITEMS;
  SuffixMap prefix{make_float2(1.0f, 0.0f)};

  const int full = cols / kTile * kTile;
  if (full < cols) {
    recurrence_tile<false, false, THREADS, ITEMS, Scan>(temp, a, g, h, cols, full + chunk,
                                                        prefix);
    __syncthreads();
  }
  for (int base = full - kTile; base >= 0; base -= kTile) {
    recurrence_tile<true, VECTOR, THREADS, ITEMS, Scan>(temp, a, g, h, cols, base + chunk,
                                                        prefix);
    __syncthreads();
  }
}

template <int THREADS, int ITEMS, typename ALGO>
__device__ __forceinline__ void recurrence_kernel(const float* __restrict__ a,
                                                  const float* __restrict__ g,
                                                  float* __restrict__ h, int cols) {
  const std::size_t offset = static_cast<std::size_t>(blockIdx.x) * cols;
  const float* ra = a + offset;
  const float* rg = g + offset;
  float* rh = h + offset;
  if (aligned16(ra) && aligned16(rg) && aligned16(rh)) {
    recurrence_row<THREADS, ITEMS, ALGO, true>(ra, rg, rh, cols);
  } else {
    recurrence_row<THREADS, ITEMS, ALGO, false>(ra, rg, rh, cols);
  }
}

}  // namespace reverse_bench

// One extern "C" kernel per configuration (see the top of the file for the names).
#define REVERSE_SUFFIX_KERNEL(THREADS, ITEMS, ALGO)                                             \
  extern "C" __global__ void __launch_bounds__(THREADS)                                        \
      reverse_suffix_i32_t##THREADS##_i##ITEMS##_##ALGO(const int* __restrict__ src,             \
                                                        int* __restrict__ out, int cols) {       \
    reverse_bench::suffix_kernel<THREADS, ITEMS, reverse_bench::algo::ALGO>(src, out, cols);     \
  }

#define REVERSE_RECURRENCE_KERNEL(THREADS, ITEMS, ALGO)                                         \
  extern "C" __global__ void __launch_bounds__(THREADS)                                        \
      reverse_recurrence_t##THREADS##_i##ITEMS##_##ALGO(                                         \
          const float* __restrict__ a, const float* __restrict__ g, float* __restrict__ h,       \
          int cols) {                                                                            \
    reverse_bench::recurrence_kernel<THREADS, ITEMS, reverse_bench::algo::ALGO>(a, g, h, cols);  \
  }

#ifndef REVERSE_GENERATED_INSTANCES
REVERSE_SUFFIX_KERNEL(256, 8, raking)
REVERSE_SUFFIX_KERNEL(256, 8, warp_scans)
REVERSE_RECURRENCE_KERNEL(256, 8, raking)
REVERSE_RECURRENCE_KERNEL(256, 8, warp_scans)
#endif
