// SPDX-License-Identifier: Apache-2.0
//
// Single-pass device-wide scans with cub::DeviceScan, written as a CUB user
// writes them: the C++ anchors of bench/lookback_bench.py.
//
// DeviceScan is launched from the host (it sizes and launches its own init and
// scan kernels), so this is a program, not a kernel library. One run measures
// one task over the same data the Python contenders scan, and prints one JSON
// line per variant:
//
//   cumsum      inclusive sum of N int32 or float32 values
//               (variant inclusive_sum: cub::DeviceScan::InclusiveSum;
//               inclusive_sum_tuned_t<T>_i<I>: the same scan with a tuned
//               policy of T threads x I items, see "tuned DeviceScan" below:
//               128 x 16, 24, 32 and 256 x 16)
//   recurrence  h[t] = a[t] * h[t-1] + b[t] over N (a, b) float2 pairs: an
//               inclusive scan with the composition of affine maps
//               (x, y) -> (x.a * y.a, y.a * x.b + y.b); h[t] is the b field
//               of the scanned pair (variant inclusive_scan:
//               cub::DeviceScan::InclusiveScan, pairs in, pairs out;
//               inclusive_scan_tuned_t<T>_i<I>: the same with a tuned policy,
//               128 x 8, 12, 16, 24, 32 and 256 x 8, 12, 16)
//   rows        inclusive sums of each row of a ROWS x COLS int32 array
//               (variants per_row: one DeviceScan::InclusiveSum per row, ROWS
//               calls on one stream; by_key: DeviceScan::InclusiveSumByKey
//               with the row index of every element as its key, the keys
//               written to device memory before timing; by_key_iter: the same
//               with the keys computed by a transform iterator over a counting
//               iterator, no key array)
//
// The data are those of bench/_common.py's element_value (a counter-based hash
// of the element index mapped to an integer in [-3, 3]; integer-valued data
// keep float32 sums exact, so every sum is checked exactly). The recurrence's
// pair t is a = 1 - (1 + H(2t) % 1638) / 16384 (in [0.9, 1)) and b = ((H(2t+1)
// >> 8) - 2^23) / 2^23 (in [-1, 1)), H the same hash: every value is exact in
// float32, so the Python side makes bit for bit the same input. Each run
// prints the sum of the input's 32-bit words (input_sum), which the Python
// side compares with its own.
//
// Per variant: the temporary storage is sized and allocated once, outside the
// timed region; --warmup untimed calls (at least 2); then a spinning kernel holds the
// stream while --reps calls are enqueued back to back, with a CUDA event
// before each call and one after the last, all on the legacy default stream:
// each interval is one call's device time (init kernel and scan kernel) with
// no host overhead in it. Each variant's output is filled with 0xFF bytes (NaN,
// -1) first and checked after its last call on the device: every element against
// its left neighbour and its input (exact for the sums; within 1e-4 * max|h|
// for the recurrence, whose float32 results depend on the association).
//
// Usage:
//   cub_lookback inputs     --n N    (no GPU needed: the input_sum of each input of N
//                                     elements, computed on the host, for tests)
//   cub_lookback cumsum     --dtype int32|float32 --n N      [--variants a,b] [--reps R] [--warmup W]
//   cub_lookback recurrence --n N                            [--variants a,b] [--reps R] [--warmup W]
//   (without --variants, every variant of the task runs, DeviceScan's own first)
//   cub_lookback rows       --rows R --cols C [--variants per_row,by_key,by_key_iter]
//                                                            [--reps R] [--warmup W]
// Output, one line per variant:
//   {"bench": "lookback", "task": ..., "impl": "cub_cpp", "variant": ..., "dtype": ...,
//    "rows": ..., "cols": ..., "cccl": "3.0.1", "device": ..., "temp_bytes": ...,
//    "input_sum": ..., "reps": ..., "times_ms": [...], "median_ms": ..., "bad": 0, "ok": true}
// and {"error": ...} with exit status 1 when something fails.
//
// bench/lookback_bench.py builds it once per CCCL it measures (the CUDA
// toolkit's, and the one the project compiles with when that differs):
//   nvcc -O3 -std=c++17 -arch=sm_90 -I$CUDA_HOME/include/cccl -o cub_lookback cub_lookback.cu

