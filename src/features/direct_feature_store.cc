#include "features/direct_feature_store.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "strata/error.h"

namespace strata {
namespace {

// The fetch thread does CPU work (lookups, planning, pinning, decoding) between its waits;
// it polls the engine this often so the device's queue never drains behind that work.
constexpr size_t kIdsBetweenPolls = 4096;
constexpr size_t kCompletionsBetweenRefills = 32;

}  // namespace

uint64_t DirectStoreSlotBytes(uint64_t row_bytes, uint32_t max_read_bytes) {
  const uint64_t row_span = (row_bytes + 2 * kBlockBytes - 1) / kBlockBytes * kBlockBytes;
  return std::max<uint64_t>(max_read_bytes, row_span);
}

uint64_t DirectStoreReadBytes(const DatasetMeta& meta, uint32_t io_depth, uint32_t max_read_bytes) {
  return uint64_t{std::max<uint32_t>(io_depth, 1)} *
         DirectStoreSlotBytes(RowLayout::Of(meta).row_bytes(), max_read_bytes);
}

DirectFeatureStore::DirectFeatureStore(const std::string& path, const RowLayout& layout,
                                       const DirectStoreOptions& options, MemoryBudget& budget)
    : layout_(layout) {
  if (options.max_read_bytes < kBlockBytes || options.max_read_bytes % kBlockBytes != 0) {
    throw Error::Input("the maximum read size must be a positive multiple of 4096 bytes");
  }
  slot_bytes_ = DirectStoreSlotBytes(layout.row_bytes(), options.max_read_bytes);
  shape_.max_read_bytes = static_cast<uint32_t>(slot_bytes_);
  shape_.coalesce = options.coalesce;
  engine_ = MakeIoEngine(options.io);
  const uint32_t depth = engine_->depth();
  staging_ = AlignedBuffer(budget, depth * slot_bytes_, "the direct store's read buffers");
  engine_->RegisterBuffer(staging_.span());
  file_ = engine_->OpenFile(path);
  shape_.alignment = engine_->read_alignment(file_);
  slot_owner_.resize(depth);
  for (uint64_t s = depth; s > 0; --s) free_slots_.push_back(s - 1);
  completions_.resize(depth);
  if (options.dynamic_rows > 0) {
    dynamic_ = std::make_unique<WindowedCache>(options.dynamic_rows, layout.row_bytes(),
                                               options.policy, options.max_pinned_ids, budget);
  }
  if (!options.hot_ids.empty()) FillHotTier(options.hot_ids, budget);
}

DirectFeatureStore::~DirectFeatureStore() = default;

void DirectFeatureStore::FillHotTier(const std::vector<uint64_t>& ids, MemoryBudget& budget) {
  hot_ = std::make_unique<StaticRowCache>(ids, layout_.row_bytes(), budget);
  std::vector<std::pair<uint64_t, uint32_t>> sorted(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) sorted[i] = {ids[i], static_cast<uint32_t>(i)};
  std::sort(sorted.begin(), sorted.end());
  Job job;
  job.hot_fill = true;
  miss_ids_.clear();
  miss_keys_.clear();
  for (const auto& [id, slot] : sorted) {
    if (id >= layout_.num_rows) throw Error::Internal("hot tier id out of range");
    miss_ids_.push_back(id);
    miss_keys_.push_back(slot);
  }
  PlanReads(miss_ids_, miss_keys_, {layout_.stride, layout_.row_bytes()}, shape_, job.plan);
  StartReads(job);
  RunUntilDone(job);
}

FeatureStore::Ticket DirectFeatureStore::Submit(std::span<const uint64_t> ids,
                                                std::span<float> out) {
  if (failed_) throw Error::Internal("the direct feature store failed earlier; reopen it");
  auto job = std::make_unique<Job>();
  job->out = out;
  job->by_id.resize(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] >= layout_.num_rows) {
      throw Error::Internal(
          fmt::format("feature row {} requested, the store has {} rows", ids[i], layout_.num_rows));
    }
    job->by_id[i] = {ids[i], static_cast<uint32_t>(i)};
  }
  Advance(0);
  std::sort(job->by_id.begin(), job->by_id.end());
  Advance(0);

  miss_ids_.clear();
  miss_keys_.clear();
  for (size_t i = 0; i < job->by_id.size();) {
    if (job->unique_begin.size() % kIdsBetweenPolls == 0) Advance(0);
    const uint64_t id = job->by_id[i].first;
    const uint32_t unique = static_cast<uint32_t>(job->unique_begin.size());
    const uint32_t begin = static_cast<uint32_t>(i);
    job->unique_begin.push_back(begin);
    while (i < job->by_id.size() && job->by_id[i].first == id) ++i;
    const std::byte* row = hot_ ? hot_->Lookup(id) : nullptr;
    if (row != nullptr) {
      ++stats_.hot_hits;
    } else if (dynamic_ && (row = dynamic_->Lookup(id)) != nullptr) {
      ++stats_.dynamic_hits;
    }
    if (row != nullptr) {
      // Delivered now, before a later admission could evict the row.
      DecodeToPositions(*job, begin, static_cast<uint32_t>(i), row);
    } else {
      miss_ids_.push_back(id);
      miss_keys_.push_back(unique);
    }
  }
  job->unique_begin.push_back(static_cast<uint32_t>(job->by_id.size()));
  stats_.rows_requested += ids.size();
  stats_.rows_unique += job->unique_begin.size() - 1;
  stats_.rows_read += miss_ids_.size();
  stats_.useful_bytes += miss_ids_.size() * layout_.row_bytes();
  PlanReads(miss_ids_, miss_keys_, {layout_.stride, layout_.row_bytes()}, shape_, job->plan);

  Ticket ticket = next_ticket_++;
  Job& started = *job;
  jobs_.emplace(ticket, std::move(job));
  StartReads(started);
  return ticket;
}

