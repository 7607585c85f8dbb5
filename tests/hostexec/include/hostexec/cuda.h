// SPDX-License-Identifier: Apache-2.0
// CUDA's language extensions for host execution, included ahead of every
// harness (g++ -include): execution-space keywords vanish, the built-in
// index variables read the running fiber's, and the intrinsics the generated
// code calls go through the runtime (hostexec/runtime.h).
//
// __shared__ declarations are not handled here: the harness rewrites each one
// into a checked per-block object first (tests/hostexec/harness.py). One it
// did not rewrite fails to compile, naming HOSTEXEC_UNREWRITTEN_SHARED.

#pragma once

// The toolkit's own half-precision types, with their host arithmetic (found
// after the shim's headers, -idirafter): included ahead of the macros below,
// which would rename the toolkit's declarations.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <hostexec/runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#undef __device__
#undef __host__
#undef __global__
#undef __forceinline__
#define __device__
#define __host__
#define __global__
#define __forceinline__ inline
#define __shared__ HOSTEXEC_UNREWRITTEN_SHARED

#define threadIdx (::hx::thread_idx())
#define blockIdx (::hx::block_idx())
#define blockDim (::hx::block_dim())
#define gridDim (::hx::grid_dim())

// The CCCL release the generated code may test for (the GPU machine's is 3.0).
#ifndef CCCL_VERSION
#define CCCL_VERSION 3000000
#endif

inline void __syncthreads() { ::hx::syncthreads(); }
inline void __syncwarp(unsigned mask = 0xffffffffu) { ::hx::syncwarp(mask); }
// Fences and sleeps order nothing more on the host: one fiber runs at a time.
inline void __threadfence_block() {}
inline void __nanosleep(unsigned) {}
[[noreturn]] inline void __trap() { ::hx::fail("__trap() was called"); }

namespace hx {

// Shuffles among the lanes of the calling hardware warp named by `mask`
// (every existing lane of the warp must be named: partial masks are not
// modelled), in segments of `width` lanes.
template <class T>
T shuffle(unsigned mask, const T& var, int width, int (*source)(int lane, int width, int arg),
          int arg, const char* what) {
  const int r = rank();
  const int first = r / 32 * 32;
  const int n = block_threads() - first < 32 ? block_threads() - first : 32;
  const unsigned existing = n == 32 ? ~0u : ((1u << n) - 1);
  if ((mask & existing) != existing)
    fail("%s with mask 0x%08x: a mask that leaves out lanes of the warp is not modelled", what,
         mask);
  if (width < 1 || width > 32 || (width & (width - 1)) != 0)
    fail("%s: width %d is not a power of two from 1 to 32", what, width);
  T all[32];
  group_exchange(first, n, &var, all, sizeof(T), what);
  const int lane = r - first;
  const int src = source(lane, width, arg);
  return src >= 0 && src < n ? all[src] : var;
}

inline int shfl_index(int lane, int width, int src) {
  return lane / width * width + ((src % width) + width) % width;
}
inline int shfl_up(int lane, int width, int delta) {
  return lane % width >= delta ? lane - delta : lane;
}
inline int shfl_down(int lane, int width, int delta) {
  return lane % width + delta < width ? lane + delta : lane;
}
inline int shfl_xor(int lane, int width, int mask) {
  const int other = lane ^ mask;
  return other / width == lane / width ? other : lane;
}

}  // namespace hx

template <class T>
T __shfl_sync(unsigned mask, T var, int src_lane, int width = 32) {
  return ::hx::shuffle(mask, var, width, ::hx::shfl_index, src_lane, "__shfl_sync");
}
template <class T>
T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32) {
  return ::hx::shuffle(mask, var, width, ::hx::shfl_up, static_cast<int>(delta),
                       "__shfl_up_sync");
}
template <class T>
T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32) {
  return ::hx::shuffle(mask, var, width, ::hx::shfl_down, static_cast<int>(delta),
                       "__shfl_down_sync");
}
template <class T>
T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = 32) {
  return ::hx::shuffle(mask, var, width, ::hx::shfl_xor, lane_mask, "__shfl_xor_sync");
}

// A vote among the lanes of the calling hardware warp named by `mask` (every
// existing lane must be named, as for the shuffles): bit l set when lane l's
// predicate is non-zero.
inline unsigned __ballot_sync(unsigned mask, int predicate) {
  const int r = ::hx::rank();
  const int first = r / 32 * 32;
  const int n = ::hx::block_threads() - first < 32 ? ::hx::block_threads() - first : 32;
  const unsigned existing = n == 32 ? ~0u : ((1u << n) - 1);
  if ((mask & existing) != existing)
    ::hx::fail("__ballot_sync with mask 0x%08x: a mask that leaves out lanes of the warp is not "
               "modelled", mask);
  const int mine = predicate != 0 ? 1 : 0;
  int all[32];
  ::hx::group_exchange(first, n, &mine, all, sizeof(int), "__ballot_sync");
  unsigned bits = 0;
  for (int lane = 0; lane < n; ++lane) bits |= static_cast<unsigned>(all[lane]) << lane;
  return bits;
}

inline int __ffs(int x) { return __builtin_ffs(x); }

// ::cuda::std::plus<> (libcu++), which the generated code names for sums.
namespace cuda {
namespace std {
template <class T = void>
struct plus {
  T operator()(const T& a, const T& b) const { return a + b; }
};
template <>
struct plus<void> {
  template <class A, class B>
  auto operator()(const A& a, const B& b) const {
    return a + b;
  }
};
}  // namespace std
}  // namespace cuda
