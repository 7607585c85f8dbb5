// SPDX-License-Identifier: Apache-2.0
// cub::BlockLoad and CUB's direct thread loads, for host execution.
//
// Every global read is checked against the arrays the launch registered. A
// guarded load (valid items given) reads only tile items before `valid`;
// the others receive the default when one is given, keep their values with
// direct and striped accesses, and are undefined after an exchange (this shim
// poisons them). BLOCK_LOAD_DIRECT and _VECTORIZE give the blocked
// arrangement without shared memory, _STRIPED the striped one; _TRANSPOSE
// reads striped and exchanges block-wide, _WARP_TRANSPOSE(_TIMESLICED) read
// warp-striped and exchange within each warp (see block_exchange.cuh).

#pragma once

#include <cub/block/block_exchange.cuh>
#include <cub/hostexec_common.cuh>

namespace hx {

template <class T>
T load_global(const T* p, const char* what) {
  check_global(p, sizeof(T), false, what);
  check_aligned(p, alignof(T), false, what);
  T v;
  std::memcpy(static_cast<void*>(&v), static_cast<const void*>(p), sizeof(T));
  return v;
}

}  // namespace hx

namespace cub {

template <class T, int N>
void LoadDirectBlocked(int linear_tid, const T* ptr, T (&items)[N]) {
  for (int i = 0; i < N; ++i)
    items[i] = ::hx::load_global(ptr + linear_tid * N + i, "cub::LoadDirectBlocked");
}

template <class T, int N>
void LoadDirectBlocked(int linear_tid, const T* ptr, T (&items)[N], int valid_items) {
  for (int i = 0; i < N; ++i)
    if (linear_tid * N + i < valid_items)
      items[i] = ::hx::load_global(ptr + linear_tid * N + i, "cub::LoadDirectBlocked");
}

template <class T, class D, int N>
void LoadDirectBlocked(int linear_tid, const T* ptr, T (&items)[N], int valid_items, D oob) {
  for (int i = 0; i < N; ++i) items[i] = static_cast<T>(oob);
  LoadDirectBlocked(linear_tid, ptr, items, valid_items);
}

//: Blocked loads: CUB vectorises them where the thread's items are aligned for
//: it and loads them one by one otherwise; the items are the same.
template <class T, int N>
void LoadDirectBlockedVectorized(int linear_tid, const T* ptr, T (&items)[N]) {
  LoadDirectBlocked(linear_tid, ptr, items);
}

template <int BLOCK_THREADS, class T, int N>
void LoadDirectStriped(int linear_tid, const T* ptr, T (&items)[N]) {
  for (int i = 0; i < N; ++i)
    items[i] = ::hx::load_global(ptr + i * BLOCK_THREADS + linear_tid, "cub::LoadDirectStriped");
}

template <int BLOCK_THREADS, class T, int N>
void LoadDirectStriped(int linear_tid, const T* ptr, T (&items)[N], int valid_items) {
  for (int i = 0; i < N; ++i)
    if (i * BLOCK_THREADS + linear_tid < valid_items)
      items[i] =
          ::hx::load_global(ptr + i * BLOCK_THREADS + linear_tid, "cub::LoadDirectStriped");
}

template <int BLOCK_THREADS, class T, class D, int N>
void LoadDirectStriped(int linear_tid, const T* ptr, T (&items)[N], int valid_items, D oob) {
  for (int i = 0; i < N; ++i) items[i] = static_cast<T>(oob);
  LoadDirectStriped<BLOCK_THREADS>(linear_tid, ptr, items, valid_items);
}

template <class T, int N>
void LoadDirectWarpStriped(int linear_tid, const T* ptr, T (&items)[N], int valid_items) {
  const int lane = linear_tid % 32;
  const int base = linear_tid / 32 * 32 * N;
  for (int i = 0; i < N; ++i)
    if (base + i * 32 + lane < valid_items)
      items[i] = ::hx::load_global(ptr + base + i * 32 + lane, "cub::LoadDirectWarpStriped");
}

template <class T, int BX, int N, BlockLoadAlgorithm ALGO = BLOCK_LOAD_DIRECT, int BY = 1,
          int BZ = 1, int LEGACY_PTX_ARCH = 0>
class BlockLoad {
  static constexpr int kThreads = BX * BY * BZ;
  static constexpr bool kExchange = ALGO == BLOCK_LOAD_TRANSPOSE ||
                                    ALGO == BLOCK_LOAD_WARP_TRANSPOSE ||
                                    ALGO == BLOCK_LOAD_WARP_TRANSPOSE_TIMESLICED;
  using Exchange = BlockExchange<T, BX, N, ALGO == BLOCK_LOAD_WARP_TRANSPOSE_TIMESLICED, BY, BZ>;

 public:
  struct Empty {};
  using TempStorage = std::conditional_t<kExchange, typename Exchange::TempStorage, Empty>;

  BlockLoad() : storage_(::hx::private_storage<TempStorage, BlockLoad>("BlockLoad private")) {
    ::hx::check_block_shape<BX, BY, BZ>("cub::BlockLoad");
  }
  explicit BlockLoad(TempStorage& temp_storage) : storage_(temp_storage) {
    ::hx::check_block_shape<BX, BY, BZ>("cub::BlockLoad");
  }

  void Load(const T* ptr, T (&items)[N]) { run(ptr, items, kThreads * N, false); }
  void Load(const T* ptr, T (&items)[N], int valid_items) {
    run(ptr, items, valid_items, false);
  }
  template <class D>
  void Load(const T* ptr, T (&items)[N], int valid_items, D oob_default) {
    for (int i = 0; i < N; ++i) items[i] = static_cast<T>(oob_default);
    run(ptr, items, valid_items, true);
  }

 private:
  void run(const T* ptr, T (&items)[N], int valid, bool has_default) {
    const int r = ::hx::rank();
    if constexpr (ALGO == BLOCK_LOAD_DIRECT || ALGO == BLOCK_LOAD_VECTORIZE) {
      LoadDirectBlocked(r, ptr, items, valid);
    } else if constexpr (ALGO == BLOCK_LOAD_STRIPED) {
      LoadDirectStriped<kThreads>(r, ptr, items, valid);
    } else {
      if (!has_default && valid < kThreads * N)
        for (int i = 0; i < N; ++i) items[i] = ::hx::poison<T>();
      if constexpr (ALGO == BLOCK_LOAD_TRANSPOSE) {
        LoadDirectStriped<kThreads>(r, ptr, items, valid);
        Exchange(storage_).StripedToBlocked(items);
      } else {
        LoadDirectWarpStriped(r, ptr, items, valid);
        Exchange(storage_).WarpStripedToBlocked(items);
      }
    }
  }

  TempStorage& storage_;
};

}  // namespace cub
