// SPDX-License-Identifier: Apache-2.0
// The harness side of a host-executed kernel: buffers and parameters from a
// folder the Python side wrote, written back after the launches.
//
// `<folder>/params.txt` holds one "name value" line per integer parameter;
// every buffer `name` is read from `<folder>/name.bin` into memory aligned as
// cudaMalloc aligns it, between guard bytes, registered with the runtime as a
// global array (so shim accesses outside it fail), and written to
// `<folder>/name.out` after the launches, once the guards are checked (a raw
// write past an array's end fails the run).

#pragma once

#include <hostexec/runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace hx {

class Harness {
 public:
  Harness(int argc, char** argv) {
    if (argc < 2) fail("usage: harness <folder>");
    folder_ = argv[1];
    FILE* f = std::fopen((folder_ + "/params.txt").c_str(), "r");
    if (f == nullptr) fail("no params.txt in %s", folder_.c_str());
    char name[128];
    long long value = 0;
    while (std::fscanf(f, "%127s %lld", name, &value) == 2) params_.push_back({name, value});
    std::fclose(f);
  }

  long long param(const char* name) const {
    for (const auto& p : params_)
      if (p.first == name) return p.second;
    fail("parameter %s was not given", name);
  }

  template <class T>
  T* buffer(const char* name) {
    const std::string path = folder_ + "/" + name + ".bin";
    FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) fail("no buffer file %s", path.c_str());
    std::fseek(f, 0, SEEK_END);
    const size_t bytes = static_cast<size_t>(std::ftell(f));
    std::fseek(f, 0, SEEK_SET);
    Buffer b{name, nullptr, bytes, nullptr};
    const size_t total = (bytes + 2 * kGuard + 255) / 256 * 256;
    b.raw = static_cast<unsigned char*>(std::aligned_alloc(256, total));
    b.data = b.raw + kGuard;
    std::memset(b.raw, kGuardByte, total);
    if (bytes > 0 && std::fread(b.data, 1, bytes, f) != bytes) fail("cannot read %s", path.c_str());
    std::fclose(f);
    buffers_.push_back(b);
    register_global(b.data, bytes, strdup(name));
    return reinterpret_cast<T*>(b.data);
  }

  void finish() {
    print_counts();
    for (const Buffer& b : buffers_) {
      for (size_t i = 0; i < kGuard; ++i) {
        if (b.raw[i] != kGuardByte || b.data[b.bytes + i] != kGuardByte)
          fail("a write outside buffer %s (%zu bytes) changed its guard bytes", b.name.c_str(),
               b.bytes);
      }
      const std::string path = folder_ + "/" + b.name + ".out";
      FILE* f = std::fopen(path.c_str(), "wb");
      if (f == nullptr || std::fwrite(b.data, 1, b.bytes, f) != b.bytes)
        fail("cannot write %s", path.c_str());
      std::fclose(f);
    }
  }

 private:
  struct Buffer {
    std::string name;
    unsigned char* data;
    size_t bytes;
    unsigned char* raw;
  };
  static constexpr size_t kGuard = 256;
  static constexpr unsigned char kGuardByte = 0xCD;
  std::string folder_;
  std::vector<std::pair<std::string, long long>> params_;
  std::vector<Buffer> buffers_;
};

//: The items a tile I/O call may touch from `offset` on, as the front ends compute
//: it: the array's length (the shortest array's) minus the offset, at most
//: `count` when passed, 0 for an offset before the array.
inline long long tile_valid(long long length, long long offset, bool has_count, long long count) {
  long long valid = length - offset;
  if (has_count && count < valid) valid = count;
  return offset < 0 ? 0 : valid;
}

}  // namespace hx
