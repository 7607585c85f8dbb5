// SPDX-License-Identifier: Apache-2.0
//
// Reference row-wise inclusive sum written directly in CUDA C++ with CUB.
//
// One thread block walks one row tile by tile: cub::BlockLoad brings a tile
// into registers, cub::BlockScan::InclusiveSum scans it seeded by a stateful
// BlockPrefixCallbackOp that carries the running total from tile to tile, and
// cub::BlockStore writes it back. The kernel (cub_rowscan_kernel.cuh) is
// templated on the value type, the running total's type (here the value type),
// block size, items per thread, load/store algorithm and scan algorithm, and
// written as a CUB user writes it for speed: full tiles in the loop, the tail
// once after it, barriers only where shared memory is reused, launch bounds.
//
// Data are integer-valued (uniform in [-3, 3], from a counter-based hash of
// the element index, so every implementation can rebuild them) which keeps
// float32 sums exact. Each configuration is checked twice (after its first
// launch and after the timed launches): on the device, every element of every
// row (out[r][0] == in[r][0] and out[r][c] - out[r][c-1] == in[r][c]); on the
// host, several full rows (first, second, middle, last) against a host sum.
//
// Timing: warm-up launches, then REPS launches enqueued back to back with a
// CUDA event recorded before each and one after the last, so the device never
// idles waiting for the host; the median interval is reported. GB/s counts
// bytes read plus bytes written: 2 * rows * cols * sizeof(T).
//
// Output: one machine-readable line per configuration,
//   RESULT impl=cub_cpp dtype=int32 rows=... cols=... config=b256_i8_warp_transpose_warp_scans
//          block=256 items=8 io=warp_transpose algo=warp_scans median_ms=... min_ms=...
//          gbps=... ok=1 reps=30
// and "ERROR ..." lines for configurations that could not run.
//
// Usage: cub_rowscan [--reps N] [--warmup N] [--shape ROWSxCOLS]...
//        (default shapes: 8192x65536 and 262144x2048)

#include "cub_rowscan_kernel.cuh"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

// ------------------------------------------------------------------ errors

struct CudaFailure : std::runtime_error {
  bool sticky;
  CudaFailure(const std::string& what, bool is_sticky) : std::runtime_error(what), sticky(is_sticky) {}
};

// Errors that leave the context unusable: nothing after them can be trusted.
bool is_sticky(cudaError_t e) {
  return e == cudaErrorIllegalAddress || e == cudaErrorLaunchFailure ||
         e == cudaErrorMisalignedAddress || e == cudaErrorIllegalInstruction ||
         e == cudaErrorHardwareStackError || e == cudaErrorAssert ||
         e == cudaErrorInvalidAddressSpace || e == cudaErrorInvalidPc ||
         e == cudaErrorLaunchTimeout || e == cudaErrorECCUncorrectable;
}

void check(cudaError_t e, const char* expr, int line) {
  if (e != cudaSuccess) {
    std::string msg = std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ") from " +
                      expr + " at line " + std::to_string(line);
    throw CudaFailure(msg, is_sticky(e));
  }
}

#define CHECK_CUDA(expr) check((expr), #expr, __LINE__)

// ------------------------------------------------------------------ data

// Counter-based 32-bit mix (an xorshift-multiply finaliser). The same function is
// written in bench/_common.py so the Python side can rebuild any element.
__host__ __device__ inline std::uint32_t mix32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

constexpr std::uint32_t kSeed = 12345U;

__host__ __device__ inline int element_value(std::size_t index) {
  std::uint32_t h = mix32(static_cast<std::uint32_t>(index) ^ mix32(kSeed));
  return static_cast<int>(h % 7U) - 3;
}

template <typename T>
__global__ void fill_kernel(T* __restrict__ data, std::size_t n) {
  std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    data[i] = static_cast<T>(element_value(i));
  }
}

// Full check on the device: counts elements whose difference to their left
// neighbour is not the input (exact for integer-valued data of small range).
template <typename T>
__global__ void check_kernel(const T* __restrict__ in, const T* __restrict__ out, int rows,
                             int cols, unsigned long long* __restrict__ bad) {
  std::size_t n = static_cast<std::size_t>(rows) * cols;
  std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  unsigned long long local_bad = 0;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    int c = static_cast<int>(i % static_cast<std::size_t>(cols));
    T left = c == 0 ? T(0) : out[i - 1];
    if (out[i] - left != in[i]) {
      ++local_bad;
    }
  }
  if (local_bad != 0) {
    atomicAdd(bad, local_bad);
  }
}

