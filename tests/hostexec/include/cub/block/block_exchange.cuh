// SPDX-License-Identifier: Apache-2.0
// cub::BlockExchange for host execution: rearranges a tile's items between
// threads through shared memory.
//
// Arrangements of a tile of T threads x N items: blocked (thread r holds
// items r*N .. r*N+N-1), striped (item i of thread r is tile item i*T + r) and
// warp-striped (item i of lane l of warp w is tile item w*32*N + i*32 + l).
// Block-wide exchanges write the storage, pass a block barrier and read it.
// Warp exchanges use the warp's own part of the storage and a warp barrier;
// with WARP_TIME_SLICING the warps take turns in one warp's worth of storage,
// separated by block barriers. Either way the call writes the storage before
// its first barrier and reads it after its last: reusing the storage needs a
// barrier after the call (a warp barrier for the warp's own part).

#pragma once

#include <cub/hostexec_common.cuh>

namespace cub {

template <class T, int BX, int N, bool WARP_TIME_SLICING = false, int BY = 1, int BZ = 1,
          int LEGACY_PTX_ARCH = 0>
class BlockExchange {
  static constexpr int kThreads = BX * BY * BZ;
  static constexpr int kWarpItems = 32 * N;

 public:
  struct TempStorage {
    T items[WARP_TIME_SLICING ? kWarpItems : kThreads * N];
  };

  BlockExchange()
      : storage_(::hx::private_storage<TempStorage, BlockExchange>("BlockExchange private")) {
    ::hx::check_block_shape<BX, BY, BZ>("cub::BlockExchange");
  }
  explicit BlockExchange(TempStorage& temp_storage) : storage_(temp_storage) {
    ::hx::check_block_shape<BX, BY, BZ>("cub::BlockExchange");
  }

  void StripedToBlocked(T (&items)[N]) {
    static_assert(!WARP_TIME_SLICING, "block-wide exchanges are not time-sliced here");
    block(items, [](int r, int i) { return i * kThreads + r; },
          [](int r, int i) { return r * N + i; });
  }
  void BlockedToStriped(T (&items)[N]) {
    static_assert(!WARP_TIME_SLICING, "block-wide exchanges are not time-sliced here");
    block(items, [](int r, int i) { return r * N + i; },
          [](int r, int i) { return i * kThreads + r; });
  }
  void WarpStripedToBlocked(T (&items)[N]) {
    warp(items, [](int l, int i) { return i * 32 + l; }, [](int l, int i) { return l * N + i; });
  }
  void BlockedToWarpStriped(T (&items)[N]) {
    warp(items, [](int l, int i) { return l * N + i; }, [](int l, int i) { return i * 32 + l; });
  }

 private:
  template <class From, class To>
  void block(T (&items)[N], From from, To to) {
    const int r = ::hx::rank();
    T* buf = storage_.items;
    ::hx::StorageWindow window(buf, sizeof(TempStorage), "cub::BlockExchange");
    for (int i = 0; i < N; ++i) ::hx::sstore(&buf[from(r, i)], items[i], "cub::BlockExchange");
    __syncthreads();
    for (int i = 0; i < N; ++i) items[i] = ::hx::sload(&buf[to(r, i)], "cub::BlockExchange");
  }

  template <class From, class To>
  void warp(T (&items)[N], From from, To to) {
    static_assert(kThreads % 32 == 0, "warp exchanges need whole warps");
    const int r = ::hx::rank();
    const int w = r / 32;
    const int l = r % 32;
    if (WARP_TIME_SLICING) {
      T* buf = storage_.items;
      ::hx::StorageWindow window(buf, sizeof(TempStorage), "cub::BlockExchange (time-sliced)");
      for (int slice = 0; slice < kThreads / 32; ++slice) {
        if (slice > 0) __syncthreads();
        if (slice == w) {
          for (int i = 0; i < N; ++i)
            ::hx::sstore(&buf[from(l, i)], items[i], "cub::BlockExchange (time-sliced)");
          __syncwarp();
          for (int i = 0; i < N; ++i)
            items[i] = ::hx::sload(&buf[to(l, i)], "cub::BlockExchange (time-sliced)");
        }
      }
      return;
    }
    T* buf = storage_.items + w * kWarpItems;
    ::hx::StorageWindow window(buf, sizeof(T) * kWarpItems, "cub::BlockExchange (warp)");
    for (int i = 0; i < N; ++i)
      ::hx::sstore(&buf[from(l, i)], items[i], "cub::BlockExchange (warp)");
    __syncwarp();
    for (int i = 0; i < N; ++i) items[i] = ::hx::sload(&buf[to(l, i)], "cub::BlockExchange (warp)");
  }

  TempStorage& storage_;
};

}  // namespace cub
