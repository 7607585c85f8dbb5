// SPDX-License-Identifier: Apache-2.0
// cub::BlockScan for host execution: the contract, not CUB's algorithms.
//
// Items are in blocked arrangement (thread r holds tile items r*N .. r*N+N-1).
// Inclusive outputs are seed (+) x0 (+) ... (+) xj, exclusive ones
// seed (+) x0 (+) ... (+) x(j-1); the seed is the initial value, the prefix
// callback's return in thread 0, or 0 for ExclusiveSum; an exclusive scan
// with none leaves thread 0's first output undefined (this shim poisons it).
// A block aggregate excludes the initial value.
//
// The prefix callback is called with the tile's aggregate by the threads CUB
// calls it from: every thread of a raking block of at most 32 threads, the
// ceil(T / ceil(T / 32)) first ranks of a larger raking block, the 32 lanes
// of warp 0 under warp_scans; each call runs in its own thread, and only
// thread 0's return counts.
//
// Temp storage: the call writes it before its first barrier and reads it
// after its last, so reusing it needs a barrier after the call (the runtime
// checks). With warp_scans and a prefix callback the call's window closes
// before the barrier that follows the callback, after which it reads only
// what the next call writes after its own first barrier: CUB's barrier after
// the callback orders this call's reads before the next call's writes.

#pragma once

#include <cub/hostexec_common.cuh>

namespace cub {

template <class T, int BX, BlockScanAlgorithm ALGO = BLOCK_SCAN_RAKING, int BY = 1, int BZ = 1,
          int LEGACY_PTX_ARCH = 0>
class BlockScan {
  static constexpr int kThreads = BX * BY * BZ;

 public:
  struct TempStorage {
    T items[kThreads];     // each thread's total
    T partials[kThreads];  // each thread's exclusive partial (thread 0's unused)
    T aggregate;
    T prefix;
  };

  BlockScan() : storage_(::hx::private_storage<TempStorage, BlockScan>("BlockScan private")) {
    ::hx::check_block_shape<BX, BY, BZ>("cub::BlockScan");
  }
  explicit BlockScan(TempStorage& temp_storage) : storage_(temp_storage) {
    ::hx::check_block_shape<BX, BY, BZ>("cub::BlockScan");
  }

  //: The threads that call a prefix callback: ranks 0 .. callers() - 1.
  static constexpr int callers() {
    if (ALGO == BLOCK_SCAN_WARP_SCANS) return kThreads < 32 ? kThreads : 32;
    if (kThreads <= 32) return kThreads;
    const int segment = (kThreads + 31) / 32;
    return (kThreads + segment - 1) / segment;
  }

  // -- one item a thread ----------------------------------------------------
  void ExclusiveSum(T input, T& output) { one(input, output, Sum(), false, Seed::kZero); }
  void ExclusiveSum(T input, T& output, T& block_aggregate) {
    one(input, output, Sum(), false, Seed::kZero, nullptr, &block_aggregate);
  }
  template <class PrefixOp>
  void ExclusiveSum(T input, T& output, PrefixOp& prefix_op) {
    one_cb(input, output, Sum(), false, prefix_op);
  }
  template <class ScanOp>
  void ExclusiveScan(T input, T& output, T initial_value, ScanOp scan_op) {
    one(input, output, scan_op, false, Seed::kGiven, &initial_value);
  }
  template <class ScanOp>
  void ExclusiveScan(T input, T& output, T initial_value, ScanOp scan_op, T& block_aggregate) {
    one(input, output, scan_op, false, Seed::kGiven, &initial_value, &block_aggregate);
  }
  template <class ScanOp>
  void ExclusiveScan(T input, T& output, ScanOp scan_op) {
    one(input, output, scan_op, false, Seed::kNone);
  }
  template <class ScanOp>
  void ExclusiveScan(T input, T& output, ScanOp scan_op, T& block_aggregate) {
    one(input, output, scan_op, false, Seed::kNone, nullptr, &block_aggregate);
  }
  template <class ScanOp, class PrefixOp>
  void ExclusiveScan(T input, T& output, ScanOp scan_op, PrefixOp& prefix_op) {
    one_cb(input, output, scan_op, false, prefix_op);
  }
  void InclusiveSum(T input, T& output) { one(input, output, Sum(), true, Seed::kNone); }
  void InclusiveSum(T input, T& output, T& block_aggregate) {
    one(input, output, Sum(), true, Seed::kNone, nullptr, &block_aggregate);
  }
  template <class PrefixOp>
  void InclusiveSum(T input, T& output, PrefixOp& prefix_op) {
    one_cb(input, output, Sum(), true, prefix_op);
  }
  template <class ScanOp>
  void InclusiveScan(T input, T& output, ScanOp scan_op) {
    one(input, output, scan_op, true, Seed::kNone);
  }
  template <class ScanOp>
  void InclusiveScan(T input, T& output, ScanOp scan_op, T& block_aggregate) {
    one(input, output, scan_op, true, Seed::kNone, nullptr, &block_aggregate);
  }
  template <class ScanOp, class PrefixOp>
  void InclusiveScan(T input, T& output, ScanOp scan_op, PrefixOp& prefix_op) {
    one_cb(input, output, scan_op, true, prefix_op);
  }

