// SPDX-License-Identifier: Apache-2.0
// cub::ScanTileState and cub::TilePrefixCallbackOp (decoupled look-back) for
// host execution: the contract, not CUB's layout or its windowed look-back.
//
// A tile status row holds, for TILE_STATUS_PADDING padding tiles and then
// num_tiles tiles, a status word and two values (the tile's aggregate and its
// inclusive prefix). InitializeStatus, run by the threads of an init grid,
// marks the tile of each thread's global index invalid and (block 0) the
// padding out of bounds. Status words carry a tag: reading a word that no
// InitializeStatus/Set* wrote (an uninitialised status) is refused.
//
// WaitForValid is a warp collective, as CUB's is (it votes with
// __any_sync(0xffffffff, ...) while any lane's tile is invalid): every lane of
// the calling warp must call it, each for its own tile; a lane calling it
// alone waits forever on the GPU and is refused here.
//
// TilePrefixCallbackOp is the prefix callback of a block scan of tile
// tile_idx > 0, called by the 32 lanes of warp 0: lane 0 publishes the tile's
// aggregate (partial); the warp walks back over the earlier tiles together,
// waiting while one is invalid and combining the aggregates (earlier tiles on
// the left) until it meets an inclusive prefix (lane 0's reads decide);
// lane 0 publishes its own inclusive prefix and returns the exclusive one.
// Only thread 0's return is defined (the block scan uses no other).

#pragma once

#include <cub/hostexec_common.cuh>

#include <memory>

namespace cub {

enum ScanTileStatus : unsigned {
  SCAN_TILE_INVALID = 1,
  SCAN_TILE_PARTIAL = 2,
  SCAN_TILE_INCLUSIVE = 3,
  SCAN_TILE_OOB = 4,
};

template <class T, bool SINGLE_WORD = false>
struct ScanTileState {
  using StatusWord = unsigned long long;
  static constexpr int TILE_STATUS_PADDING = 32;
  static constexpr size_t description_bytes_per_tile = sizeof(StatusWord);
  static constexpr size_t payload_bytes_per_tile = sizeof(T);
  static constexpr StatusWord kTag = 0x5c0a57a7e5ull << 8;

  static size_t aligned(size_t n) { return (n + 255) / 256 * 256; }

  static cudaError_t AllocationSize(int num_tiles, size_t& temp_storage_bytes) {
    const size_t slots = static_cast<size_t>(num_tiles) + TILE_STATUS_PADDING;
    temp_storage_bytes =
        aligned(slots * sizeof(StatusWord)) + 2 * aligned(slots * sizeof(T));
    return cudaSuccess;
  }

  cudaError_t Init(int num_tiles, void* storage, size_t bytes) {
    size_t needed = 0;
    AllocationSize(num_tiles, needed);
    if (num_tiles < 0 || needed > bytes)
      ::hx::fail("cub::ScanTileState::Init: %d tiles need %zu bytes, the status holds %zu",
                 num_tiles, needed, bytes);
    ::hx::check_global(storage, needed, false, "cub::ScanTileState::Init");
    const size_t slots = static_cast<size_t>(num_tiles) + TILE_STATUS_PADDING;
    auto* base = static_cast<unsigned char*>(storage);
    status_ = reinterpret_cast<StatusWord*>(base);
    partial_ = reinterpret_cast<T*>(base + aligned(slots * sizeof(StatusWord)));
    inclusive_ = reinterpret_cast<T*>(base + aligned(slots * sizeof(StatusWord)) +
                                      aligned(slots * sizeof(T)));
    num_tiles_ = num_tiles;
    return cudaSuccess;
  }

  void InitializeStatus(int num_tiles) {
    if (num_tiles != num_tiles_)
      ::hx::fail("cub::ScanTileState::InitializeStatus(%d) of a status of %d tiles", num_tiles,
                 num_tiles_);
    const int tile = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (tile < num_tiles) put(TILE_STATUS_PADDING + tile, SCAN_TILE_INVALID);
    if (blockIdx.x == 0 && threadIdx.x < static_cast<unsigned>(TILE_STATUS_PADDING))
      put(static_cast<int>(threadIdx.x), SCAN_TILE_OOB);
  }

  void SetInclusive(int tile_idx, T value) {
    const int slot = checked(tile_idx, "SetInclusive");
    ::hx::check_global(&inclusive_[slot], sizeof(T), true, "cub::ScanTileState");
    inclusive_[slot] = value;
    put(slot, SCAN_TILE_INCLUSIVE);
  }

  void SetPartial(int tile_idx, T value) {
    const int slot = checked(tile_idx, "SetPartial");
    ::hx::check_global(&partial_[slot], sizeof(T), true, "cub::ScanTileState");
    partial_[slot] = value;
    put(slot, SCAN_TILE_PARTIAL);
  }

