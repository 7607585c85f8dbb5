// SPDX-License-Identifier: Apache-2.0
//
// bfloat16 rows scanned in float32 with a carried prefix, bfloat16 out, written
// directly in CUDA C++ with CUB: the C++ contender of bench/bf16_rowscan.py.
//
// One thread block walks one row tile by tile (THREADS x ITEMS items a tile):
// cub::BlockLoad<__nv_bfloat16> brings the tile's bfloat16 items into
// registers (vector loads of the two-byte items, or coalesced warp-striped
// loads and a shared-memory exchange of two-byte items), each is widened to
// float in registers (exact), cub::BlockScan<float>::InclusiveSum scans the
// tile seeded by a stateful prefix functor carrying the float32 total of the
// earlier tiles, each sum is rounded back to bfloat16 (__float2bfloat16_rn:
// to nearest, ties to even), and cub::BlockStore<__nv_bfloat16> writes the
// tile. The memory traffic is the bfloat16 data's: two bytes in and two out an
// item; the exchanges move two-byte items too.
//
// Written for speed, as bench/cub_rowscan_kernel.cuh: the full tiles run
// unguarded in the loop and the partial tile once after it, a barrier only
// where shared memory is reused, __restrict__ pointers (loads through the
// read-only path), the block size declared as launch bounds; vector accesses
// only where the row is 16-byte aligned (checked once per row, else direct).
//
// Tile I/O (io): vectorize (full tiles in 16-byte words where a thread's items
// are whole words, see load_words), warp_transpose, transpose, direct.
// Scan algorithms (algo): raking, warp_scans.
//
// Kernels are `extern "C"` (no name mangling), one per configuration, named
//   bf16_rowscan_t<THREADS>_i<ITEMS>_<io>_<algo>
// e.g. bf16_rowscan_t256_i8_vectorize_raking, with the signature
//   (const __nv_bfloat16* src, __nv_bfloat16* dst, int cols)
// over C-contiguous rows x cols arrays, launched with grid = rows and
// block = THREADS.
//
// bench/bf16_rowscan.py compiles this file several times in parallel, each time
// through a generated unit that defines BF16_GENERATED_INSTANCES, includes this
// file and lists its kernels with BF16_ROWSCAN_KERNEL(...). Compiled alone it
// emits the 256 x 8 kernels:
//   nvcc -O3 -std=c++17 -arch=sm_90 -cubin -I$CUDA_HOME/include/cccl cub_bf16_rowscan.cu

#include <cuda_bf16.h>

#include <cub/block/block_load.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>

#include <cstddef>