void DirectFeatureStore::Wait(Ticket ticket) {
  auto it = jobs_.find(ticket);
  if (it == jobs_.end()) throw Error::Internal("Wait on an unknown or finished gather");
  RunUntilDone(*it->second);
  jobs_.erase(it);
}

FeatureStoreStats DirectFeatureStore::stats() const {
  FeatureStoreStats stats = stats_;
  const IoEngineStats io = engine_->stats();
  stats.reads_completed = io.completed - io_baseline_.completed;
  stats.read_latency_ns = io.latency_ns - io_baseline_.latency_ns;
  return stats;
}

void DirectFeatureStore::ResetStats() {
  stats_ = {};
  io_baseline_ = engine_->stats();
}

void DirectFeatureStore::Pin(std::span<const uint64_t> ids) {
  if (!dynamic_) return;
  for (size_t first = 0; first < ids.size(); first += kIdsBetweenPolls) {
    dynamic_->Pin(ids.subspan(first, std::min<size_t>(kIdsBetweenPolls, ids.size() - first)));
    Advance(0);
  }
}

void DirectFeatureStore::Unpin(std::span<const uint64_t> ids) {
  if (!dynamic_) return;
  for (size_t first = 0; first < ids.size(); first += kIdsBetweenPolls) {
    dynamic_->Unpin(ids.subspan(first, std::min<size_t>(kIdsBetweenPolls, ids.size() - first)));
    Advance(0);
  }
}

void DirectFeatureStore::StartReads(Job& job) {
  job.reads_left = job.plan.reads.size();
  for (uint32_t r = 0; r < job.plan.reads.size(); ++r) {
    pending_.emplace_back(&job, r);
    stats_.reads += 1;
    stats_.bytes_read += job.plan.reads[r].length;
  }
  SubmitPending();
}

void DirectFeatureStore::SubmitPending() {
  submit_batch_.clear();
  while (!pending_.empty() && !free_slots_.empty()) {
    auto [job, r] = pending_.front();
    pending_.pop_front();
    const uint64_t slot = free_slots_.back();
    free_slots_.pop_back();
    slot_owner_[slot] = {job, r};
    const PlannedRead& read = job->plan.reads[r];
    submit_batch_.push_back(
        {file_, read.offset, read.length, staging_.data() + slot * slot_bytes_, slot});
  }
  if (!submit_batch_.empty()) engine_->Submit(submit_batch_);
}

void DirectFeatureStore::RunUntilDone(Job& job) {
  if (failed_) throw Error::Internal("the direct feature store failed earlier; reopen it");
  while (job.reads_left > 0) Advance(1);
}

void DirectFeatureStore::Advance(size_t min_complete) {
  if (failed_) throw Error::Internal("the direct feature store failed earlier; reopen it");
  if (engine_->outstanding() == 0 && pending_.empty()) return;
  try {
    const size_t n = engine_->Reap(completions_, min_complete);
    for (size_t i = 0; i < n; ++i) {
      CompleteRead(completions_[i].tag);
      // Refill the slots freed so far before decoding the rest: the device keeps its queue.
      if ((i + 1) % kCompletionsBetweenRefills == 0) SubmitPending();
    }
    SubmitPending();
  } catch (...) {
    // Nothing may land in a caller's buffer once the error has reached it: every job is
    // abandoned and every read still in flight is drained before rethrowing.
    failed_ = true;
    pending_.clear();
    DrainDiscardingErrors(*engine_);
    throw;
  }
}

void DirectFeatureStore::CompleteRead(uint64_t slot) {
  auto [job, r] = slot_owner_[slot];
  const PlannedRead& read = job->plan.reads[r];
  const std::byte* buffer = staging_.data() + slot * slot_bytes_;
  for (uint32_t k = read.first_row; k < read.first_row + read.row_count; ++k) {
    const PlannedRow& row = job->plan.rows[k];
    DeliverRow(*job, row.key, buffer + row.offset_in_read);
  }
  free_slots_.push_back(slot);
  --job->reads_left;
}

void DirectFeatureStore::DeliverRow(Job& job, uint32_t key, const std::byte* row) {
  if (job.hot_fill) {
    std::memcpy(hot_->SlotData(key), row, layout_.row_bytes());
    return;
  }
  const uint32_t begin = job.unique_begin[key], end = job.unique_begin[key + 1];
  DecodeToPositions(job, begin, end, row);
  if (dynamic_) dynamic_->Admit(job.by_id[begin].first, row);
}

void DirectFeatureStore::DecodeToPositions(Job& job, uint32_t begin, uint32_t end,
                                           const std::byte* row) {
  const uint64_t dim = layout_.dim;
  std::span<float> first = job.out.subspan(job.by_id[begin].second * dim, dim);
  DecodeRow(row, layout_.dtype, first);
  for (uint32_t i = begin + 1; i < end; ++i) {
    std::memcpy(job.out.data() + job.by_id[i].second * dim, first.data(), dim * sizeof(float));
  }
}

}  // namespace strata