  //: Waits while tile `tile_idx` (may be a padding tile: index < 0) is invalid;
  //: a warp collective: every lane of the calling warp calls it.
  //: `pause` (CUB: a delay functor) runs between polls of an invalid tile.
  struct NoPause {
    void operator()() const {}
  };
  template <class Pause = NoPause>
  void WaitForValid(int tile_idx, StatusWord& status, T& value, Pause pause = {}) {
    const int slot = TILE_STATUS_PADDING + tile_idx;
    if (slot < 0 || tile_idx >= num_tiles_)
      ::hx::fail("cub::ScanTileState::WaitForValid(%d) of a status of %d tiles", tile_idx,
                 num_tiles_);
    const int first = ::hx::rank() / 32 * 32;
    if (::hx::block_threads() - first < 32)
      ::hx::fail("cub::ScanTileState::WaitForValid in a warp of %d threads: it votes over a "
                 "full warp", ::hx::block_threads() - first);
    for (;;) {
      status = get(slot, tile_idx);
      const int invalid = status == SCAN_TILE_INVALID ? 1 : 0;
      int all[32];
      ::hx::group_exchange(first, 32, &invalid, all, sizeof(int),
                           "cub::ScanTileState::WaitForValid (a vote over the whole warp: "
                           "every lane of the warp must call it)",
                           /*progress=*/false);
      bool any = false;
      for (int lane = 0; lane < 32; ++lane) any = any || all[lane] != 0;
      if (!any) break;
      if (::hx::rank() % 32 == 0) ::hx::count("look-back: waits on an invalid tile");
      pause();
      ::hx::spin("the look-back waiting for an invalid tile status");
    }
    if (status == SCAN_TILE_PARTIAL) value = partial_[slot];
    if (status == SCAN_TILE_INCLUSIVE) value = inclusive_[slot];
  }

 private:
  int checked(int tile_idx, const char* what) {
    if (tile_idx < 0 || tile_idx >= num_tiles_)
      ::hx::fail("cub::ScanTileState::%s(%d) of a status of %d tiles", what, tile_idx,
                 num_tiles_);
    return TILE_STATUS_PADDING + tile_idx;
  }
  void put(int slot, ScanTileStatus s) {
    ::hx::check_global(&status_[slot], sizeof(StatusWord), true, "cub::ScanTileState");
    status_[slot] = kTag | s;
  }
  StatusWord get(int slot, int tile_idx) {
    ::hx::check_global(&status_[slot], sizeof(StatusWord), false, "cub::ScanTileState");
    const StatusWord w = status_[slot];
    const StatusWord s = w & 0xff;
    if ((w & ~StatusWord{0xff}) != kTag || s < SCAN_TILE_INVALID || s > SCAN_TILE_OOB)
      ::hx::fail("cub::ScanTileState: the status word of tile %d holds 0x%016llx, which no "
                 "InitializeStatus or Set* wrote: the status was not initialised",
                 tile_idx, w);
    return s;
  }

  StatusWord* status_ = nullptr;
  T* partial_ = nullptr;
  T* inclusive_ = nullptr;
  int num_tiles_ = 0;
};

template <class T, class ScanOp, class ScanTileStateT, int LEGACY_PTX_ARCH = 0>
class TilePrefixCallbackOp {
 public:
  struct TempStorage {
    T block_aggregate;
    T exclusive_prefix;
    T inclusive_prefix;
  };

  TilePrefixCallbackOp(ScanTileStateT& tile_status, TempStorage& temp_storage, ScanOp scan_op,
                       int tile_idx)
      : status_(tile_status), storage_(temp_storage), op_(scan_op), tile_idx_(tile_idx) {}

  T operator()(T block_aggregate) {
    const int rank = ::hx::rank();
    if (rank >= 32)
      ::hx::fail("cub::TilePrefixCallbackOp called by thread %d: CUB calls it from warp 0", rank);
    if (tile_idx_ < 1)
      ::hx::fail("cub::TilePrefixCallbackOp called for tile %d: tile 0 has no earlier tile",
                 tile_idx_);
    const bool leader = rank == 0;
    const char* what = "cub::TilePrefixCallbackOp";
    std::unique_ptr<::hx::StorageWindow> window;  // lane 0's use of the TempStorage
    if (leader) {
      window.reset(new ::hx::StorageWindow(&storage_, sizeof(TempStorage), what));
      ::hx::sstore(&storage_.block_aggregate, block_aggregate, what);
      status_.SetPartial(tile_idx_, block_aggregate);
    }
    ::hx::Maybe<T> exclusive{T{}, false};
    for (int j = tile_idx_ - 1;; --j) {
      typename ScanTileStateT::StatusWord s = 0;
      T value{};
      status_.WaitForValid(j, s, value);  // every lane waits on tile j; lane 0's read decides
      s = __shfl_sync(0xffffffffu, s, 0);
      value = __shfl_sync(0xffffffffu, value, 0);
      if (s == SCAN_TILE_OOB)
        ::hx::fail("the look-back of tile %d reached the padding before tile 0 without an "
                   "inclusive prefix",
                   tile_idx_);
      if (leader)
        ::hx::count(s == SCAN_TILE_PARTIAL ? "look-back: combines a partial tile"
                                           : "look-back: stops at an inclusive tile");
      exclusive = {exclusive.defined ? op_(value, exclusive.value) : value, true};
      if (s == SCAN_TILE_INCLUSIVE) break;
    }
    if (!leader) return ::hx::poison<T>();
    const T inclusive = op_(exclusive.value, block_aggregate);
    status_.SetInclusive(tile_idx_, inclusive);
    ::hx::sstore(&storage_.exclusive_prefix, exclusive.value, what);
    ::hx::sstore(&storage_.inclusive_prefix, inclusive, what);
    return exclusive.value;
  }

 private:
  ScanTileStateT& status_;
  TempStorage& storage_;
  ScanOp op_;
  int tile_idx_;
};

}  // namespace cub
