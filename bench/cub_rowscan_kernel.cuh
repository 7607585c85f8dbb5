// SPDX-License-Identifier: Apache-2.0
//
// The CUB row-wise inclusive sum kernel, shared by bench/cub_rowscan.cu (the
// stand-alone benchmark) and the sources bench/matrix.py generates (one
// extern "C" kernel per configuration, loaded from a cubin).
//
// One thread block walks one row tile by tile: cub::BlockLoad brings a tile
// into registers, cub::BlockScan::InclusiveSum scans it seeded by a stateful
// BlockPrefixCallbackOp that carries the running total from tile to tile, and
// cub::BlockStore writes it back. Written as a CUB user writes it for speed:
// full tiles in the loop, the tail once after it, barriers only where shared
// memory is reused, the block size declared as launch bounds.

#pragma once

#include <cub/block/block_load.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>

#include <cstddef>

// The kernels' pointer qualifier: __restrict__, as a CUB user writes a kernel
// whose input and output do not overlap (the compiler may then load through the
// read-only path, LDG.E.CONSTANT in SASS). bench/matrix.py --cub-restrict
// defines it empty for kernels that assume no such thing, as the library's
// loads cannot.
#ifndef ROWSCAN_RESTRICT
#define ROWSCAN_RESTRICT __restrict__
#endif

namespace rowscan_bench {

// Stateful prefix callback: returns the total of all earlier tiles and adds
// this tile's aggregate. CUB calls it from the first warp; lane 0's result
// seeds the scan. The running total is kept in S (int64 for int32 data, say),
// the value type T is what the scan sees.
template <typename T, typename S = T>
struct RunningTotal {
  S total;
  __device__ T operator()(T tile_aggregate) {
    S prefix = total;
    total = prefix + static_cast<S>(tile_aggregate);
    return static_cast<T>(prefix);
  }
};

// Algorithms whose TempStorage is empty: they touch no shared memory, so no
// barrier has to protect the union around them.
__host__ __device__ constexpr bool uses_shared(cub::BlockLoadAlgorithm a) {
  return a != cub::BLOCK_LOAD_DIRECT && a != cub::BLOCK_LOAD_STRIPED &&
         a != cub::BLOCK_LOAD_VECTORIZE;
}
__host__ __device__ constexpr bool uses_shared(cub::BlockStoreAlgorithm a) {
  return a != cub::BLOCK_STORE_DIRECT && a != cub::BLOCK_STORE_STRIPED &&
         a != cub::BLOCK_STORE_VECTORIZE;
}

// The kernel's body: the loop runs over full tiles only (no per-tile branch to
// the guarded partial-tile path, which costs registers in the loop), the last,
// partial tile is handled once after it; a barrier only where shared memory is
// reused. Called from a __global__ function that declares BLOCK as its launch
// bounds (row_inclusive_sum below, or a generated extern "C" wrapper).
template <typename T, typename S, int BLOCK, int ITEMS, cub::BlockLoadAlgorithm LOAD,
          cub::BlockStoreAlgorithm STORE, cub::BlockScanAlgorithm SCAN>
__device__ __forceinline__ void row_inclusive_sum_body(const T* ROWSCAN_RESTRICT src,
                                                       T* ROWSCAN_RESTRICT dst, int cols) {
  using Load = cub::BlockLoad<T, BLOCK, ITEMS, LOAD>;
  using Store = cub::BlockStore<T, BLOCK, ITEMS, STORE>;
  using Scan = cub::BlockScan<T, BLOCK, SCAN>;
  __shared__ union {
    typename Load::TempStorage load;
    typename Store::TempStorage store;
    typename Scan::TempStorage scan;
  } temp;

  constexpr int kTile = BLOCK * ITEMS;
  const std::size_t row_offset = static_cast<std::size_t>(blockIdx.x) * cols;
  const T* row_src = src + row_offset;
  T* row_dst = dst + row_offset;
  RunningTotal<T, S> running{S(0)};

  const int full = cols / kTile * kTile;
  int base = 0;
  for (; base < full; base += kTile) {
    T items[ITEMS];
    Load(temp.load).Load(row_src + base, items);
    if constexpr (uses_shared(LOAD)) {
      __syncthreads();  // the scan reuses the load's storage
    }
    Scan(temp.scan).InclusiveSum(items, items, running);
    __syncthreads();  // the store, or the next tile's scan, reuses the scan's storage
    Store(temp.store).Store(row_dst + base, items);
    if constexpr (uses_shared(STORE)) {
      __syncthreads();  // the next tile's load reuses the store's storage
    }
  }
  if (base < cols) {
    const int valid = cols - base;
    T items[ITEMS];
    Load(temp.load).Load(row_src + base, items, valid, T(0));
    __syncthreads();
    Scan(temp.scan).InclusiveSum(items, items, running);
    __syncthreads();
    Store(temp.store).Store(row_dst + base, items, valid);
  }
}

// Vector accesses need 16-byte aligned rows: a row that is not (its length
// not a multiple of 16 bytes) is scanned with direct accesses instead, as the
// library's generated code does. The check runs once per row.
template <typename T, typename S, int BLOCK, int ITEMS, cub::BlockLoadAlgorithm LOAD,
          cub::BlockStoreAlgorithm STORE, cub::BlockScanAlgorithm SCAN>
__device__ __forceinline__ void row_inclusive_sum_dispatch(const T* ROWSCAN_RESTRICT src,
                                                           T* ROWSCAN_RESTRICT dst, int cols) {
  if constexpr (LOAD == cub::BLOCK_LOAD_VECTORIZE || STORE == cub::BLOCK_STORE_VECTORIZE) {
    const std::size_t row_offset = static_cast<std::size_t>(blockIdx.x) * cols;
    const auto a = reinterpret_cast<unsigned long long>(src + row_offset);
    const auto b = reinterpret_cast<unsigned long long>(dst + row_offset);
    if ((a | b) % 16 != 0) {
      row_inclusive_sum_body<T, S, BLOCK, ITEMS, cub::BLOCK_LOAD_DIRECT, cub::BLOCK_STORE_DIRECT,
                             SCAN>(src, dst, cols);
      return;
    }
  }
  row_inclusive_sum_body<T, S, BLOCK, ITEMS, LOAD, STORE, SCAN>(src, dst, cols);
}

// The kernel as a template (the stand-alone benchmark instantiates it).
template <typename T, typename S, int BLOCK, int ITEMS, cub::BlockLoadAlgorithm LOAD,
          cub::BlockStoreAlgorithm STORE, cub::BlockScanAlgorithm SCAN>
__global__ void __launch_bounds__(BLOCK)
    row_inclusive_sum(const T* ROWSCAN_RESTRICT src, T* ROWSCAN_RESTRICT dst, int cols) {
  row_inclusive_sum_dispatch<T, S, BLOCK, ITEMS, LOAD, STORE, SCAN>(src, dst, cols);
}

}  // namespace rowscan_bench