  // -- N items a thread -------------------------------------------------------
  template <int N>
  void ExclusiveSum(T (&input)[N], T (&output)[N]) {
    run(input, output, Sum(), false, Seed::kZero, nullptr, nullptr, NoPrefix());
  }
  template <int N>
  void ExclusiveSum(T (&input)[N], T (&output)[N], T& block_aggregate) {
    run(input, output, Sum(), false, Seed::kZero, nullptr, &block_aggregate, NoPrefix());
  }
  template <int N, class PrefixOp>
  void ExclusiveSum(T (&input)[N], T (&output)[N], PrefixOp& prefix_op) {
    run(input, output, Sum(), false, Seed::kCallback, nullptr, nullptr, &prefix_op);
  }
  template <int N, class ScanOp>
  void ExclusiveScan(T (&input)[N], T (&output)[N], T initial_value, ScanOp scan_op) {
    run(input, output, scan_op, false, Seed::kGiven, &initial_value, nullptr, NoPrefix());
  }
  template <int N, class ScanOp>
  void ExclusiveScan(T (&input)[N], T (&output)[N], T initial_value, ScanOp scan_op,
                     T& block_aggregate) {
    run(input, output, scan_op, false, Seed::kGiven, &initial_value, &block_aggregate,
        NoPrefix());
  }
  template <int N, class ScanOp>
  void ExclusiveScan(T (&input)[N], T (&output)[N], ScanOp scan_op) {
    run(input, output, scan_op, false, Seed::kNone, nullptr, nullptr, NoPrefix());
  }
  template <int N, class ScanOp>
  void ExclusiveScan(T (&input)[N], T (&output)[N], ScanOp scan_op, T& block_aggregate) {
    run(input, output, scan_op, false, Seed::kNone, nullptr, &block_aggregate, NoPrefix());
  }
  template <int N, class ScanOp, class PrefixOp>
  void ExclusiveScan(T (&input)[N], T (&output)[N], ScanOp scan_op, PrefixOp& prefix_op) {
    run(input, output, scan_op, false, Seed::kCallback, nullptr, nullptr, &prefix_op);
  }
  template <int N>
  void InclusiveSum(T (&input)[N], T (&output)[N]) {
    run(input, output, Sum(), true, Seed::kNone, nullptr, nullptr, NoPrefix());
  }
  template <int N>
  void InclusiveSum(T (&input)[N], T (&output)[N], T& block_aggregate) {
    run(input, output, Sum(), true, Seed::kNone, nullptr, &block_aggregate, NoPrefix());
  }
  template <int N, class PrefixOp>
  void InclusiveSum(T (&input)[N], T (&output)[N], PrefixOp& prefix_op) {
    run(input, output, Sum(), true, Seed::kCallback, nullptr, nullptr, &prefix_op);
  }
  template <int N, class ScanOp>
  void InclusiveScan(T (&input)[N], T (&output)[N], ScanOp scan_op) {
    run(input, output, scan_op, true, Seed::kNone, nullptr, nullptr, NoPrefix());
  }
  template <int N, class ScanOp>
  void InclusiveScan(T (&input)[N], T (&output)[N], ScanOp scan_op, T& block_aggregate) {
    run(input, output, scan_op, true, Seed::kNone, nullptr, &block_aggregate, NoPrefix());
  }
  template <int N, class ScanOp>
  void InclusiveScan(T (&input)[N], T (&output)[N], T initial_value, ScanOp scan_op) {
    run(input, output, scan_op, true, Seed::kGiven, &initial_value, nullptr, NoPrefix());
  }
  template <int N, class ScanOp>
  void InclusiveScan(T (&input)[N], T (&output)[N], T initial_value, ScanOp scan_op,
                     T& block_aggregate) {
    run(input, output, scan_op, true, Seed::kGiven, &initial_value, &block_aggregate,
        NoPrefix());
  }
  template <int N, class ScanOp, class PrefixOp>
  void InclusiveScan(T (&input)[N], T (&output)[N], ScanOp scan_op, PrefixOp& prefix_op) {
    run(input, output, scan_op, true, Seed::kCallback, nullptr, nullptr, &prefix_op);
  }

