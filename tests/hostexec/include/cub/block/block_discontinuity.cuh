// SPDX-License-Identifier: Apache-2.0
// cub::BlockDiscontinuity::FlagHeads for host execution: the contract, not CUB's code.
//
// Each thread passes its items in the blocked arrangement; head_flags[i]
// becomes flag_op(the item before it, input[i]) (1 or 0): the item before is
// input[i - 1] of the same thread, or for item 0 the last item of the thread
// one rank lower. Thread 0's item 0 has none: it is flagged, or compared with
// tile_predecessor_item (read in thread 0 only). Every thread's last item
// goes through the temp storage, read after the call's barrier, so reusing
// the temp storage needs a barrier after the call.

#pragma once

#include <cub/hostexec_common.cuh>

namespace cub {

template <class T, int BX, int BY = 1, int BZ = 1, int LEGACY_PTX_ARCH = 0>
class BlockDiscontinuity {
  static constexpr int kThreads = BX * BY * BZ;

 public:
  struct TempStorage {
    T first_items[kThreads];
    T last_items[kThreads];
  };

  BlockDiscontinuity()
      : storage_(::hx::private_storage<TempStorage, BlockDiscontinuity>(
            "BlockDiscontinuity private")) {
    ::hx::check_block_shape<BX, BY, BZ>("cub::BlockDiscontinuity");
  }
  explicit BlockDiscontinuity(TempStorage& temp_storage) : storage_(temp_storage) {
    ::hx::check_block_shape<BX, BY, BZ>("cub::BlockDiscontinuity");
  }

  template <int N, class FlagT, class Op>
  void FlagHeads(FlagT (&head_flags)[N], T (&input)[N], Op flag_op) {
    run(head_flags, input, flag_op, nullptr);
  }
  template <int N, class FlagT, class Op>
  void FlagHeads(FlagT (&head_flags)[N], T (&input)[N], Op flag_op, T tile_predecessor_item) {
    run(head_flags, input, flag_op, &tile_predecessor_item);
  }

 private:
  template <int N, class FlagT, class Op>
  void run(FlagT (&head_flags)[N], T (&input)[N], Op flag_op, const T* predecessor) {
    const int rank = ::hx::rank();
    TempStorage& s = storage_;
    ::hx::StorageWindow window(&s, sizeof(TempStorage), "cub::BlockDiscontinuity");
    ::hx::sstore(&s.last_items[rank], input[N - 1], "cub::BlockDiscontinuity");
    __syncthreads();
    for (int i = N - 1; i > 0; --i) head_flags[i] = flag_op(input[i - 1], input[i]) ? 1 : 0;
    if (rank > 0) {
      const T before = ::hx::sload(&s.last_items[rank - 1], "cub::BlockDiscontinuity");
      head_flags[0] = flag_op(before, input[0]) ? 1 : 0;
    } else {
      head_flags[0] = predecessor == nullptr ? 1 : (flag_op(*predecessor, input[0]) ? 1 : 0);
    }
  }

  TempStorage& storage_;
};

}  // namespace cub