// ------------------------------------------------------------------ the kernel

// The kernel template lives in cub_rowscan_kernel.cuh (bench/matrix.py
// compiles it too). Here the running total has the value type: S = T.
using rowscan_bench::row_inclusive_sum;

// ------------------------------------------------------------------ configurations

const char* load_name(cub::BlockLoadAlgorithm a) {
  switch (a) {
    case cub::BLOCK_LOAD_DIRECT: return "direct";
    case cub::BLOCK_LOAD_STRIPED: return "striped";
    case cub::BLOCK_LOAD_VECTORIZE: return "vectorize";
    case cub::BLOCK_LOAD_TRANSPOSE: return "transpose";
    case cub::BLOCK_LOAD_WARP_TRANSPOSE: return "warp_transpose";
    default: return "other";
  }
}

const char* scan_name(cub::BlockScanAlgorithm a) {
  switch (a) {
    case cub::BLOCK_SCAN_RAKING: return "raking";
    case cub::BLOCK_SCAN_RAKING_MEMOIZE: return "raking_memoize";
    case cub::BLOCK_SCAN_WARP_SCANS: return "warp_scans";
    default: return "other";
  }
}

template <typename T> const char* dtype_name();
template <> const char* dtype_name<int>() { return "int32"; }
template <> const char* dtype_name<float>() { return "float32"; }

struct Options {
  int reps = 30;
  int warmup = 3;
  std::vector<std::pair<int, int>> shapes;
};

struct Buffers {
  void* src = nullptr;
  void* dst = nullptr;
  unsigned long long* bad = nullptr;
  std::size_t bytes = 0;
};

template <typename T>
bool host_check_rows(const Buffers& buf, int rows, int cols) {
  std::vector<int> check_rows = {0, std::min(1, rows - 1), rows / 2, rows - 1};
  std::vector<T> out(static_cast<std::size_t>(cols));
  const T* dst = static_cast<const T*>(buf.dst);
  for (int r : check_rows) {
    CHECK_CUDA(cudaMemcpy(out.data(), dst + static_cast<std::size_t>(r) * cols, cols * sizeof(T),
                          cudaMemcpyDeviceToHost));
    long long acc = 0;
    for (int c = 0; c < cols; ++c) {
      acc += element_value(static_cast<std::size_t>(r) * cols + c);
      if (static_cast<long long>(out[static_cast<std::size_t>(c)]) != acc) {
        std::printf("MISMATCH impl=cub_cpp dtype=%s row=%d col=%d got=%lld expected=%lld\n",
                    dtype_name<T>(), r, c, static_cast<long long>(out[static_cast<std::size_t>(c)]),
                    acc);
        return false;
      }
    }
  }
  return true;
}

template <typename T>
bool device_check(const Buffers& buf, int rows, int cols) {
  CHECK_CUDA(cudaMemset(buf.bad, 0, sizeof(unsigned long long)));
  check_kernel<T><<<4096, 256>>>(static_cast<const T*>(buf.src), static_cast<const T*>(buf.dst),
                                 rows, cols, buf.bad);
  CHECK_CUDA(cudaGetLastError());
  unsigned long long bad = 0;
  CHECK_CUDA(cudaMemcpy(&bad, buf.bad, sizeof(bad), cudaMemcpyDeviceToHost));
  if (bad != 0) {
    std::printf("MISMATCH impl=cub_cpp dtype=%s rows=%d cols=%d bad_elements=%llu\n",
                dtype_name<T>(), rows, cols, bad);
  }
  return bad == 0;
}

// One KERNEL line per kernel: its symbol (to find it in `cuobjdump -sass`) and resources.
template <typename T>
void report_kernel(const void* fn, const char* config) {
  cudaFuncAttributes attr{};
  CHECK_CUDA(cudaFuncGetAttributes(&attr, fn));
  const char* symbol = nullptr;
  if (cudaFuncGetName(&symbol, fn) != cudaSuccess || symbol == nullptr) {
    cudaGetLastError();
    symbol = "unknown";
  }
  std::printf("KERNEL impl=cub_cpp dtype=%s config=%s symbol=%s regs=%d local_bytes=%zu "
              "shared_bytes=%zu\n",
              dtype_name<T>(), config, symbol, attr.numRegs, attr.localSizeBytes,
              attr.sharedSizeBytes);
}