namespace bf16_bench {

// ------------------------------------------------------------------ algorithms

namespace io {
struct vectorize {
  static constexpr cub::BlockLoadAlgorithm load = cub::BLOCK_LOAD_VECTORIZE;
  static constexpr cub::BlockStoreAlgorithm store = cub::BLOCK_STORE_VECTORIZE;
};
struct warp_transpose {
  static constexpr cub::BlockLoadAlgorithm load = cub::BLOCK_LOAD_WARP_TRANSPOSE;
  static constexpr cub::BlockStoreAlgorithm store = cub::BLOCK_STORE_WARP_TRANSPOSE;
};
struct transpose {
  static constexpr cub::BlockLoadAlgorithm load = cub::BLOCK_LOAD_TRANSPOSE;
  static constexpr cub::BlockStoreAlgorithm store = cub::BLOCK_STORE_TRANSPOSE;
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

__host__ __device__ constexpr bool uses_shared(cub::BlockLoadAlgorithm a) {
  return a != cub::BLOCK_LOAD_DIRECT && a != cub::BLOCK_LOAD_STRIPED &&
         a != cub::BLOCK_LOAD_VECTORIZE;
}
__host__ __device__ constexpr bool uses_shared(cub::BlockStoreAlgorithm a) {
  return a != cub::BLOCK_STORE_DIRECT && a != cub::BLOCK_STORE_STRIPED &&
         a != cub::BLOCK_STORE_VECTORIZE;
}

// ------------------------------------------------------------------ the prefix

// CUB calls it from the first warp with the tile's float32 aggregate; lane 0's
// return seeds the scan. Carries the float32 total of every earlier tile.
struct Carry {
  float total;
  __device__ __forceinline__ float operator()(float tile_aggregate) {
    const float prefix = total;
    total = prefix + tile_aggregate;
    return prefix;
  }
};

template <int ITEMS>
__device__ __forceinline__ void widen(const __nv_bfloat16 (&raw)[ITEMS], float (&items)[ITEMS]) {
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    items[i] = __bfloat162float(raw[i]);
  }
}

template <int ITEMS>
__device__ __forceinline__ void round_back(const float (&items)[ITEMS],
                                           __nv_bfloat16 (&raw)[ITEMS]) {
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    raw[i] = __float2bfloat16_rn(items[i]);
  }
}

// ------------------------------------------------------------------ 16-byte words

// CUB's BLOCK_LOAD_VECTORIZE / BLOCK_STORE_VECTORIZE move __nv_bfloat16 items
// one by one: its vector types are built-in ones, and a bfloat16 "vector" is
// a struct of 2-byte members, 2-byte aligned. What a CUB user who reads the
// SASS writes instead: a thread's ITEMS items of the blocked arrangement
// (16-byte aligned where the row is) moved as uint4 words, 8 items a word.
template <int ITEMS>
constexpr bool kWholeWords = ITEMS * sizeof(__nv_bfloat16) % 16 == 0;

template <int ITEMS>
__device__ __forceinline__ void load_words(const __nv_bfloat16* __restrict__ tile,
                                           __nv_bfloat16 (&raw)[ITEMS]) {
  constexpr int kWords = ITEMS * sizeof(__nv_bfloat16) / 16;
  const uint4* words = reinterpret_cast<const uint4*>(tile + threadIdx.x * ITEMS);
  uint4 w[kWords];
#pragma unroll
  for (int k = 0; k < kWords; ++k) {
    w[k] = words[k];
  }
  memcpy(raw, w, sizeof(w));
}

template <int ITEMS>
__device__ __forceinline__ void store_words(__nv_bfloat16* __restrict__ tile,
                                            const __nv_bfloat16 (&raw)[ITEMS]) {
  constexpr int kWords = ITEMS * sizeof(__nv_bfloat16) / 16;
  uint4* words = reinterpret_cast<uint4*>(tile + threadIdx.x * ITEMS);
  uint4 w[kWords];
  memcpy(w, raw, sizeof(w));
#pragma unroll
  for (int k = 0; k < kWords; ++k) {
    words[k] = w[k];
  }
}

// ------------------------------------------------------------------ the kernel

template <int BLOCK, int ITEMS, cub::BlockLoadAlgorithm LOAD, cub::BlockStoreAlgorithm STORE,
          cub::BlockScanAlgorithm SCAN>
__device__ __forceinline__ void row_body(const __nv_bfloat16* __restrict__ src,
                                         __nv_bfloat16* __restrict__ dst, int cols) {
  using Load = cub::BlockLoad<__nv_bfloat16, BLOCK, ITEMS, LOAD>;
  using Store = cub::BlockStore<__nv_bfloat16, BLOCK, ITEMS, STORE>;
  using Scan = cub::BlockScan<float, BLOCK, SCAN>;
  __shared__ union {
    typename Load::TempStorage load;
    typename Store::TempStorage store;
    typename Scan::TempStorage scan;
  } temp;

  constexpr int kTile = BLOCK * ITEMS;
  const std::size_t row_offset = static_cast<std::size_t>(blockIdx.x) * cols;
  const __nv_bfloat16* row_src = src + row_offset;
  __nv_bfloat16* row_dst = dst + row_offset;
  Carry carry{0.0f};

  const int full = cols / kTile * kTile;
  int base = 0;
  for (; base < full; base += kTile) {
    __nv_bfloat16 raw[ITEMS];
    float items[ITEMS];
    if constexpr (LOAD == cub::BLOCK_LOAD_VECTORIZE && kWholeWords<ITEMS>) {
      load_words(row_src + base, raw);
    } else {
      Load(temp.load).Load(row_src + base, raw);
    }
    if constexpr (uses_shared(LOAD)) {
      __syncthreads();  // the scan reuses the load's storage
    }
    widen(raw, items);
    Scan(temp.scan).InclusiveSum(items, items, carry);
    __syncthreads();  // the store, or the next tile's scan, reuses the scan's storage
    round_back(items, raw);
    if constexpr (STORE == cub::BLOCK_STORE_VECTORIZE && kWholeWords<ITEMS>) {
      store_words(row_dst + base, raw);
    } else {
      Store(temp.store).Store(row_dst + base, raw);
    }
    if constexpr (uses_shared(STORE)) {
      __syncthreads();  // the next tile's load reuses the store's storage
    }
  }
  if (base < cols) {
    const int valid = cols - base;
    __nv_bfloat16 raw[ITEMS];
    float items[ITEMS];
    Load(temp.load).Load(row_src + base, raw, valid, __float2bfloat16(0.0f));
    __syncthreads();
    widen(raw, items);
    Scan(temp.scan).InclusiveSum(items, items, carry);
    __syncthreads();
    round_back(items, raw);
    Store(temp.store).Store(row_dst + base, raw, valid);
  }
}

// Vector accesses need 16-byte aligned rows (cols a multiple of 8 items): other
// rows are moved with direct accesses, checked once per row.
template <int BLOCK, int ITEMS, cub::BlockLoadAlgorithm LOAD, cub::BlockStoreAlgorithm STORE,
          cub::BlockScanAlgorithm SCAN>
__device__ __forceinline__ void row_dispatch(const __nv_bfloat16* __restrict__ src,
                                             __nv_bfloat16* __restrict__ dst, int cols) {
  if constexpr (LOAD == cub::BLOCK_LOAD_VECTORIZE || STORE == cub::BLOCK_STORE_VECTORIZE) {
    const std::size_t row_offset = static_cast<std::size_t>(blockIdx.x) * cols;
    const auto a = reinterpret_cast<unsigned long long>(src + row_offset);
    const auto b = reinterpret_cast<unsigned long long>(dst + row_offset);
    if ((a | b) % 16 != 0) {
      row_body<BLOCK, ITEMS, cub::BLOCK_LOAD_DIRECT, cub::BLOCK_STORE_DIRECT, SCAN>(src, dst,
                                                                                   cols);
      return;
    }
  }
  row_body<BLOCK, ITEMS, LOAD, STORE, SCAN>(src, dst, cols);
}

}  // namespace bf16_bench

#define BF16_ROWSCAN_KERNEL(THREADS, ITEMS, IO, ALGO)                                     \
  extern "C" __global__ void __launch_bounds__(THREADS)                                   \
      bf16_rowscan_t##THREADS##_i##ITEMS##_##IO##_##ALGO(                                 \
          const __nv_bfloat16* __restrict__ src, __nv_bfloat16* __restrict__ dst,       \
          int cols) {                                                                     \
    bf16_bench::row_dispatch<THREADS, ITEMS, bf16_bench::io::IO::load,                    \
                             bf16_bench::io::IO::store, bf16_bench::algo::ALGO::value>( \
        src, dst, cols);                                                                  \
  }

#ifndef BF16_GENERATED_INSTANCES
BF16_ROWSCAN_KERNEL(256, 8, vectorize, raking)
BF16_ROWSCAN_KERNEL(256, 8, vectorize, warp_scans)
BF16_ROWSCAN_KERNEL(256, 8, warp_transpose, raking)
BF16_ROWSCAN_KERNEL(256, 8, warp_transpose, warp_scans)
#endif
