// SPDX-License-Identifier: Apache-2.0
// cub::BlockAdjacentDifference::SubtractLeft for host execution: the contract, not CUB's code.
//
// Each thread passes its items in the blocked arrangement; output[i] becomes
// op(input[i], the item before it): input[i - 1] of the same thread, or for
// item 0 the last item of the thread one rank lower. Thread 0's item 0 has
// none: it is copied unchanged, or given tile_predecessor_item as the item
// before it (read in thread 0 only). Every thread's last item goes through the
// temp storage, read after the call's barrier, so reusing the temp storage
// needs a barrier after the call. output may be input itself.

#pragma once

#include <cub/hostexec_common.cuh>

namespace cub {

template <class T, int BX, int BY = 1, int BZ = 1, int LEGACY_PTX_ARCH = 0>
class BlockAdjacentDifference {
  static constexpr int kThreads = BX * BY * BZ;

 public:
  struct TempStorage {
    T last_items[kThreads];
  };

  BlockAdjacentDifference()
      : storage_(::hx::private_storage<TempStorage, BlockAdjacentDifference>(
            "BlockAdjacentDifference private")) {
    ::hx::check_block_shape<BX, BY, BZ>("cub::BlockAdjacentDifference");
  }
  explicit BlockAdjacentDifference(TempStorage& temp_storage) : storage_(temp_storage) {
    ::hx::check_block_shape<BX, BY, BZ>("cub::BlockAdjacentDifference");
  }

  template <int N, class OutputT, class Op>
  void SubtractLeft(T (&input)[N], OutputT (&output)[N], Op op) {
    run(input, output, op, nullptr);
  }
  template <int N, class OutputT, class Op>
  void SubtractLeft(T (&input)[N], OutputT (&output)[N], Op op, T tile_predecessor_item) {
    run(input, output, op, &tile_predecessor_item);
  }

 private:
  template <int N, class OutputT, class Op>
  void run(T (&input)[N], OutputT (&output)[N], Op op, const T* predecessor) {
    const int rank = ::hx::rank();
    TempStorage& s = storage_;
    ::hx::StorageWindow window(&s, sizeof(TempStorage), "cub::BlockAdjacentDifference");
    ::hx::sstore(&s.last_items[rank], input[N - 1], "cub::BlockAdjacentDifference");
    __syncthreads();
    T before = rank > 0 ? ::hx::sload(&s.last_items[rank - 1], "cub::BlockAdjacentDifference")
                        : (predecessor != nullptr ? *predecessor : input[0]);
    // from the last item down, so that output may be input
    for (int i = N - 1; i > 0; --i) output[i] = op(input[i], input[i - 1]);
    output[0] = (rank == 0 && predecessor == nullptr) ? static_cast<OutputT>(input[0])
                                                      : op(input[0], before);
  }

  TempStorage& storage_;
};

}  // namespace cub
