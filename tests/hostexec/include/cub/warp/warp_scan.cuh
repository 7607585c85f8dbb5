// SPDX-License-Identifier: Apache-2.0
// cub::WarpScan for host execution: the contract, not CUB's algorithms.
//
// A logical warp is LOGICAL_WARP_THREADS consecutive ranks (a power of two,
// at most 32), all of which must make the same call. Lane l's inclusive
// output is x0 (+) ... (+) xl, its exclusive output x0 (+) ... (+) x(l-1),
// seeded by the initial value when one is given; ExclusiveSum gives lane 0 a
// 0, ExclusiveScan without an initial value leaves lane 0's output undefined
// (this shim poisons it). The warp aggregate (every lane receives it)
// excludes the initial value. Broadcast returns lane `src_lane`'s input in
// every lane.
//
// Each logical warp needs a TempStorage of its own (CUB's contract; its
// shuffle-based scans store nothing in it, this shim does): the lanes write
// their inputs to it, pass a barrier of the logical warp, read them and pass
// another, so two warps sharing one TempStorage race.

#pragma once

#include <cub/hostexec_common.cuh>

namespace cub {

template <class T, int LOGICAL_WARP_THREADS = 32, int LEGACY_PTX_ARCH = 0>
class WarpScan {
  static constexpr int L = LOGICAL_WARP_THREADS;
  static_assert(L >= 1 && L <= 32 && (L & (L - 1)) == 0, "logical warps are powers of two");

 public:
  struct TempStorage {
    T lanes[L];
  };

  explicit WarpScan(TempStorage& temp_storage) : storage_(temp_storage) {
    const int r = ::hx::rank();
    first_ = r / L * L;
    lane_ = r % L;
  }

  void InclusiveSum(T input, T& output) { scan(input, &output, nullptr, Plus(), nullptr, 0); }
  void InclusiveSum(T input, T& output, T& warp_aggregate) {
    scan(input, &output, nullptr, Plus(), nullptr, 0, &warp_aggregate);
  }
  template <class ScanOp>
  void InclusiveScan(T input, T& output, ScanOp op) {
    scan(input, &output, nullptr, op, nullptr, 0);
  }
  template <class ScanOp>
  void InclusiveScan(T input, T& output, ScanOp op, T& warp_aggregate) {
    scan(input, &output, nullptr, op, nullptr, 0, &warp_aggregate);
  }
  void ExclusiveSum(T input, T& output) {
    const T zero{};
    scan(input, nullptr, &output, Plus(), &zero, 0);
  }
  void ExclusiveSum(T input, T& output, T& warp_aggregate) {
    const T zero{};
    scan(input, nullptr, &output, Plus(), &zero, 0, &warp_aggregate);
  }
  template <class ScanOp>
  void ExclusiveScan(T input, T& output, ScanOp op) {
    scan(input, nullptr, &output, op, nullptr, 0);
  }
  template <class ScanOp>
  void ExclusiveScan(T input, T& output, ScanOp op, T& warp_aggregate) {
    scan(input, nullptr, &output, op, nullptr, 0, &warp_aggregate);
  }
  template <class ScanOp>
  void ExclusiveScan(T input, T& output, T initial_value, ScanOp op) {
    scan(input, nullptr, &output, op, &initial_value, 0);
  }
  template <class ScanOp>
  void ExclusiveScan(T input, T& output, T initial_value, ScanOp op, T& warp_aggregate) {
    scan(input, nullptr, &output, op, &initial_value, 0, &warp_aggregate);
  }
  T Broadcast(T input, unsigned src_lane) {
    if (src_lane >= static_cast<unsigned>(L))
      ::hx::fail("cub::WarpScan::Broadcast from lane %u of a %d-lane warp", src_lane, L);
    T values[L];
    gather(input, values, "cub::WarpScan::Broadcast");
    return values[src_lane];
  }

 private:
  struct Plus {
    T operator()(const T& a, const T& b) const { return static_cast<T>(a + b); }
  };

  void gather(const T& input, T (&values)[L], const char* what) {
    ::hx::StorageWindow window(&storage_, sizeof(TempStorage), what);
    ::hx::sstore(&storage_.lanes[lane_], input, what);
    ::hx::group_sync(first_, L, what);
    for (int l = 0; l < L; ++l) values[l] = ::hx::sload(&storage_.lanes[l], what);
    window.close();
    ::hx::group_sync(first_, L, what);
  }

  template <class ScanOp>
  void scan(const T& input, T* inclusive, T* exclusive, ScanOp op, const T* seed, int,
            T* aggregate = nullptr) {
    T values[L];
    gather(input, values, "cub::WarpScan");
    ::hx::Maybe<T> running{seed != nullptr ? *seed : T{}, seed != nullptr};
    for (int l = 0; l <= lane_; ++l) {
      if (l == lane_ && exclusive != nullptr)
        *exclusive = running.defined ? running.value : ::hx::poison<T>();
      running = {running.defined ? op(running.value, values[l]) : values[l], true};
    }
    if (inclusive != nullptr) *inclusive = running.value;
    if (aggregate != nullptr) {
      T total = values[0];
      for (int l = 1; l < L; ++l) total = op(total, values[l]);
      *aggregate = total;
    }
  }

  TempStorage& storage_;
  int first_ = 0;
  int lane_ = 0;
};

}  // namespace cub