// CCCL 3.5 deprecates cub::DispatchScan, cub::AgentScanPolicy and
// cub::ChainedPolicy (the tuned variants' policy hub) in favour of a tuning API
// that CCCL 3.0 lacks; this program builds against both, so their deprecation
// warnings are silenced.
#ifndef CCCL_IGNORE_DEPRECATED_API
#  define CCCL_IGNORE_DEPRECATED_API
#endif

#include <cub/device/device_scan.cuh>
#include <cub/device/dispatch/dispatch_scan.cuh>
#include <cub/version.cuh>

#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace lookback {

// ------------------------------------------------------------------ errors

[[noreturn]] void fail(const std::string& what) {
  std::string text;
  for (char c : what) {
    if (c == '"' || c == '\\') {
      text += '\\';
    }
    text += (c == '\n') ? ' ' : c;
  }
  std::printf("{\"bench\": \"lookback\", \"error\": \"%s\"}\n", text.c_str());
  std::fflush(stdout);
  std::exit(1);
}

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    fail(std::string(what) + ": " + cudaGetErrorName(status) + ": " + cudaGetErrorString(status));
  }
}

#define LB_CHECK(call) ::lookback::check((call), #call)

// ------------------------------------------------------------------ data (bench/_common.py)

__host__ __device__ inline std::uint32_t mix32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

constexpr std::uint32_t kSeed = 12345U;

// the hash of element `index` (its low 32 bits)
__host__ __device__ inline std::uint32_t hash_index(std::uint64_t index) {
  return mix32(static_cast<std::uint32_t>(index) ^ mix32(kSeed));
}

__host__ __device__ inline int element_value(std::uint64_t index) {
  return static_cast<int>(hash_index(index) % 7U) - 3;
}

// the recurrence's pair t (exact in float32: see the top of the file)
__host__ __device__ inline float2 pair_value(std::uint64_t t) {
  const std::uint32_t h1 = hash_index(2 * t);
  const std::uint32_t h2 = hash_index(2 * t + 1);
  const float a = 1.0f - static_cast<float>(1U + h1 % 1638U) * (1.0f / 16384.0f);
  const float b = static_cast<float>(static_cast<int>(h2 >> 8) - (1 << 23)) * (1.0f / 8388608.0f);
  return make_float2(a, b);
}

template <typename T>
__global__ void fill_values(T* __restrict__ data, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    data[i] = static_cast<T>(element_value(i));
  }
}

__global__ void fill_pairs(float2* __restrict__ data, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    data[i] = pair_value(i);
  }
}

// row index of every element (by_key's materialised keys)
__global__ void fill_row_keys(int* __restrict__ keys, std::size_t n, int cols) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    keys[i] = static_cast<int>(i / static_cast<std::size_t>(cols));
  }
}

// the sum of the 32-bit words of `words` (modulo 2^64)
__global__ void word_sum(const std::uint32_t* __restrict__ words, std::size_t n,
                         unsigned long long* __restrict__ total) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  unsigned long long local = 0;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    local += words[i];
  }
  atomicAdd(total, local);
}

// ------------------------------------------------------------------ device-side checks

template <typename T>
__device__ inline T wrapping_add(T x, T y) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(x) + static_cast<U>(y));
  } else {
    return x + y;
  }
}

// elements that differ from (their left neighbour in the row) + (their input);
// the first of a row must equal its input. NaN counts as wrong.
template <typename T>
__global__ void count_bad_sums(const T* __restrict__ in, const T* __restrict__ out, std::size_t n,
                               std::size_t cols, unsigned long long* __restrict__ bad) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  unsigned long long local = 0;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const T expected = (i % cols == 0) ? in[i] : wrapping_add(out[i - 1], in[i]);
    if (!(out[i] == expected)) {
      ++local;
    }
  }
  if (local != 0) {
    atomicAdd(bad, local);
  }
}

// the largest |h| (as the bits of a non-negative float: they order as the values)
__global__ void max_abs_h(const float2* __restrict__ out, std::size_t n,
                          unsigned int* __restrict__ largest) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  unsigned int local = 0;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    local = max(local, __float_as_uint(fabsf(out[i].y)));
  }
  atomicMax(largest, local);
}