template <typename T, int BLOCK, int ITEMS, cub::BlockLoadAlgorithm LOAD,
          cub::BlockStoreAlgorithm STORE, cub::BlockScanAlgorithm SCAN>
void run_config(const Options& opt, const Buffers& buf, int rows, int cols) {
  char config[128];
  std::snprintf(config, sizeof(config), "b%d_i%d_%s_%s", BLOCK, ITEMS, load_name(LOAD),
                scan_name(SCAN));
  auto kernel = row_inclusive_sum<T, T, BLOCK, ITEMS, LOAD, STORE, SCAN>;
  const T* src = static_cast<const T*>(buf.src);
  T* dst = static_cast<T*>(buf.dst);
  try {
    static bool reported = false;
    if (!reported) {
      reported = true;
      report_kernel<T>(reinterpret_cast<const void*>(kernel), config);
    }
    // poison the output so a kernel that writes nothing cannot pass
    CHECK_CUDA(cudaMemset(buf.dst, 0xFF, static_cast<std::size_t>(rows) * cols * sizeof(T)));
    kernel<<<rows, BLOCK>>>(src, dst, cols);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
    bool ok = device_check<T>(buf, rows, cols) && host_check_rows<T>(buf, rows, cols);

    for (int i = 0; i < opt.warmup; ++i) {
      kernel<<<rows, BLOCK>>>(src, dst, cols);
    }
    CHECK_CUDA(cudaGetLastError());
    std::vector<cudaEvent_t> events(static_cast<std::size_t>(opt.reps) + 1);
    for (auto& e : events) {
      CHECK_CUDA(cudaEventCreate(&e));
    }
    // enqueue everything back to back: each interval is one kernel
    for (int i = 0; i < opt.reps; ++i) {
      CHECK_CUDA(cudaEventRecord(events[static_cast<std::size_t>(i)]));
      kernel<<<rows, BLOCK>>>(src, dst, cols);
    }
    CHECK_CUDA(cudaEventRecord(events.back()));
    CHECK_CUDA(cudaEventSynchronize(events.back()));
    CHECK_CUDA(cudaGetLastError());
    std::vector<float> ms(static_cast<std::size_t>(opt.reps));
    for (int i = 0; i < opt.reps; ++i) {
      CHECK_CUDA(cudaEventElapsedTime(&ms[static_cast<std::size_t>(i)],
                                      events[static_cast<std::size_t>(i)],
                                      events[static_cast<std::size_t>(i) + 1]));
    }
    for (auto& e : events) {
      CHECK_CUDA(cudaEventDestroy(e));
    }
    ok = ok && device_check<T>(buf, rows, cols);

    std::sort(ms.begin(), ms.end());
    const std::size_t mid = ms.size() / 2;
    const double median = ms.size() % 2 == 1 ? ms[mid] : 0.5 * (ms[mid - 1] + ms[mid]);
    const double bytes = 2.0 * static_cast<double>(rows) * cols * sizeof(T);
    std::printf(
        "RESULT impl=cub_cpp dtype=%s rows=%d cols=%d config=%s block=%d items=%d io=%s "
        "algo=%s median_ms=%.5f min_ms=%.5f gbps=%.2f ok=%d reps=%d\n",
        dtype_name<T>(), rows, cols, config, BLOCK, ITEMS, load_name(LOAD), scan_name(SCAN),
        median, static_cast<double>(ms.front()), bytes / (median * 1e-3) / 1e9, ok ? 1 : 0,
        opt.reps);
  } catch (const CudaFailure& f) {
    std::printf("ERROR impl=cub_cpp dtype=%s rows=%d cols=%d config=%s msg=\"%s\"\n",
                dtype_name<T>(), rows, cols, config, f.what());
    if (f.sticky) {
      throw;
    }
    cudaGetLastError();  // clear a non-sticky error and go on
  }
  std::fflush(stdout);
}

