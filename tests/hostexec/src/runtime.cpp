// SPDX-License-Identifier: Apache-2.0
// The host runtime: fibers, barriers, warp rendezvous, and checked shared memory
// (see hostexec/runtime.h for the model). Compiled once per test run and linked
// into every harness.

#include <hostexec/runtime.h>

#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <string>
#include <vector>

namespace hx {
namespace {

constexpr size_t kStackBytes = 256 * 1024;
constexpr size_t kArenaBytes = 1 << 20;
constexpr size_t kRedZone = 64;
constexpr size_t kSpinLimit = 400000;

enum class State { kReady, kBlocked, kDone };

struct Acc {
  int tid;
  uint32_t epoch;
  uint32_t clock;
};

struct Byte {
  uint8_t state = 0;  // 0: no allocation (red zone), 1: allocated, unwritten, 2: written
  Acc w{};
  std::vector<Acc> reads;
};

struct Allocation {
  size_t begin, end;
  long site;
  const char* name;
};

struct Use {
  size_t begin, end;
  Acc who;
  const char* what;
};

struct Block;

struct Thread {
  ucontext_t ctx;
  void* stack = nullptr;
  Block* block = nullptr;
  uint3 tid{};
  int rank = 0;
  State state = State::kReady;
  const char* waiting = "";
  uint32_t clock = 1;  // a lane's accesses at clock c are ordered after a sync that saw c
  uint32_t seen[32] = {};
};

struct Rendezvous {
  int arrived = 0;
  int leaving = 0;
  int size = 0;
  unsigned mask = 0;
  const char* what = nullptr;
  size_t bytes = 0;
  uint64_t generation = 0;
  std::vector<Thread*> waiters;
  std::vector<unsigned char> data;
};

struct Block {
  int index = 0;
  uint3 idx{};
  std::vector<Thread> threads;
  uint32_t epoch = 0;
  int barrier_arrived = 0;
  std::vector<Thread*> barrier_waiters;
  int done = 0;
  std::vector<Rendezvous> warp_bars;
  std::vector<Rendezvous> groups;
  unsigned char* arena = nullptr;
  size_t arena_used = 0;
  std::vector<Byte> shadow;
  std::vector<Allocation> allocs;
  std::map<long, size_t> sites;
  std::vector<Use> uses;
};

struct Global {
  const unsigned char* begin;
  const unsigned char* end;
  const char* name;
};

Launch g_launch;
std::vector<Block*> g_blocks;
std::vector<Global> g_globals;
std::deque<Thread*> g_ready;
Thread* g_current = nullptr;
ucontext_t g_scheduler;
uint64_t g_rng = 0;
size_t g_spins = 0;
std::map<std::string, long> g_counts;

Thread& me() {
  if (g_current == nullptr) fail("a device function was called outside a launch");
  return *g_current;
}

uint64_t next_random() {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}

void make_ready(Thread* t) {
  t->state = State::kReady;
  g_ready.push_back(t);
}

// Back to the scheduler; returns when this fiber is scheduled again.
void suspend(const char* waiting) {
  Thread& t = me();
  t.waiting = waiting;
  swapcontext(&t.ctx, &g_scheduler);
  g_current = &t;
}

void block_on(std::vector<Thread*>& waiters, const char* waiting) {
  Thread& t = me();
  t.state = State::kBlocked;
  waiters.push_back(&t);
  suspend(waiting);
}

void release(std::vector<Thread*>& waiters) {
  for (Thread* t : waiters) make_ready(t);
  waiters.clear();
}

int warp_threads(const Block& b, int warp) {
  return std::min<int>(32, static_cast<int>(b.threads.size()) - warp * 32);
}

// Members learn what each other has done: a vector clock merge over warp lanes.
void merge_clocks(Block& b, int first, int size, unsigned lane_mask) {
  uint32_t acc[32] = {};
  auto visit = [&](auto&& fn) {
    for (int r = first; r < first + size; ++r)
      if (lane_mask & (1u << (r % 32))) fn(b.threads[r]);
  };
  visit([&](Thread& m) {
    for (int l = 0; l < 32; ++l) acc[l] = std::max(acc[l], m.seen[l]);
    acc[m.rank % 32] = std::max(acc[m.rank % 32], m.clock);
  });
  visit([&](Thread& m) {
    std::memcpy(m.seen, acc, sizeof(acc));
    ++m.clock;
  });
}

bool ordered(const Acc& a, const Thread& t) {
  if (a.tid == t.rank) return true;
  if (a.epoch < t.block->epoch) return true;
  return a.tid / 32 == t.rank / 32 && t.seen[a.tid % 32] >= a.clock;
}

Acc here(const Thread& t) { return Acc{t.rank, t.block->epoch, t.clock}; }

std::string where_in(const Block& b, size_t off) {
  char buf[256];
  for (const Allocation& a : b.allocs) {
    if (off >= a.begin && off < a.end) {
      std::snprintf(buf, sizeof(buf), "%s+%zu", a.name, off - a.begin);
      return buf;
    }
  }
  const Allocation* near = nullptr;
  for (const Allocation& a : b.allocs)
    if (a.end <= off && (near == nullptr || a.end > near->end)) near = &a;
  if (near != nullptr) {
    std::snprintf(buf, sizeof(buf), "byte %zu past the end of %s (%zu bytes)",
                  off - near->end, near->name, near->end - near->begin);
    return buf;
  }
  std::snprintf(buf, sizeof(buf), "shared offset %zu (no allocation)", off);
  return buf;
}

size_t arena_offset(const Block& b, const void* p, size_t n, const char* what, const char* verb) {
  auto* c = static_cast<const unsigned char*>(p);
  if (c < b.arena || c + n > b.arena + kArenaBytes)
    fail("%s: %s of %zu bytes at %p, which is not shared memory", what, verb, n, p);
  return static_cast<size_t>(c - b.arena);
}

void check_allocated(const Block& b, size_t off, size_t n, const char* what, const char* verb) {
  for (size_t i = off; i < off + n; ++i) {
    if (i >= b.shadow.size() || b.shadow[i].state == 0)
      fail("%s: out-of-bounds shared memory %s at %s", what, verb, where_in(b, i).c_str());
  }
}

void finish_thread() {
  Thread& t = me();
  Block& b = *t.block;
  t.state = State::kDone;
  ++b.done;
  if (b.barrier_arrived > 0)
    fail("thread %d exited while %d threads of its block wait at __syncthreads (a barrier "
         "not reached by every thread)",
         t.rank, b.barrier_arrived);
  g_spins = 0;
}

void fiber_entry() {
  g_launch.kernel(g_launch.args);
  finish_thread();
  // uc_link returns to the scheduler
}

}  // namespace

void fail(const char* fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  if (g_current != nullptr) {
    const Thread& t = *g_current;
    const uint3 bi = t.block->idx;
    std::fprintf(stderr,
                 "hostexec: error: block (%u,%u,%u) thread (%u,%u,%u) rank %d: %s\n", bi.x,
                 bi.y, bi.z, t.tid.x, t.tid.y, t.tid.z, t.rank, msg);
  } else {
    std::fprintf(stderr, "hostexec: error: %s\n", msg);
  }
  std::fflush(stderr);
  std::fflush(stdout);
  _exit(kViolation);
}

void index_error(const char* name, long index, size_t extent) {
  fail("out-of-bounds index %ld into %s (extent %zu)", index, name, extent);
}

const uint3& thread_idx() { return me().tid; }
const uint3& block_idx() { return me().block->idx; }
const dim3& block_dim() { return g_launch.block; }
const dim3& grid_dim() { return g_launch.grid; }
int rank() { return me().rank; }
int block_threads() { return static_cast<int>(me().block->threads.size()); }
int block_linear() { return me().block->index; }

void syncthreads() {
  Thread& t = me();
  Block& b = *t.block;
  if (b.done > 0)
    fail("__syncthreads reached while %d threads of the block have exited (a barrier not "
         "reached by every thread)",
         b.done);
  g_spins = 0;
  if (++b.barrier_arrived == static_cast<int>(b.threads.size())) {
    ++b.epoch;
    b.barrier_arrived = 0;
    release(b.barrier_waiters);
    return;
  }
  block_on(b.barrier_waiters, "__syncthreads");
}

void syncwarp(unsigned mask) {
  Thread& t = me();
  Block& b = *t.block;
  const int warp = t.rank / 32;
  const int n = warp_threads(b, warp);
  const unsigned existing = n == 32 ? ~0u : ((1u << n) - 1);
  const unsigned lanes = mask & existing;
  if (!(lanes & (1u << (t.rank % 32))))
    fail("__syncwarp(0x%08x) called by lane %d, which its mask leaves out", mask, t.rank % 32);
  Rendezvous& r = b.warp_bars[warp];
  if (r.arrived == 0) {
    r.mask = lanes;
  } else if (r.mask != lanes) {
    fail("lanes of warp %d called __syncwarp with different masks (0x%08x, 0x%08x)", warp,
         r.mask, lanes);
  }
  g_spins = 0;
  if (++r.arrived == __builtin_popcount(lanes)) {
    merge_clocks(b, warp * 32, n, lanes);
    r.arrived = 0;
    release(r.waiters);
    return;
  }
  block_on(r.waiters, "__syncwarp");
}

void group_exchange(int first, int size, const void* mine, void* all, size_t bytes,
                    const char* what, bool progress) {
  Thread& t = me();
  Block& b = *t.block;
  if (t.rank < first || t.rank >= first + size || first / 32 != (first + size - 1) / 32)
    fail("%s: rank %d is not a lane of the logical warp %d..%d", what, t.rank, first,
         first + size - 1);
  Rendezvous& r = b.groups[first];
  while (r.leaving > 0) block_on(r.waiters, what);  // the previous exchange is being read
  if (r.arrived == 0) {
    r.what = what;
    r.bytes = bytes;
    r.size = size;
    r.data.assign(bytes * static_cast<size_t>(size), 0);
  } else if (r.what != what || r.bytes != bytes || r.size != size) {
    fail("lanes of the logical warp %d..%d met at different warp collectives (%s, %s)", first,
         first + size - 1, r.what, what);
  }
  if (bytes > 0) std::memcpy(r.data.data() + bytes * (t.rank - first), mine, bytes);
  if (progress) g_spins = 0;
  const uint64_t generation = r.generation;
  if (++r.arrived == size) {
    const unsigned lanes = size == 32 ? ~0u : (((1u << size) - 1) << (first % 32));
    merge_clocks(b, first, size, lanes);
    r.arrived = 0;
    r.leaving = size;
    ++r.generation;
    release(r.waiters);
  } else {
    while (r.generation == generation) block_on(r.waiters, what);
  }
  if (bytes > 0) std::memcpy(all, r.data.data(), bytes * static_cast<size_t>(size));
  if (--r.leaving == 0) release(r.waiters);
}

void group_sync(int first, int size, const char* what) {
  group_exchange(first, size, nullptr, nullptr, 0, what, true);
}

void spin(const char* what) {
  if (++g_spins > kSpinLimit)
    fail("%s: waited %zu times with no other thread making progress (it would wait forever)",
         what, kSpinLimit);
  Thread& t = me();
  make_ready(&t);
  suspend(what);
}

void* shared_alloc(long site, size_t size, size_t align, const char* name) {
  Block& b = *me().block;
  auto found = b.sites.find(site);
  if (found != b.sites.end()) return b.arena + found->second;
  if (align < 16) align = 16;
  size_t off = (b.arena_used + kRedZone + align - 1) / align * align;
  if (off + size + kRedZone > kArenaBytes)
    fail("%s: %zu bytes of shared memory do not fit the host arena", name, size);
  b.allocs.push_back(Allocation{off, off + size, site, name});
  b.sites[site] = off;
  b.arena_used = off + size;
  b.shadow.resize(b.arena_used);
  for (size_t i = off; i < off + size; ++i) b.shadow[i].state = 1;
  std::memset(b.arena + off, 0xA5, size);
  return b.arena + off;
}

bool is_shared(const void* p) {
  const Block& b = *me().block;
  auto* c = static_cast<const unsigned char*>(p);
  return c >= b.arena && c < b.arena + kArenaBytes;
}

void shared_read(const void* p, size_t n, const char* what) {
  Thread& t = me();
  Block& b = *t.block;
  const size_t off = arena_offset(b, p, n, what, "read");
  check_allocated(b, off, n, what, "read");
  for (size_t i = off; i < off + n; ++i) {
    Byte& s = b.shadow[i];
    if (s.state == 1)
      fail("%s: reads %s, which no thread has written", what, where_in(b, i).c_str());
    if (!ordered(s.w, t))
      fail("%s: data race: reads %s, written by rank %d with no barrier between", what,
           where_in(b, i).c_str(), s.w.tid);
    auto& reads = s.reads;
    reads.erase(std::remove_if(reads.begin(), reads.end(),
                               [&](const Acc& a) { return a.epoch < b.epoch; }),
                reads.end());
    bool mine = false;
    for (Acc& a : reads) {
      if (a.tid == t.rank) {
        a = here(t);
        mine = true;
      }
    }
    if (!mine) reads.push_back(here(t));
  }
}

void shared_write(void* p, size_t n, const char* what) {
  Thread& t = me();
  Block& b = *t.block;
  const size_t off = arena_offset(b, p, n, what, "write");
  check_allocated(b, off, n, what, "write");
  for (size_t i = off; i < off + n; ++i) {
    Byte& s = b.shadow[i];
    if (s.state == 2 && !ordered(s.w, t))
      fail("%s: data race: writes %s, which rank %d wrote with no barrier between", what,
           where_in(b, i).c_str(), s.w.tid);
    for (const Acc& a : s.reads) {
      if (!ordered(a, t))
        fail("%s: data race: writes %s, which rank %d read with no barrier between", what,
             where_in(b, i).c_str(), a.tid);
    }
    s.state = 2;
    s.w = here(t);
    s.reads.clear();
  }
}

void storage_enter(const void* p, size_t n, const char* what) {
  Thread& t = me();
  Block& b = *t.block;
  const size_t off = arena_offset(b, p, n, what, "TempStorage use");
  check_allocated(b, off, n, what, "TempStorage use");
  auto& uses = b.uses;
  uses.erase(std::remove_if(uses.begin(), uses.end(),
                            [&](const Use& u) { return u.who.epoch < b.epoch; }),
             uses.end());
  for (const Use& u : uses) {
    if (u.begin < off + n && off < u.end && !ordered(u.who, t))
      fail("%s: uses temp storage (%s) that %s used in rank %d with no barrier since: CUB's "
           "temp storage may only be reused after a barrier",
           what, where_in(b, std::max(off, u.begin)).c_str(), u.what, u.who.tid);
  }
}

void storage_leave(const void* p, size_t n, const char* what) {
  Thread& t = me();
  Block& b = *t.block;
  const size_t off = arena_offset(b, p, n, what, "TempStorage use");
  b.uses.push_back(Use{off, off + n, here(t), what});
}

void count(const char* event) { ++g_counts[event]; }

void print_counts() {
  for (const auto& [event, n] : g_counts) std::printf("hostexec-count %ld %s\n", n, event.c_str());
  std::fflush(stdout);
}

void register_global(const void* p, size_t n, const char* name) {
  auto* c = static_cast<const unsigned char*>(p);
  g_globals.push_back(Global{c, c + n, name});
}

void clear_globals() { g_globals.clear(); }

void check_global(const void* p, size_t n, bool write, const char* what) {
  auto* c = static_cast<const unsigned char*>(p);
  for (const Global& g : g_globals)
    if (c >= g.begin && c + n <= g.end) return;
  const Global* near = nullptr;
  long best = 0;
  for (const Global& g : g_globals) {
    long d = c < g.begin ? static_cast<long>(g.begin - c) : static_cast<long>(c - g.end);
    if (near == nullptr || d < best) {
      near = &g;
      best = d;
    }
  }
  if (near != nullptr)
    fail("%s: global %s of %zu bytes at offset %ld of %s (%ld bytes): outside the array", what,
         write ? "write" : "read", n, static_cast<long>(c - near->begin), near->name,
         static_cast<long>(near->end - near->begin));
  fail("%s: global %s of %zu bytes at %p: no array registered", what,
       write ? "write" : "read", n, p);
}

void check_aligned(const void* p, size_t align, bool write, const char* what) {
  const auto address = reinterpret_cast<uintptr_t>(p);
  if (address % align != 0)
    fail("%s: global %s at an address %zu bytes past a multiple of %zu: misaligned for its type",
         what, write ? "write" : "read", static_cast<size_t>(address % align), align);
}

void launch(const Launch& cfg) {
  g_launch = cfg;
  g_rng = cfg.seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
  if (g_rng == 0) g_rng = 1;
  const int threads = static_cast<int>(cfg.block.x * cfg.block.y * cfg.block.z);
  const int nblocks = static_cast<int>(cfg.grid.x * cfg.grid.y * cfg.grid.z);
  g_blocks.clear();
  for (int bi = 0; bi < nblocks; ++bi) {
    Block* b = new Block();
    b->index = bi;
    b->idx = uint3{bi % cfg.grid.x, (bi / cfg.grid.x) % cfg.grid.y,
                   bi / (cfg.grid.x * cfg.grid.y)};
    b->threads.resize(threads);
    b->warp_bars.resize((threads + 31) / 32);
    b->groups.resize(threads);
    b->arena = static_cast<unsigned char*>(std::aligned_alloc(256, kArenaBytes));
    for (int r = 0; r < threads; ++r) {
      Thread& t = b->threads[r];
      t.block = b;
      t.rank = r;
      t.tid = uint3{r % cfg.block.x, (r / cfg.block.x) % cfg.block.y,
                    r / (cfg.block.x * cfg.block.y)};
      void* mem = mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (mem == MAP_FAILED) fail("cannot map a fiber stack");
      mprotect(mem, 4096, PROT_NONE);  // guard page: a stack overflow faults
      t.stack = mem;
      getcontext(&t.ctx);
      t.ctx.uc_stack.ss_sp = mem;
      t.ctx.uc_stack.ss_size = kStackBytes;
      t.ctx.uc_link = &g_scheduler;
      makecontext(&t.ctx, fiber_entry, 0);
    }
    g_blocks.push_back(b);
  }
  g_ready.clear();
  for (Block* b : g_blocks)
    for (Thread& t : b->threads) make_ready(&t);
  g_spins = 0;
  while (!g_ready.empty()) {
    size_t pick = 0;
    if (cfg.seed != 0) pick = next_random() % g_ready.size();
    std::swap(g_ready[0], g_ready[pick]);
    Thread* t = g_ready.front();
    g_ready.pop_front();
    g_current = t;
    swapcontext(&g_scheduler, &t->ctx);
    g_current = nullptr;
  }
  for (Block* b : g_blocks) {
    for (Thread& t : b->threads) {
      if (t.state != State::kDone) {
        g_current = &t;
        fail("deadlock: this thread waits at %s and no thread of the launch can run (%d of "
             "its block's %d threads finished)",
             t.waiting, b->done, threads);
      }
    }
  }
  for (Block* b : g_blocks) {
    for (Thread& t : b->threads) munmap(t.stack, kStackBytes);
    std::free(b->arena);
    delete b;
  }
  g_blocks.clear();
}

}  // namespace hx
