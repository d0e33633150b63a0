// DirectFeatureStore serves feature rows from SSD with direct I/O, behind a two-tier cache.
// A gather deduplicates its ids, serves what it can from the static hot tier and the
// windowed dynamic tier, plans aligned, coalesced reads for the rest (PlanReads), and
// hands them to the IoEngine; completions are decoded straight into the output matrix and
// admitted into the dynamic tier. Submit returns once the reads are queued, so sampling or
// compute can proceed while the disk works (Helios's decoupled submission and completion).
//
// Reads land in a fixed arena of staging slots, one per read in flight, registered with the
// engine; the arena, both tiers and every index are charged to the memory budget.
//
// Invariants: at most depth reads are in flight, each owning one staging slot; a job's
// output rows are all written when its Wait returns; after an I/O error the store must not
// be used again (its jobs are abandoned), but it can be destroyed safely.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "features/cache_policy.h"
#include "features/row_codec.h"
#include "features/static_row_cache.h"
#include "features/windowed_cache.h"
#include "storage/aligned_buffer.h"
#include "storage/read_plan.h"
#include "strata/feature_store.h"
#include "strata/io_engine.h"
#include "strata/memory_budget.h"

namespace strata {

// Bytes of one of the store's read buffers: the largest coalesced read, or one row's blocks
// when a row is larger. The store holds one per read in flight.
uint64_t DirectStoreSlotBytes(uint64_t row_bytes, uint32_t max_read_bytes);
// What a store of `meta`'s rows charges before any cache: a read buffer per read in flight.
uint64_t DirectStoreReadBytes(const DatasetMeta& meta, uint32_t io_depth, uint32_t max_read_bytes);

class DirectFeatureStore final : public FeatureStore {
 public:
  DirectFeatureStore(const std::string& path, const RowLayout& layout,
                     const DirectStoreOptions& options, MemoryBudget& budget);
  ~DirectFeatureStore() override;

  Ticket Submit(std::span<const uint64_t> ids, std::span<float> out) override;
  void Wait(Ticket ticket) override;
  void Pin(std::span<const uint64_t> ids) override;
  void Unpin(std::span<const uint64_t> ids) override;

  uint64_t reads_in_flight() const override { return engine_->outstanding() + pending_.size(); }
  uint64_t num_rows() const override { return layout_.num_rows; }
  uint64_t dim() const override { return layout_.dim; }
  std::string_view name() const override { return "direct"; }
  FeatureStoreStats stats() const override;
  void ResetStats() override;

  const IoEngine& engine() const { return *engine_; }

 private:
  // One gather (or the hot tier's fill): its plan, and where each planned row goes.
  struct Job {
    std::span<float> out;
    // (id, output position) sorted by id; unique id u owns entries [unique_begin[u],
    // unique_begin[u + 1]).
    std::vector<std::pair<uint64_t, uint32_t>> by_id;
    std::vector<uint32_t> unique_begin;
    bool hot_fill = false;  // rows go to the hot tier (key = its slot), not to `out`
    ReadPlan plan;
    uint64_t reads_left = 0;
  };

  void StartReads(Job& job);
  void SubmitPending();
  void RunUntilDone(Job& job);
  // Delivers completed reads (waiting for at least min_complete) and refills the device's
  // queue from pending_. Called from every entry point, so planning and pinning a batch
  // never leave the device idle.
  void Advance(size_t min_complete);
  void CompleteRead(uint64_t slot);
  // A row read from disk: to the hot tier while filling it, else to the job's output
  // positions and into the dynamic tier.
  void DeliverRow(Job& job, uint32_t key, const std::byte* row);
  // Decodes `row` into the output positions of by_id[begin, end).
  void DecodeToPositions(Job& job, uint32_t begin, uint32_t end, const std::byte* row);
  void FillHotTier(const std::vector<uint64_t>& ids, MemoryBudget& budget);

  RowLayout layout_;
  ReadShape shape_;
  uint64_t slot_bytes_;
  // Declared before the engine: the engine's destructor drains reads still landing in it.
  AlignedBuffer staging_;
  std::unique_ptr<IoEngine> engine_;
  int file_ = -1;
  std::unique_ptr<StaticRowCache> hot_;
  std::unique_ptr<WindowedCache> dynamic_;

  std::vector<uint64_t> free_slots_;
  std::vector<std::pair<Job*, uint32_t>> slot_owner_;  // slot -> (job, read index)
  std::deque<std::pair<Job*, uint32_t>> pending_;      // reads waiting for a slot
  std::unordered_map<Ticket, std::unique_ptr<Job>> jobs_;
  Ticket next_ticket_ = 1;
  bool failed_ = false;  // an I/O error was reported; every job was abandoned
  FeatureStoreStats stats_;
  IoEngineStats io_baseline_;  // the engine's counters at the last ResetStats
  std::vector<ReadRequest> submit_batch_;
  std::vector<ReadCompletion> completions_;
  std::vector<uint64_t> miss_ids_;
  std::vector<uint32_t> miss_keys_;
};

}  // namespace strata