// elements whose h differs from a[t] * h[t-1] + b[t] (h[-1] = 0) by more than
// tolerance * max|h| (in double); NaN counts as wrong
__global__ void count_bad_recurrence(const float2* __restrict__ in, const float2* __restrict__ out,
                                     std::size_t n, const unsigned int* __restrict__ largest,
                                     double tolerance, unsigned long long* __restrict__ bad) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const double bound = tolerance * static_cast<double>(__uint_as_float(*largest));
  unsigned long long local = 0;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const double previous = (i == 0) ? 0.0 : static_cast<double>(out[i - 1].y);
    const double expected =
        static_cast<double>(in[i].x) * previous + static_cast<double>(in[i].y);
    if (!(fabs(static_cast<double>(out[i].y) - expected) <= bound)) {
      ++local;
    }
  }
  if (local != 0) {
    atomicAdd(bad, local);
  }
}

// ------------------------------------------------------------------ timing

__global__ void spin(unsigned long long ns) {
  unsigned long long start;
  unsigned long long now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

constexpr int kFillBlocks = 4096;
constexpr int kFillThreads = 256;

// Times `reps` calls of `call()` (which enqueues on the legacy default stream).
// At least two untimed calls go first; the last one's enqueueing time sizes the
// spin (the first call of a process also loads the kernels).
template <typename Call>
std::vector<float> time_calls(Call&& call, int reps, int warmup) {
  double enqueue_s = 0.0;
  for (int i = 0; i < std::max(2, warmup); ++i) {
    const auto started = std::chrono::steady_clock::now();
    call();
    enqueue_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    LB_CHECK(cudaDeviceSynchronize());
  }
  std::vector<cudaEvent_t> events(static_cast<std::size_t>(reps) + 1);
  for (auto& event : events) {
    LB_CHECK(cudaEventCreate(&event));
  }
  // long enough for the host to enqueue every timed call before the device
  // reaches the first (at most 0.5 s)
  const double spin_s = std::min(0.5, std::max(1e-3, 3.0 * enqueue_s * reps));
  spin<<<1, 1>>>(static_cast<unsigned long long>(spin_s * 1e9));
  LB_CHECK(cudaGetLastError());
  LB_CHECK(cudaEventRecord(events[0], 0));
  for (int i = 0; i < reps; ++i) {
    call();
    LB_CHECK(cudaEventRecord(events[static_cast<std::size_t>(i) + 1], 0));
  }
  LB_CHECK(cudaEventSynchronize(events[static_cast<std::size_t>(reps)]));
  std::vector<float> times(static_cast<std::size_t>(reps));
  for (int i = 0; i < reps; ++i) {
    LB_CHECK(cudaEventElapsedTime(&times[static_cast<std::size_t>(i)],
                                  events[static_cast<std::size_t>(i)],
                                  events[static_cast<std::size_t>(i) + 1]));
  }
  for (auto& event : events) {
    LB_CHECK(cudaEventDestroy(event));
  }
  return times;
}

float median(std::vector<float> values) {
  std::sort(values.begin(), values.end());
  const std::size_t k = values.size();
  return (k % 2 == 1) ? values[k / 2] : 0.5f * (values[k / 2 - 1] + values[k / 2]);
}

// ------------------------------------------------------------------ the run

struct Options {
  std::string task;
  std::string dtype = "int32";
  int rows = 1;
  long long cols = 0;
  int reps = 20;
  int warmup = 3;
  std::vector<std::string> variants;
};

struct Context {
  std::string device;
  unsigned long long input_sum = 0;
};

template <typename T>
T* device_alloc(std::size_t count) {
  void* p = nullptr;
  LB_CHECK(cudaMalloc(&p, count * sizeof(T)));
  return static_cast<T*>(p);
}

unsigned long long sum_words(const void* data, std::size_t bytes) {
  unsigned long long* total = device_alloc<unsigned long long>(1);
  LB_CHECK(cudaMemset(total, 0, sizeof(unsigned long long)));
  word_sum<<<kFillBlocks, kFillThreads>>>(static_cast<const std::uint32_t*>(data), bytes / 4, total);
  LB_CHECK(cudaGetLastError());
  unsigned long long host = 0;
  LB_CHECK(cudaMemcpy(&host, total, sizeof(host), cudaMemcpyDeviceToHost));
  LB_CHECK(cudaFree(total));
  return host;
}

void print_result(const Context& ctx, const Options& opt, const char* variant, const char* dtype,
                  std::size_t temp_bytes, const std::vector<float>& times,
                  unsigned long long bad) {
  std::printf(
      "{\"bench\": \"lookback\", \"task\": \"%s\", \"impl\": \"cub_cpp\", \"variant\": \"%s\", "
      "\"dtype\": \"%s\", \"rows\": %d, \"cols\": %lld, \"cccl\": \"%d.%d.%d\", "
      "\"device\": \"%s\", \"temp_bytes\": %zu, \"input_sum\": %llu, \"reps\": %zu, "
      "\"times_ms\": [",
      opt.task.c_str(), variant, dtype, opt.rows, opt.cols, CCCL_MAJOR_VERSION,
      CCCL_MINOR_VERSION, CCCL_PATCH_VERSION, ctx.device.c_str(), temp_bytes, ctx.input_sum,
      times.size());
  for (std::size_t i = 0; i < times.size(); ++i) {
    std::printf("%s%.6f", i ? ", " : "", static_cast<double>(times[i]));
  }
  std::printf("], \"median_ms\": %.6f, \"bad\": %llu, \"ok\": %s}\n",
              static_cast<double>(median(times)), bad, bad == 0 ? "true" : "false");
  std::fflush(stdout);
}

unsigned long long read_and_free(unsigned long long* counter) {
  unsigned long long host = 0;
  LB_CHECK(cudaMemcpy(&host, counter, sizeof(host), cudaMemcpyDeviceToHost));
  LB_CHECK(cudaFree(counter));
  return host;
}

template <typename T>
unsigned long long bad_sums(const T* in, const T* out, std::size_t n, std::size_t cols) {
  unsigned long long* bad = device_alloc<unsigned long long>(1);
  LB_CHECK(cudaMemset(bad, 0, sizeof(unsigned long long)));
  count_bad_sums<T><<<kFillBlocks, kFillThreads>>>(in, out, n, cols, bad);
  LB_CHECK(cudaGetLastError());
  return read_and_free(bad);
}

// num_items as a CUB user passes it: an int (32-bit offsets)
int num_items_of(std::size_t n) {
  if (n > static_cast<std::size_t>(INT_MAX)) {
    fail("at most 2^31 - 1 elements (int num_items)");
  }
  return static_cast<int>(n);
}

// ------------------------------------------------------------------ tuned DeviceScan
//
// The tuned variants run the kernels DeviceScan runs (cub::DispatchScan with
// the template arguments DeviceScan::InclusiveSum / InclusiveScan pass) with
// a policy hub of one agent policy, as CUB's own tunings are written: a
// threads x items tile, warp-transposed loads and stores, LOAD_DEFAULT, the
// warp-scans block scan and the look-back delay constructor CUB picks by
// default for the accumulator type. The shape is the one named, not rescaled
// by the item size (CUB's nominal-4-byte-items scaling is bypassed).

// the threads x items of a tile, as given
template <int Threads, int Items>
struct FixedShape {
  static constexpr int BLOCK_THREADS = Threads;
  static constexpr int ITEMS_PER_THREAD = Items;
};

template <typename AccumT, int Threads, int Items>
using TunedAgentPolicy =
    cub::AgentScanPolicy<Threads, Items, AccumT, cub::BLOCK_LOAD_WARP_TRANSPOSE, cub::LOAD_DEFAULT,
                         cub::BLOCK_STORE_WARP_TRANSPOSE, cub::BLOCK_SCAN_WARP_SCANS,
                         FixedShape<Threads, Items>>;

// a policy hub with the same policy for every architecture (sm_50 and up)
template <typename AccumT, int Threads, int Items>
struct TunedScanHub {
  struct Policy : cub::ChainedPolicy<500, Policy, Policy> {
    using ScanPolicyT = TunedAgentPolicy<AccumT, Threads, Items>;
  };
  using MaxPolicy = Policy;
};

// DeviceScan's offsets for an int num_items (cub::detail::choose_offset_t<int>)
using ScanOffset = std::uint32_t;

// DispatchScan as DeviceScan::InclusiveScan(d_in, d_out, scan_op, num_items)
// instantiates it, with the tuned hub
template <typename T, typename ScanOp, int Threads, int Items>
using TunedDispatch = cub::DispatchScan<T*, T*, ScanOp, cub::NullType, ScanOffset, T,
                                        cub::ForceInclusive::No,
                                        TunedScanHub<T, Threads, Items>>;

// One variant of a task: its name and the call (temp == nullptr: size only).
template <typename T>
struct ScanVariant {
  const char* name;
  cudaError_t (*call)(void* temp, std::size_t& temp_bytes, T* in, T* out, int num_items);
};

template <typename T, int Threads, int Items>
cudaError_t tuned_inclusive_sum(void* temp, std::size_t& temp_bytes, T* in, T* out,
                                int num_items) {
  return TunedDispatch<T, ::cuda::std::plus<>, Threads, Items>::Dispatch(
      temp, temp_bytes, in, out, ::cuda::std::plus<>{}, cub::NullType{},
      static_cast<ScanOffset>(num_items), 0);
}

template <typename T>
cudaError_t default_inclusive_sum(void* temp, std::size_t& temp_bytes, T* in, T* out,
                                  int num_items) {
  return cub::DeviceScan::InclusiveSum(temp, temp_bytes, in, out, num_items);
}

// the cumsum variants: DeviceScan::InclusiveSum, then tuned shapes around
// CUB's sm_90 tuning for 4-byte sums (128 x 24) and the project's 128 x 32
template <typename T>
const std::vector<ScanVariant<T>>& cumsum_variants() {
  static const std::vector<ScanVariant<T>> variants = {
      {"inclusive_sum", &default_inclusive_sum<T>},
      {"inclusive_sum_tuned_t128_i16", &tuned_inclusive_sum<T, 128, 16>},
      {"inclusive_sum_tuned_t128_i24", &tuned_inclusive_sum<T, 128, 24>},
      {"inclusive_sum_tuned_t128_i32", &tuned_inclusive_sum<T, 128, 32>},
      {"inclusive_sum_tuned_t256_i16", &tuned_inclusive_sum<T, 256, 16>},
  };
  return variants;
}

// the variants named by --variants (all when none is named), in the table's order
template <typename T>
std::vector<ScanVariant<T>> chosen_variants(const std::vector<ScanVariant<T>>& all,
                                            const Options& opt) {
  std::string names;
  for (const auto& v : all) {
    names += names.empty() ? v.name : std::string(", ") + v.name;
  }
  for (const std::string& wanted : opt.variants) {
    if (std::none_of(all.begin(), all.end(), [&](const auto& v) { return wanted == v.name; })) {
      fail(opt.task + ": unknown variant " + wanted + " (" + names + ")");
    }
  }
  std::vector<ScanVariant<T>> chosen;
  for (const auto& v : all) {
    if (opt.variants.empty() ||
        std::find(opt.variants.begin(), opt.variants.end(), v.name) != opt.variants.end()) {
      chosen.push_back(v);
    }
  }
  return chosen;
}

// Size, allocate and time one variant over in -> out (out poisoned first);
// its temp_bytes are returned through temp_bytes.
template <typename T>
std::vector<float> time_variant(const ScanVariant<T>& variant, const Options& opt, T* in, T* out,
                                std::size_t n, std::size_t& temp_bytes) {
  const int num_items = num_items_of(n);
  LB_CHECK(cudaMemset(out, 0xFF, n * sizeof(T)));
  temp_bytes = 0;
  check(variant.call(nullptr, temp_bytes, in, out, num_items),
        (std::string(variant.name) + ": temp_bytes").c_str());
  void* temp = nullptr;
  LB_CHECK(cudaMalloc(&temp, std::max<std::size_t>(temp_bytes, 1)));
  const auto times = time_calls(
      [&] { check(variant.call(temp, temp_bytes, in, out, num_items), variant.name); }, opt.reps,
      opt.warmup);
  LB_CHECK(cudaFree(temp));
  return times;
}

template <typename T>
void run_cumsum(Context& ctx, const Options& opt, const char* dtype) {
  const std::size_t n = static_cast<std::size_t>(opt.cols);
  num_items_of(n);
  const auto variants = chosen_variants(cumsum_variants<T>(), opt);
  T* in = device_alloc<T>(n);
  T* out = device_alloc<T>(n);
  fill_values<T><<<kFillBlocks, kFillThreads>>>(in, n);
  LB_CHECK(cudaGetLastError());
  ctx.input_sum = sum_words(in, n * sizeof(T));
  for (const auto& variant : variants) {
    std::size_t temp_bytes = 0;
    const auto times = time_variant(variant, opt, in, out, n, temp_bytes);
    const unsigned long long bad = bad_sums(in, out, n, n);
    print_result(ctx, opt, variant.name, dtype, temp_bytes, times, bad);
  }
  LB_CHECK(cudaFree(in));
  LB_CHECK(cudaFree(out));
}

// the map x, then the map y: h -> y.a * (x.a * h + x.b) + y.b
struct ComposeAffine {
  __host__ __device__ __forceinline__ float2 operator()(const float2& x, const float2& y) const {
    return make_float2(x.x * y.x, y.x * x.y + y.y);
  }
};

constexpr double kRecurrenceTolerance = 1e-4;

cudaError_t default_pair_scan(void* temp, std::size_t& temp_bytes, float2* in, float2* out,
                              int num_items) {
  return cub::DeviceScan::InclusiveScan(temp, temp_bytes, in, out, ComposeAffine{}, num_items);
}

template <int Threads, int Items>
cudaError_t tuned_pair_scan(void* temp, std::size_t& temp_bytes, float2* in, float2* out,
                            int num_items) {
  return TunedDispatch<float2, ComposeAffine, Threads, Items>::Dispatch(
      temp, temp_bytes, in, out, ComposeAffine{}, cub::NullType{},
      static_cast<ScanOffset>(num_items), 0);
}

// the recurrence variants: DeviceScan::InclusiveScan (CUB's default policy:
// CCCL has no tuning for a pair of floats with a user operator), then a sweep
// of tuned shapes for the 8-byte pair; every tile's exchange storage (threads
// x items x 8 bytes, at most 32 KiB here) fits the 48 KiB of static shared
// memory
const std::vector<ScanVariant<float2>>& recurrence_variants() {
  static const std::vector<ScanVariant<float2>> variants = {
      {"inclusive_scan", &default_pair_scan},
      {"inclusive_scan_tuned_t128_i8", &tuned_pair_scan<128, 8>},
      {"inclusive_scan_tuned_t128_i12", &tuned_pair_scan<128, 12>},
      {"inclusive_scan_tuned_t128_i16", &tuned_pair_scan<128, 16>},
      {"inclusive_scan_tuned_t128_i24", &tuned_pair_scan<128, 24>},
      {"inclusive_scan_tuned_t128_i32", &tuned_pair_scan<128, 32>},
      {"inclusive_scan_tuned_t256_i8", &tuned_pair_scan<256, 8>},
      {"inclusive_scan_tuned_t256_i12", &tuned_pair_scan<256, 12>},
      {"inclusive_scan_tuned_t256_i16", &tuned_pair_scan<256, 16>},
  };
  return variants;
}

void run_recurrence(Context& ctx, const Options& opt) {
  const std::size_t n = static_cast<std::size_t>(opt.cols);
  num_items_of(n);
  const auto variants = chosen_variants(recurrence_variants(), opt);
  float2* in = device_alloc<float2>(n);
  float2* out = device_alloc<float2>(n);
  fill_pairs<<<kFillBlocks, kFillThreads>>>(in, n);
  LB_CHECK(cudaGetLastError());
  ctx.input_sum = sum_words(in, n * sizeof(float2));
  unsigned int* largest = device_alloc<unsigned int>(1);
  for (const auto& variant : variants) {
    std::size_t temp_bytes = 0;
    const auto times = time_variant(variant, opt, in, out, n, temp_bytes);
    unsigned long long* bad = device_alloc<unsigned long long>(1);
    LB_CHECK(cudaMemset(largest, 0, sizeof(unsigned int)));
    LB_CHECK(cudaMemset(bad, 0, sizeof(unsigned long long)));
    max_abs_h<<<kFillBlocks, kFillThreads>>>(out, n, largest);
    count_bad_recurrence<<<kFillBlocks, kFillThreads>>>(in, out, n, largest, kRecurrenceTolerance,
                                                        bad);
    LB_CHECK(cudaGetLastError());
    const unsigned long long bad_count = read_and_free(bad);
    print_result(ctx, opt, variant.name, "float32x2", temp_bytes, times, bad_count);
  }
  LB_CHECK(cudaFree(largest));
  LB_CHECK(cudaFree(in));
  LB_CHECK(cudaFree(out));
}

// the row of flat element i
struct RowOf {
  int cols;
  __host__ __device__ __forceinline__ int operator()(int i) const { return i / cols; }
};

void run_rows(Context& ctx, const Options& opt) {
  const std::size_t cols = static_cast<std::size_t>(opt.cols);
  const std::size_t n = cols * static_cast<std::size_t>(opt.rows);
  int* in = device_alloc<int>(n);
  int* out = device_alloc<int>(n);
  fill_values<int><<<kFillBlocks, kFillThreads>>>(in, n);
  LB_CHECK(cudaGetLastError());
  ctx.input_sum = sum_words(in, n * sizeof(int));
  std::vector<std::string> variants = opt.variants;
  if (variants.empty()) {
    variants = {"per_row", "by_key", "by_key_iter"};
  }
  for (const std::string& variant : variants) {
    LB_CHECK(cudaMemset(out, 0xFF, n * sizeof(int)));
    std::size_t temp_bytes = 0;
    void* temp = nullptr;
    int* keys = nullptr;
    std::vector<float> times;
    const int num_items = num_items_of(n);  // int keys and offsets
    const int row_items = num_items_of(cols);
    if (variant == "per_row") {
      LB_CHECK(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, in, out, row_items));
      LB_CHECK(cudaMalloc(&temp, std::max<std::size_t>(temp_bytes, 1)));
      times = time_calls(
          [&] {
            for (int r = 0; r < opt.rows; ++r) {
              const std::size_t at = static_cast<std::size_t>(r) * cols;
              LB_CHECK(
                  cub::DeviceScan::InclusiveSum(temp, temp_bytes, in + at, out + at, row_items));
            }
          },
          opt.reps, opt.warmup);
    } else if (variant == "by_key") {
      keys = device_alloc<int>(n);
      fill_row_keys<<<kFillBlocks, kFillThreads>>>(keys, n, static_cast<int>(cols));
      LB_CHECK(cudaGetLastError());
      LB_CHECK(cub::DeviceScan::InclusiveSumByKey(nullptr, temp_bytes, keys, in, out, num_items));
      LB_CHECK(cudaMalloc(&temp, std::max<std::size_t>(temp_bytes, 1)));
      times = time_calls(
          [&] {
            LB_CHECK(
                cub::DeviceScan::InclusiveSumByKey(temp, temp_bytes, keys, in, out, num_items));
          },
          opt.reps, opt.warmup);
    } else if (variant == "by_key_iter") {
      auto row_keys = thrust::make_transform_iterator(thrust::counting_iterator<int>(0),
                                                      RowOf{static_cast<int>(cols)});
      LB_CHECK(
          cub::DeviceScan::InclusiveSumByKey(nullptr, temp_bytes, row_keys, in, out, num_items));
      LB_CHECK(cudaMalloc(&temp, std::max<std::size_t>(temp_bytes, 1)));
      times = time_calls(
          [&] {
            LB_CHECK(cub::DeviceScan::InclusiveSumByKey(temp, temp_bytes, row_keys, in, out,
                                                        num_items));
          },
          opt.reps, opt.warmup);
    } else {
      fail("rows: unknown variant " + variant + " (per_row, by_key, by_key_iter)");
    }
    const unsigned long long bad = bad_sums(in, out, n, cols);
    print_result(ctx, opt, variant.c_str(), "int32", temp_bytes, times, bad);
    LB_CHECK(cudaFree(temp));
    if (keys != nullptr) {
      LB_CHECK(cudaFree(keys));
    }
  }
  LB_CHECK(cudaFree(in));
  LB_CHECK(cudaFree(out));
}

