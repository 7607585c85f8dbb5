// SPDX-License-Identifier: Apache-2.0
// What every shim header shares: CUB's enumerations, NullType, RowMajorTid,
// ThreadReduce, and the helpers that check a primitive's block shape and
// track its TempStorage window.
//
// These headers implement the contracts CUB documents for its block- and
// warp-level primitives (which thread holds which item, who calls a prefix
// callback, whose results are defined, when temp storage may be reused), as
// a second implementation written for checking: straightforward code, every
// shared-memory access checked by the runtime. They are not CUB's algorithms.

#pragma once

#include <hostexec/runtime.h>

// cudaError_t, cudaSuccess: the toolkit's
#include <driver_types.h>

namespace cub {

struct NullType {};

enum BlockScanAlgorithm {
  BLOCK_SCAN_RAKING,
  BLOCK_SCAN_RAKING_MEMOIZE,
  BLOCK_SCAN_WARP_SCANS,
};

enum BlockReduceAlgorithm {
  BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY,
  BLOCK_REDUCE_RAKING,
  BLOCK_REDUCE_WARP_REDUCTIONS,
};

enum BlockLoadAlgorithm {
  BLOCK_LOAD_DIRECT,
  BLOCK_LOAD_STRIPED,
  BLOCK_LOAD_VECTORIZE,
  BLOCK_LOAD_TRANSPOSE,
  BLOCK_LOAD_WARP_TRANSPOSE,
  BLOCK_LOAD_WARP_TRANSPOSE_TIMESLICED,
};

enum BlockStoreAlgorithm {
  BLOCK_STORE_DIRECT,
  BLOCK_STORE_STRIPED,
  BLOCK_STORE_VECTORIZE,
  BLOCK_STORE_TRANSPOSE,
  BLOCK_STORE_WARP_TRANSPOSE,
  BLOCK_STORE_WARP_TRANSPOSE_TIMESLICED,
};

//: The row-major linear rank of the calling thread in a block of the given shape.
inline int RowMajorTid(int block_dim_x, int block_dim_y, int block_dim_z) {
  const dim3& d = ::hx::block_dim();
  if (static_cast<unsigned>(block_dim_x) != d.x || static_cast<unsigned>(block_dim_y) != d.y ||
      static_cast<unsigned>(block_dim_z) != d.z)
    ::hx::fail("cub::RowMajorTid(%d, %d, %d) in a block launched as (%u, %u, %u)", block_dim_x,
               block_dim_y, block_dim_z, d.x, d.y, d.z);
  const uint3& t = ::hx::thread_idx();
  return static_cast<int>(t.x + d.x * (t.y + d.y * t.z));
}

//: Lane src_lane's input, for every lane of a logical warp of LOGICAL_WARP_THREADS lanes.
template <int LOGICAL_WARP_THREADS, class T>
T ShuffleIndex(T input, int src_lane, unsigned member_mask) {
  return __shfl_sync(member_mask, input, src_lane, LOGICAL_WARP_THREADS);
}

//: Reduces a thread's items in order: op(op(op(x0, x1), x2), ...).
template <class T, int N, class Op>
T ThreadReduce(const T (&input)[N], Op op) {
  T acc = input[0];
  for (int i = 1; i < N; ++i) acc = op(acc, input[i]);
  return acc;
}

}  // namespace cub

namespace hx {

//: A block primitive instantiated for one block shape must run in a block of that shape.
template <int BX, int BY, int BZ>
void check_block_shape(const char* what) {
  const dim3& d = block_dim();
  if (BX != static_cast<int>(d.x) || BY != static_cast<int>(d.y) || BZ != static_cast<int>(d.z))
    fail("%s for blocks of (%d, %d, %d) threads runs in a block launched as (%u, %u, %u)", what,
         BX, BY, BZ, d.x, d.y, d.z);
}

//: A primitive's use of its TempStorage, from construction of the window to its end.
struct StorageWindow {
  const void* p;
  size_t n;
  const char* what;
  bool open = true;
  StorageWindow(const void* p_, size_t n_, const char* what_) : p(p_), n(n_), what(what_) {
    storage_enter(p, n, what);
  }
  void close() {
    if (open) storage_leave(p, n, what);
    open = false;
  }
  ~StorageWindow() { close(); }
  StorageWindow(const StorageWindow&) = delete;
  StorageWindow& operator=(const StorageWindow&) = delete;
};

//: The TempStorage a primitive constructed without one uses (CUB: a private __shared__ one).
template <class Storage, class Tag>
Storage& private_storage(const char* name) {
  static const char tag = 0;
  return shared_object<Storage>(reinterpret_cast<long>(&tag), name);
}

//: A value that may be undefined (CUB's contract leaves it so).
template <class T>
struct Maybe {
  T value;
  bool defined;
};

}  // namespace hx