 private:
  enum class Seed { kNone, kZero, kGiven, kCallback };
  struct Sum {
    T operator()(const T& a, const T& b) const { return static_cast<T>(a + b); }
  };
  struct NoPrefixOp {
    T operator()(const T&) { return T{}; }
  };
  static constexpr NoPrefixOp* NoPrefix() { return nullptr; }

  template <class Op>
  void one(T input, T& output, Op op, bool inclusive, Seed seed, const T* init = nullptr,
           T* aggregate = nullptr) {
    T in[1] = {input};
    T out[1];
    run(in, out, op, inclusive, seed, init, aggregate, NoPrefix());
    output = out[0];
  }

  template <class Op, class PrefixOp>
  void one_cb(T input, T& output, Op op, bool inclusive, PrefixOp& prefix_op) {
    T in[1] = {input};
    T out[1];
    run(in, out, op, inclusive, Seed::kCallback, nullptr, nullptr, &prefix_op);
    output = out[0];
  }

  template <int N, class Op, class PrefixOp>
  void run(const T (&input)[N], T (&output)[N], Op op, bool inclusive, Seed seed,
           const T* init, T* aggregate_out, PrefixOp* prefix_op) {
    const int rank = ::hx::rank();
    TempStorage& s = storage_;
    ::hx::StorageWindow window(&s, sizeof(TempStorage), "cub::BlockScan");
    T items[N];
    for (int i = 0; i < N; ++i) items[i] = input[i];  // output may alias input
    ::hx::sstore(&s.items[rank], ThreadReduce(items, op), "cub::BlockScan");
    __syncthreads();
    if (rank == 0) {
      T acc = ::hx::sload(&s.items[0], "cub::BlockScan");
      for (int r = 1; r < kThreads; ++r) {
        ::hx::sstore(&s.partials[r], acc, "cub::BlockScan");
        acc = op(acc, ::hx::sload(&s.items[r], "cub::BlockScan"));
      }
      ::hx::sstore(&s.aggregate, acc, "cub::BlockScan");
    }
    __syncthreads();
    ::hx::Maybe<T> seed_value{T{}, false};
    if (seed == Seed::kZero) seed_value = {T{}, true};
    if (seed == Seed::kGiven) seed_value = {*init, true};
    if (seed == Seed::kCallback) {
      const T aggregate = ::hx::sload(&s.aggregate, "cub::BlockScan");
      if (rank < callers()) {
        const T prefix = (*prefix_op)(aggregate);
        if (rank == 0) ::hx::sstore(&s.prefix, prefix, "cub::BlockScan");
      }
      if (ALGO == BLOCK_SCAN_WARP_SCANS) window.close();
      __syncthreads();
      seed_value = {::hx::sload(&s.prefix, "cub::BlockScan"), true};
    }
    if (aggregate_out != nullptr) *aggregate_out = ::hx::sload(&s.aggregate, "cub::BlockScan");
    // this thread's prefix: the seed combined with the totals of the ranks before it
    ::hx::Maybe<T> running = seed_value;
    if (rank > 0) {
      const T partial = ::hx::sload(&s.partials[rank], "cub::BlockScan");
      running = {running.defined ? op(running.value, partial) : partial, true};
    }
    for (int i = 0; i < N; ++i) {
      if (inclusive) {
        running = {running.defined ? op(running.value, items[i]) : items[i], true};
        output[i] = running.value;
      } else {
        output[i] = running.defined ? running.value : ::hx::poison<T>();
        running = {running.defined ? op(running.value, items[i]) : items[i], true};
      }
    }
  }

  TempStorage& storage_;
};

}  // namespace cub
