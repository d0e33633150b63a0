// FeatureStore gathers feature rows of a dataset by node id into a dense float32 matrix, the
// input of every training step. Implementations differ only in where rows come from: the
// whole file in memory, an mmap of it (what PyG and DGL users have today), or direct I/O
// through an IoEngine behind a tiered cache. All return identical values for the same ids;
// float16 storage is widened to float32.
//
// Gather has a synchronous form and a submit/wait form: Submit starts the work (for the
// direct store: plans and submits reads) and returns at once, so the caller can do other
// work while the disk is busy; Wait finishes it. Outstanding gathers complete in any order
// of Wait calls. `ids` and `out` must stay valid until Wait returns.
//
// Thread safety: one thread uses a store at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "strata/dataset.h"
#include "strata/io_engine.h"
#include "strata/memory_budget.h"

namespace strata {

// Counters of a store since it was opened (or since ResetStats).
struct FeatureStoreStats {
  uint64_t rows_requested = 0;  // ids asked for, repeats included
  uint64_t rows_unique = 0;     // distinct ids per gather, summed over gathers
  uint64_t hot_hits = 0;        // unique rows served by the static hot tier
  uint64_t dynamic_hits = 0;    // unique rows served by the dynamic tier
  uint64_t rows_read = 0;       // unique rows read from the file
  uint64_t reads = 0;           // read requests issued to the OS
  uint64_t bytes_read = 0;      // bytes those reads transferred
  uint64_t useful_bytes = 0;    // feature bytes of the rows read (feature_dim * dtype size each)
  uint64_t reads_completed = 0;
  uint64_t read_latency_ns = 0;  // summed over completed reads (IoEngineStats::latency_ns)

  double hit_rate() const {
    return rows_unique == 0 ? 0 : static_cast<double>(hot_hits + dynamic_hits) / rows_unique;
  }
  double read_amplification() const {
    return useful_bytes == 0 ? 0 : static_cast<double>(bytes_read) / useful_bytes;
  }
};

class FeatureStore {
 public:
  using Ticket = uint64_t;

  virtual ~FeatureStore() = default;

  // Fills out[i * dim() .. (i + 1) * dim()) with the features of ids[i]. Every id must be
  // below num_rows() (an internal error otherwise).
  void Gather(std::span<const uint64_t> ids, std::span<float> out) { Wait(Submit(ids, out)); }

  virtual Ticket Submit(std::span<const uint64_t> ids, std::span<float> out) = 0;
  virtual void Wait(Ticket ticket) = 0;

  // Window buffering (GIDS §3.4): the rows of a batch that will be gathered later, known
  // because sampling runs ahead. A cache never evicts a pinned row; Unpin releases the pins of
  // one earlier Pin call with the same ids. Stores without a cache ignore both.
  virtual void Pin(std::span<const uint64_t> ids) {}
  virtual void Unpin(std::span<const uint64_t> ids) {}

  // Reads submitted to the disk (or queued for it) and not yet completed; 0 for stores that
  // do not read. The pipeline keeps this near the device's useful queue depth.
  virtual uint64_t reads_in_flight() const { return 0; }

  virtual uint64_t num_rows() const = 0;
  virtual uint64_t dim() const = 0;
  virtual std::string_view name() const = 0;
  virtual FeatureStoreStats stats() const = 0;
  virtual void ResetStats() = 0;
};

enum class FeatureStoreKind { kMemory, kMmap, kDirect };
FeatureStoreKind ParseFeatureStoreKind(std::string_view name);  // memory | mmap | direct
std::string_view FeatureStoreKindName(FeatureStoreKind kind);

// The eviction policy of the direct store's dynamic tier (features/cache_policy.h).
enum class CachePolicyKind { kClock, kSieve, kS3Fifo };
CachePolicyKind ParseCachePolicyKind(std::string_view name);  // clock | sieve | s3fifo
std::string_view CachePolicyKindName(CachePolicyKind kind);

// How the rows of the direct store's static hot tier are chosen (graph/hotness.h).
enum class HotnessPolicy { kPresample, kReversePageRank, kDegree };
HotnessPolicy ParseHotnessPolicy(std::string_view name);  // presample | rpr | degree
std::string_view HotnessPolicyName(HotnessPolicy policy);

// The direct store's I/O and cache (docs/storage.md). A training run derives them from its
// budget (minibatch/cache_sizing.h); the other stores ignore them.
struct DirectStoreOptions {
  IoEngineOptions io;
  uint32_t max_read_bytes = 64 << 10;  // bound on a coalesced read
  bool coalesce = true;                // false: one read per row (for measurements)
  std::vector<uint64_t> hot_ids;       // rows of the static hot tier
  uint64_t dynamic_rows = 0;           // capacity of the dynamic tier (0: none)
  CachePolicyKind policy = CachePolicyKind::kSieve;
  uint64_t max_pinned_ids = 0;  // size of the window's pin table
};

// Opens the features of `dataset` as a store of `kind`; its buffers (and, for kMemory, the
// whole feature matrix) are charged to `budget`.
std::unique_ptr<FeatureStore> OpenFeatureStore(const Dataset& dataset, FeatureStoreKind kind,
                                               const DirectStoreOptions& direct,
                                               MemoryBudget& budget);

}  // namespace strata
