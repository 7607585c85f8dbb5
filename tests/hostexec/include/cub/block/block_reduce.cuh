// SPDX-License-Identifier: Apache-2.0
// cub::BlockReduce for host execution: the contract, not CUB's algorithms.
//
// Reduce/Sum return the reduction of the block's inputs (each thread's item,
// or its items reduced first) in thread 0 only; every other thread receives
// an undefined value (this shim poisons it). With num_valid, only the first
// num_valid threads' inputs take part (at least 1: fewer leaves the result
// undefined, which this shim refuses). The inputs are combined in rank order,
// which is exact for associative operators (the algorithms differ only in
// floating-point rounding; raking_commutative_only also needs a commutative
// operator). The result is read after the call's barrier, so reusing the
// temp storage needs a barrier after the call.

#pragma once

#include <cub/hostexec_common.cuh>

namespace cub {

template <class T, int BX, BlockReduceAlgorithm ALGO = BLOCK_REDUCE_WARP_REDUCTIONS, int BY = 1,
          int BZ = 1, int LEGACY_PTX_ARCH = 0>
class BlockReduce {
  static constexpr int kThreads = BX * BY * BZ;

 public:
  struct TempStorage {
    T items[kThreads];
  };

  BlockReduce()
      : storage_(::hx::private_storage<TempStorage, BlockReduce>("BlockReduce private")) {
    ::hx::check_block_shape<BX, BY, BZ>("cub::BlockReduce");
  }
  explicit BlockReduce(TempStorage& temp_storage) : storage_(temp_storage) {
    ::hx::check_block_shape<BX, BY, BZ>("cub::BlockReduce");
  }

  template <class Op>
  T Reduce(T input, Op op) {
    return run(input, op, kThreads);
  }
  template <int N, class Op>
  T Reduce(T (&inputs)[N], Op op) {
    return run(ThreadReduce(inputs, op), op, kThreads);
  }
  template <class Op>
  T Reduce(T input, Op op, int num_valid) {
    return run(input, op, num_valid);
  }
  T Sum(T input) { return run(input, Plus(), kThreads); }
  template <int N>
  T Sum(T (&inputs)[N]) {
    return run(ThreadReduce(inputs, Plus()), Plus(), kThreads);
  }
  T Sum(T input, int num_valid) { return run(input, Plus(), num_valid); }

 private:
  struct Plus {
    T operator()(const T& a, const T& b) const { return static_cast<T>(a + b); }
  };

  template <class Op>
  T run(T input, Op op, int num_valid) {
    if (num_valid < 1)
      ::hx::fail("cub::BlockReduce with num_valid=%d: the result of an empty reduction is "
                 "undefined",
                 num_valid);
    const int valid = num_valid < kThreads ? num_valid : kThreads;
    const int rank = ::hx::rank();
    TempStorage& s = storage_;
    ::hx::StorageWindow window(&s, sizeof(TempStorage), "cub::BlockReduce");
    if (rank < valid) ::hx::sstore(&s.items[rank], input, "cub::BlockReduce");
    __syncthreads();
    if (rank != 0) return ::hx::poison<T>();
    T acc = ::hx::sload(&s.items[0], "cub::BlockReduce");
    for (int r = 1; r < valid; ++r) acc = op(acc, ::hx::sload(&s.items[r], "cub::BlockReduce"));
    return acc;
  }

  TempStorage& storage_;
};

}  // namespace cub
