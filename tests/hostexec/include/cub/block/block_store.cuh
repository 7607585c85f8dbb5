// SPDX-License-Identifier: Apache-2.0
// cub::BlockStore and CUB's direct thread stores, for host execution.
//
// Every global write is checked against the arrays the launch registered; a
// guarded store (valid items given) writes only tile items before `valid`.
// Arrangements as in block_load.cuh. StoreDirectBlockedVectorized requires
// each thread's items to be aligned for CUB's vector type (the caller checks
// that); this shim refuses a misaligned call. A store that exchanges
// (_TRANSPOSE, _WARP_TRANSPOSE*) rearranges the caller's items array in place
// in CUB: afterwards its contents are undefined (this shim poisons them).

#pragma once

#include <cub/block/block_exchange.cuh>
#include <cub/hostexec_common.cuh>

namespace hx {

template <class T>
void store_global(T* p, const T& v, const char* what) {
  check_global(p, sizeof(T), true, what);
  check_aligned(p, alignof(T), true, what);
  std::memcpy(static_cast<void*>(p), static_cast<const void*>(&v), sizeof(T));
}

}  // namespace hx

namespace cub {

template <class T, int N>
void StoreDirectBlocked(int linear_tid, T* ptr, T (&items)[N]) {
  for (int i = 0; i < N; ++i)
    ::hx::store_global(ptr + linear_tid * N + i, items[i], "cub::StoreDirectBlocked");
}

template <class T, int N>
void StoreDirectBlocked(int linear_tid, T* ptr, T (&items)[N], int valid_items) {
  for (int i = 0; i < N; ++i)
    if (linear_tid * N + i < valid_items)
      ::hx::store_global(ptr + linear_tid * N + i, items[i], "cub::StoreDirectBlocked");
}

//: CUB's vector width for N items of T: min(4, N) when that is a power of two
//: dividing N, else 1.
template <class T, int N>
constexpr int vector_items() {
  constexpr int most = N < 4 ? N : 4;
  return ((most & (most - 1)) == 0 && N % most == 0) ? most : 1;
}

template <class T, int N>
void StoreDirectBlockedVectorized(int linear_tid, T* ptr, T (&items)[N]) {
  constexpr size_t align = sizeof(T) * vector_items<T, N>();
  const auto address = reinterpret_cast<unsigned long long>(ptr + linear_tid * N);
  if (address % align != 0)
    ::hx::fail("cub::StoreDirectBlockedVectorized: the thread's items at %p are not aligned to "
               "%zu bytes (a vector store would fault)",
               static_cast<void*>(ptr + linear_tid * N), align);
  StoreDirectBlocked(linear_tid, ptr, items);
}

template <int BLOCK_THREADS, class T, int N>
void StoreDirectStriped(int linear_tid, T* ptr, T (&items)[N]) {
  for (int i = 0; i < N; ++i)
    ::hx::store_global(ptr + i * BLOCK_THREADS + linear_tid, items[i], "cub::StoreDirectStriped");
}

template <int BLOCK_THREADS, class T, int N>
void StoreDirectStriped(int linear_tid, T* ptr, T (&items)[N], int valid_items) {
  for (int i = 0; i < N; ++i)
    if (i * BLOCK_THREADS + linear_tid < valid_items)
      ::hx::store_global(ptr + i * BLOCK_THREADS + linear_tid, items[i],
                         "cub::StoreDirectStriped");
}

template <class T, int N>
void StoreDirectWarpStriped(int linear_tid, T* ptr, T (&items)[N], int valid_items) {
  const int lane = linear_tid % 32;
  const int base = linear_tid / 32 * 32 * N;
  for (int i = 0; i < N; ++i)
    if (base + i * 32 + lane < valid_items)
      ::hx::store_global(ptr + base + i * 32 + lane, items[i], "cub::StoreDirectWarpStriped");
}

template <class T, int BX, int N, BlockStoreAlgorithm ALGO = BLOCK_STORE_DIRECT, int BY = 1,
          int BZ = 1, int LEGACY_PTX_ARCH = 0>
class BlockStore {
  static constexpr int kThreads = BX * BY * BZ;
  static constexpr bool kExchange = ALGO == BLOCK_STORE_TRANSPOSE ||
                                    ALGO == BLOCK_STORE_WARP_TRANSPOSE ||
                                    ALGO == BLOCK_STORE_WARP_TRANSPOSE_TIMESLICED;
  using Exchange = BlockExchange<T, BX, N, ALGO == BLOCK_STORE_WARP_TRANSPOSE_TIMESLICED, BY, BZ>;

 public:
  struct Empty {};
  using TempStorage = std::conditional_t<kExchange, typename Exchange::TempStorage, Empty>;

  BlockStore() : storage_(::hx::private_storage<TempStorage, BlockStore>("BlockStore private")) {
    ::hx::check_block_shape<BX, BY, BZ>("cub::BlockStore");
  }
  explicit BlockStore(TempStorage& temp_storage) : storage_(temp_storage) {
    ::hx::check_block_shape<BX, BY, BZ>("cub::BlockStore");
  }

  void Store(T* ptr, T (&items)[N]) { run(ptr, items, kThreads * N); }
  void Store(T* ptr, T (&items)[N], int valid_items) { run(ptr, items, valid_items); }

 private:
  void run(T* ptr, T (&input)[N], int valid) {
    const int r = ::hx::rank();
    T items[N];
    for (int i = 0; i < N; ++i) items[i] = input[i];
    if constexpr (ALGO == BLOCK_STORE_DIRECT || ALGO == BLOCK_STORE_VECTORIZE) {
      StoreDirectBlocked(r, ptr, items, valid);
    } else if constexpr (ALGO == BLOCK_STORE_STRIPED) {
      StoreDirectStriped<kThreads>(r, ptr, items, valid);
    } else if constexpr (ALGO == BLOCK_STORE_TRANSPOSE) {
      Exchange(storage_).BlockedToStriped(items);
      StoreDirectStriped<kThreads>(r, ptr, items, valid);
    } else {
      Exchange(storage_).BlockedToWarpStriped(items);
      StoreDirectWarpStriped(r, ptr, items, valid);
    }
    // CUB exchanges the caller's items in place: after a store that exchanges,
    // they are no longer the thread's items (undefined here)
    if constexpr (kExchange)
      for (int i = 0; i < N; ++i) input[i] = ::hx::poison<T>();
  }

  TempStorage& storage_;
};

}  // namespace cub
