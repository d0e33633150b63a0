// HostArena is one pre-allocated region of host memory, charged to a MemoryBudget once, that
// a producer carves into pieces for the buffers it hands to a consumer: the Python loader's
// batch features, so that the region can be page-locked for the GPU once (cudaHostRegister)
// instead of pinning every batch, and so that memory is reused, never first-touched again.
//
// Pieces are freed in any order (a consumer may hold batches as long as it likes); free space
// is kept as coalesced extents and allocated first-fit, 64-byte aligned. Allocate waits while
// no extent is large enough: the consumer's held batches are the back-pressure.
//
// Invariants: pieces never overlap; used_bytes() <= size_bytes(); the region outlives every
// piece (the owner destroys the arena after the last piece is freed).
// Thread safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "strata/memory_budget.h"

namespace strata {

class HostArena {
 public:
  // Charges `size_bytes` (rounded up to whole pages) to `budget` as `what`, throwing the
  // budget's error when it does not fit, and allocates the region page-aligned and untouched:
  // cudaHostRegister page-locks whole pages.
  HostArena(MemoryBudget& budget, uint64_t size_bytes, std::string what);
  ~HostArena();
  HostArena(const HostArena&) = delete;
  HostArena& operator=(const HostArena&) = delete;

  std::byte* base() { return region_; }
  uint64_t size_bytes() const { return size_bytes_; }
  uint64_t used_bytes() const;
  uint64_t peak_bytes() const;

  // The offset of a piece of `bytes`, waiting while none is free; nullopt when `stop` was set
  // meanwhile (checked every 100 ms). A piece larger than the whole arena is an input error.
  std::optional<uint64_t> Allocate(uint64_t bytes, const std::atomic<bool>& stop);
  // Whether a piece of `bytes` is free now.
  bool CanAllocate(uint64_t bytes) const;
  void Free(uint64_t offset, uint64_t bytes);

  // How long a caller of Allocate has been waiting for room, in ns (0 when none waits): a
  // consumer that waits for the producer while the producer waits this long for room holds
  // the whole arena itself.
  uint64_t blocked_ns() const;

 private:
  std::optional<uint64_t> TakeLocked(uint64_t bytes);

  MemoryBudget& budget_;
  uint64_t size_bytes_;
  std::string what_;
  std::byte* region_ = nullptr;
  mutable std::mutex mutex_;
  std::condition_variable freed_;
  std::map<uint64_t, uint64_t> free_;  // offset -> length, disjoint and coalesced
  uint64_t used_ = 0;
  uint64_t peak_ = 0;
  std::atomic<uint64_t> blocked_since_ns_{0};
};

}  // namespace strata