// The input_sum of each task's input of n elements, computed on the host with
// the functions the fill kernels use (the rows task's input is cumsum's int32).
void print_host_inputs(std::size_t n) {
  unsigned long long ints = 0;
  unsigned long long floats = 0;
  unsigned long long pairs = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const int v = element_value(i);
    const float f = static_cast<float>(v);
    const float2 p = pair_value(i);
    std::uint32_t word = 0;
    ints += static_cast<std::uint32_t>(v);
    std::memcpy(&word, &f, sizeof(word));
    floats += word;
    std::memcpy(&word, &p.x, sizeof(word));
    pairs += word;
    std::memcpy(&word, &p.y, sizeof(word));
    pairs += word;
  }
  std::printf(
      "{\"bench\": \"lookback\", \"inputs\": %zu, \"int32\": %llu, \"float32\": %llu, "
      "\"pairs\": %llu}\n",
      n, ints, floats, pairs);
}

// ------------------------------------------------------------------ command line

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::size_t end = comma == std::string::npos ? text.size() : comma;
    if (end > start) {
      out.push_back(text.substr(start, end - start));
    }
    if (comma == std::string::npos) {
      break;
    }
    start = comma + 1;
  }
  return out;
}

Options parse(int argc, char** argv) {
  Options opt;
  if (argc < 2) {
    fail("usage: cub_lookback cumsum|recurrence|rows|inputs [--dtype D] [--n N] [--rows R --cols C] "
         "[--variants a,b] [--reps R] [--warmup W]");
  }
  opt.task = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) {
      fail("missing value after " + flag);
    }
    const std::string value = argv[++i];
    if (flag == "--dtype") {
      opt.dtype = value;
    } else if (flag == "--n" || flag == "--cols") {
      opt.cols = std::atoll(value.c_str());
    } else if (flag == "--rows") {
      opt.rows = std::atoi(value.c_str());
    } else if (flag == "--reps") {
      opt.reps = std::atoi(value.c_str());
    } else if (flag == "--warmup") {
      opt.warmup = std::atoi(value.c_str());
    } else if (flag == "--variants") {
      opt.variants = split(value);
    } else {
      fail("unknown option " + flag);
    }
  }
  if (opt.cols <= 0 || opt.rows <= 0 || opt.reps <= 0 || opt.warmup < 0) {
    fail("need --n (or --cols) > 0, --rows > 0, --reps > 0 and --warmup >= 0");
  }
  if (opt.task != "rows" && opt.rows != 1) {
    fail(opt.task + ": one row (--n N)");
  }
  return opt;
}

}  // namespace lookback

int main(int argc, char** argv) {
  using namespace lookback;
  const Options opt = parse(argc, argv);
  if (opt.task == "inputs") {
    print_host_inputs(static_cast<std::size_t>(opt.cols));
    return 0;
  }
  int device = 0;
  LB_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  LB_CHECK(cudaGetDeviceProperties(&prop, device));
  Context ctx;
  for (const char* c = prop.name; *c != '\0'; ++c) {
    if (*c != '"' && *c != '\\') {
      ctx.device += *c;
    }
  }
  if (opt.task == "cumsum") {
    if (opt.dtype == "int32") {
      run_cumsum<int>(ctx, opt, "int32");
    } else if (opt.dtype == "float32") {
      run_cumsum<float>(ctx, opt, "float32");
    } else {
      fail("cumsum: --dtype int32 or float32, not " + opt.dtype);
    }
  } else if (opt.task == "recurrence") {
    run_recurrence(ctx, opt);
  } else if (opt.task == "rows") {
    run_rows(ctx, opt);
  } else {
    fail("unknown task " + opt.task + " (cumsum, recurrence, rows)");
  }
  LB_CHECK(cudaDeviceSynchronize());
  return 0;
}
