// SPDX-License-Identifier: Apache-2.0
// Host execution of generated CUDA C++: the runtime every shim header uses.
//
// A launch runs every thread of every block as a fiber (ucontext) on one OS
// thread. A fiber runs until it waits: at a block barrier, a warp barrier, a
// warp collective, or a look-back spin; the scheduler then picks the next ready
// fiber (in order, or at random from a seed). Nothing runs concurrently, so
// the results do not depend on timing, and a seed picks one interleaving.
//
// Shared memory is a per-block arena. Every access the shim headers make to it
// (and every access the generated code makes to its own __shared__ arrays,
// which the harness rewrites into checked views) is checked byte by byte:
//
//   * inside an allocation (not in the red zones between them), and inside
//     the bounds of the array it indexes;
//   * not a read of a byte no thread has written;
//   * ordered with the last write of another thread, and a write ordered with
//     the reads of other threads since: by a block barrier, or, between lanes
//     of one warp, by a warp barrier or warp collective both took part in
//     (a vector clock over the warp's lanes).
//
// On top of that, a primitive's TempStorage use is a window (enter..leave):
// a thread entering a window on bytes another thread left in the same barrier
// interval (unordered) breaks CUB's rule that temp storage is reused only
// after a barrier.
//
// Any violation prints one line starting "hostexec: error:" with the block,
// thread and what was accessed, and exits with status 3.

#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

// uint3, dim3, uint4: the toolkit's (found after the shim's headers)
#include <vector_types.h>

namespace hx {

//: Exit status of a run that broke a rule the shim checks.
constexpr int kViolation = 3;

[[noreturn]] void fail(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// -- the running thread ------------------------------------------------------
const uint3& thread_idx();
const uint3& block_idx();
const dim3& block_dim();
const dim3& grid_dim();
//: Row-major linear rank of the running thread in its block.
int rank();
int block_threads();
//: The linear index of the running thread's block.
int block_linear();

// -- synchronisation ----------------------------------------------------------
void syncthreads();
void syncwarp(unsigned mask);
//: A barrier among the `size` consecutive ranks from `first` (a logical warp);
//: every one of them must call it. Orders their accesses like __syncwarp.
void group_sync(int first, int size, const char* what);
//: Exchange `bytes` bytes with every lane of the group: `all` receives each
//: lane's `mine`, lane by lane (a register shuffle, not shared memory). An
//: exchange counts as progress against the spin limit unless `progress` is
//: false (a vote among lanes polling global memory that has not changed).
void group_exchange(int first, int size, const void* mine, void* all, size_t bytes,
                    const char* what, bool progress = true);
//: Let other fibers run while this one waits for global memory to change.
void spin(const char* what);

// -- shared memory --------------------------------------------------------------
//: The block's object for declaration `site` (one per block, made on first use).
void* shared_alloc(long site, size_t size, size_t align, const char* name);
void shared_read(const void* p, size_t n, const char* what);
void shared_write(void* p, size_t n, const char* what);
void storage_enter(const void* p, size_t n, const char* what);
void storage_leave(const void* p, size_t n, const char* what);
bool is_shared(const void* p);

template <class T>
T sload(const T* p, const char* what) {
  shared_read(p, sizeof(T), what);
  T v;
  std::memcpy(static_cast<void*>(&v), p, sizeof(T));
  return v;
}

template <class T>
void sstore(T* p, const T& v, const char* what) {
  shared_write(p, sizeof(T), what);
  std::memcpy(static_cast<void*>(p), &v, sizeof(T));
}

// -- global memory ----------------------------------------------------------------
//: Refuse an access of `n` bytes at `p` outside every buffer the launch registered.
void check_global(const void* p, size_t n, bool write, const char* what);
//: Refuse an access at `p` of a type aligned to `align` (a GPU faults on a misaligned one).
void check_aligned(const void* p, size_t align, bool write, const char* what);

// -- undefined values ---------------------------------------------------------------
//: What a primitive returns where CUB leaves a result undefined.
template <class T>
T poison() {
  T v;
  std::memset(static_cast<void*>(&v), 0xA5, sizeof(T));
  return v;
}

// -- coverage counters --------------------------------------------------------------
//: Count an event (the harness prints every count after its launches).
void count(const char* event);
void print_counts();

// -- launches (the harness's side) -----------------------------------------------------
struct Launch {
  dim3 grid;
  dim3 block;
  void (*kernel)(void*) = nullptr;
  void* args = nullptr;
  //: 0: fibers run in order; otherwise a seeded random order.
  uint64_t seed = 0;
};
void register_global(const void* p, size_t n, const char* name);
void clear_globals();
void launch(const Launch& launch);

// -- checked views of the generated code's own __shared__ declarations ----------------
template <class T>
struct sref {
  T* p;
  const char* name;
  operator T() const { return sload(p, name); }
  sref& operator=(const T& v) {
    sstore(p, v, name);
    return *this;
  }
  sref& operator=(const sref& other) { return *this = static_cast<T>(other); }
  sref(T* p_, const char* name_) : p(p_), name(name_) {}
  sref(const sref&) = default;
};

[[noreturn]] void index_error(const char* name, long index, size_t extent);

template <class T, size_t... Dims>
struct sview;

template <class T, size_t D0, size_t... Rest>
struct sview<T, D0, Rest...> {
  static constexpr size_t stride = (size_t{1} * ... * Rest);
  T* base;
  const char* name;
  auto operator[](long i) const {
    if (i < 0 || static_cast<size_t>(i) >= D0) index_error(name, i, D0);
    if constexpr (sizeof...(Rest) == 0) {
      return sref<T>(base + i, name);
    } else {
      return sview<T, Rest...>{base + static_cast<size_t>(i) * stride, name};
    }
  }
};

template <class T, size_t... Dims>
sview<T, Dims...> shared_view(long site, const char* name) {
  constexpr size_t count = (size_t{1} * ... * Dims);
  void* p = shared_alloc(site, sizeof(T) * count, alignof(T), name);
  return sview<T, Dims...>{static_cast<T*>(p), name};
}

template <class T>
sref<T> shared_scalar(long site, const char* name) {
  return sref<T>(static_cast<T*>(shared_alloc(site, sizeof(T), alignof(T), name)), name);
}

template <class T>
T& shared_object(long site, const char* name) {
  static_assert(std::is_trivially_default_constructible_v<T> ||
                    std::is_trivially_copyable_v<T>,
                "a __shared__ object is never constructed");
  return *static_cast<T*>(shared_alloc(site, sizeof(T), alignof(T) < 16 ? 16 : alignof(T), name));
}

}  // namespace hx