template <typename T>
void run_dtype(const Options& opt, int rows, int cols) {
  Buffers buf;
  const std::size_t n = static_cast<std::size_t>(rows) * cols;
  buf.bytes = n * sizeof(T);
  CHECK_CUDA(cudaMalloc(&buf.src, buf.bytes));
  CHECK_CUDA(cudaMalloc(&buf.dst, buf.bytes));
  CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&buf.bad), sizeof(unsigned long long)));
  fill_kernel<T><<<4096, 256>>>(static_cast<T*>(buf.src), n);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());

  constexpr auto WT_L = cub::BLOCK_LOAD_WARP_TRANSPOSE;
  constexpr auto WT_S = cub::BLOCK_STORE_WARP_TRANSPOSE;
  constexpr auto VEC_L = cub::BLOCK_LOAD_VECTORIZE;
  constexpr auto VEC_S = cub::BLOCK_STORE_VECTORIZE;
  constexpr auto DIR_L = cub::BLOCK_LOAD_DIRECT;
  constexpr auto DIR_S = cub::BLOCK_STORE_DIRECT;
  constexpr auto WS = cub::BLOCK_SCAN_WARP_SCANS;
  constexpr auto RK = cub::BLOCK_SCAN_RAKING;
  run_config<T, 128, 16, WT_L, WT_S, WS>(opt, buf, rows, cols);
  run_config<T, 256, 8, WT_L, WT_S, WS>(opt, buf, rows, cols);
  run_config<T, 256, 4, VEC_L, VEC_S, WS>(opt, buf, rows, cols);
  run_config<T, 512, 4, VEC_L, VEC_S, WS>(opt, buf, rows, cols);
  run_config<T, 256, 8, DIR_L, DIR_S, WS>(opt, buf, rows, cols);
  run_config<T, 256, 8, WT_L, WT_S, RK>(opt, buf, rows, cols);

  CHECK_CUDA(cudaFree(buf.src));
  CHECK_CUDA(cudaFree(buf.dst));
  CHECK_CUDA(cudaFree(buf.bad));
}

int parse_int(const char* text, const char* what) {
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v <= 0 || v > (1L << 30)) {
    std::fprintf(stderr, "cub_rowscan: %s must be a positive integer, got '%s'\n", what, text);
    std::exit(2);
  }
  return static_cast<int>(v);
}

Options parse_args(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--reps" || arg == "--warmup" || arg == "--shape") && i + 1 >= argc) {
      std::fprintf(stderr, "cub_rowscan: %s needs a value\n", arg.c_str());
      std::exit(2);
    }
    if (arg == "--reps") {
      opt.reps = parse_int(argv[++i], "--reps");
    } else if (arg == "--warmup") {
      opt.warmup = parse_int(argv[++i], "--warmup");
    } else if (arg == "--shape") {
      const std::string s = argv[++i];
      const std::size_t x = s.find('x');
      if (x == std::string::npos) {
        std::fprintf(stderr, "cub_rowscan: --shape expects ROWSxCOLS (e.g. 8192x65536), got '%s'\n",
                     s.c_str());
        std::exit(2);
      }
      opt.shapes.emplace_back(parse_int(s.substr(0, x).c_str(), "rows"),
                              parse_int(s.substr(x + 1).c_str(), "cols"));
    } else {
      std::fprintf(stderr,
                   "usage: cub_rowscan [--reps N] [--warmup N] [--shape ROWSxCOLS]...\n"
                   "unknown argument '%s'\n",
                   arg.c_str());
      std::exit(2);
    }
  }
  if (opt.shapes.empty()) {
    opt.shapes = {{8192, 65536}, {262144, 2048}};
  }
  return opt;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // one record per line, even into a pipe
  const Options opt = parse_args(argc, argv);
  try {
    int device = 0;
    cudaDeviceProp prop{};
    CHECK_CUDA(cudaGetDevice(&device));
    CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
    std::printf("DEVICE name=\"%s\" cc=%d.%d sms=%d\n", prop.name, prop.major, prop.minor,
                prop.multiProcessorCount);
    for (const auto& [rows, cols] : opt.shapes) {
      run_dtype<int>(opt, rows, cols);
      run_dtype<float>(opt, rows, cols);
    }
  } catch (const CudaFailure& f) {
    std::printf("ERROR impl=cub_cpp fatal=1 msg=\"%s\"\n", f.what());
    return 1;
  }
  return 0;
}
