#include "graph/disk_adjacency.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "dataset/stored_ids.h"
#include "strata/dataset.h"
#include "strata/error.h"

namespace strata {
namespace {

constexpr uint32_t kMaxReadBytes = 64 << 10;
constexpr uint64_t kFillChunkEdges = uint64_t{1} << 20;

}  // namespace

DiskAdjacency::DiskAdjacency(const std::string& indices_path, uint32_t id_bytes, uint64_t num_edges,
                             uint64_t num_nodes, const IoEngineOptions& io, MemoryBudget& budget)
    : path_(indices_path),
      id_bytes_(id_bytes),
      num_edges_(num_edges),
      num_nodes_(num_nodes),
      slot_bytes_(kMaxReadBytes) {
  engine_ = MakeIoEngine(io);
  staging_ = AlignedBuffer(budget, uint64_t{engine_->depth()} * slot_bytes_,
                           "the adjacency reader's buffers");
  engine_->RegisterBuffer(staging_.span());
  file_ = engine_->OpenFile(indices_path);
  shape_ = {engine_->read_alignment(file_), kMaxReadBytes, true};
  completions_.resize(engine_->depth());
  slot_read_.resize(engine_->depth());
}

DiskAdjacency::~DiskAdjacency() = default;

void DiskAdjacency::FillCache(std::span<const uint64_t> indptr, std::span<const float> density,
                              uint64_t cache_bytes, MemoryBudget& budget) {
  std::lock_guard<std::mutex> lock(mutex_);
  const uint64_t n = density.size();
  cached_.clear();
  cache_ = {};
  {
    ChargedArray<uint64_t> order(budget, n, "adjacency cache ranking");
    std::iota(order.data(), order.data() + n, uint64_t{0});
    std::sort(order.data(), order.data() + n, [&](uint64_t a, uint64_t b) {
      return density[a] != density[b] ? density[a] > density[b] : a < b;
    });
    uint64_t entries = 0;
    const uint64_t capacity = cache_bytes / sizeof(uint64_t);
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t v = order[i];
      const uint64_t degree = indptr[v + 1] - indptr[v];
      if (degree == 0) continue;
      if (entries + degree > capacity) continue;  // a smaller list further down may still fit
      cached_.push_back({indptr[v], degree, 0});
      entries += degree;
    }
    std::sort(cached_.begin(), cached_.end(),
              [](const CachedList& a, const CachedList& b) { return a.first_edge < b.first_edge; });
    cache_ = ChargedArray<uint64_t>(budget, entries, "the adjacency cache");
  }
  // Read the chosen lists in edge order, a chunk of entries at a time.
  uint64_t slot = 0;
  size_t first_list = 0;
  std::vector<uint64_t> edges;
  while (first_list < cached_.size()) {
    edges.clear();
    size_t last = first_list;
    while (last < cached_.size() && (edges.empty() || edges.size() < kFillChunkEdges)) {
      CachedList& list = cached_[last++];
      list.slot = slot + edges.size();
      for (uint64_t e = 0; e < list.count; ++e) edges.push_back(list.first_edge + e);
    }
    ReadEntries(edges);
    std::copy(values_.begin(), values_.end(), cache_.data() + slot);
    slot += edges.size();
    first_list = last;
  }
}

const DiskAdjacency::CachedList* DiskAdjacency::Find(uint64_t e) const {
  auto it =
      std::upper_bound(cached_.begin(), cached_.end(), e,
                       [](uint64_t edge, const CachedList& l) { return edge < l.first_edge; });
  if (it == cached_.begin()) return nullptr;
  --it;
  return e < it->first_edge + it->count ? &*it : nullptr;
}

void DiskAdjacency::Resolve(std::span<uint64_t> edges) {
  std::lock_guard<std::mutex> lock(mutex_);
  misses_.clear();
  stats_.entries += edges.size();
  for (size_t i = 0; i < edges.size(); ++i) {
    if (edges[i] >= num_edges_) {
      throw Error::Internal(
          fmt::format("edge {} requested, the graph has {} edges", edges[i], num_edges_));
    }
    if (const CachedList* list = Find(edges[i])) {
      edges[i] = cache_[list->slot + (edges[i] - list->first_edge)];
      ++stats_.cache_hits;
    } else {
      misses_.emplace_back(edges[i], static_cast<uint32_t>(i));
    }
  }
  if (misses_.empty()) return;
  std::sort(misses_.begin(), misses_.end());
  unique_.clear();
  for (const auto& [edge, position] : misses_) {
    if (unique_.empty() || unique_.back() != edge) unique_.push_back(edge);
  }
  ReadEntries(unique_);
  stats_.reads += plan_.reads.size();
  for (const PlannedRead& read : plan_.reads) stats_.bytes_read += read.length;
  size_t k = 0;
  for (const auto& [edge, position] : misses_) {
    while (unique_[k] != edge) ++k;
    edges[position] = values_[k];
  }
}

AdjacencyStats DiskAdjacency::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  AdjacencyStats stats = stats_;
  stats.cached_nodes = cached_.size();
  return stats;
}

void DiskAdjacency::ReadEntries(std::span<const uint64_t> unique_edges) {
  keys_.resize(unique_edges.size());
  std::iota(keys_.begin(), keys_.end(), uint32_t{0});
  values_.resize(unique_edges.size());
  plan_.Clear();
  PlanReads(unique_edges, keys_, {id_bytes_, id_bytes_}, shape_, plan_);
  free_slots_.resize(engine_->depth());
  std::iota(free_slots_.begin(), free_slots_.end(), uint32_t{0});
  size_t next = 0, in_flight = 0;
  try {
    while (next < plan_.reads.size() || in_flight > 0) {
      requests_.clear();
      while (next < plan_.reads.size() && !free_slots_.empty()) {
        const uint32_t slot = free_slots_.back();
        free_slots_.pop_back();
        const PlannedRead& read = plan_.reads[next];
        slot_read_[slot] = static_cast<uint32_t>(next++);
        requests_.push_back(
            {file_, read.offset, read.length, staging_.data() + slot * slot_bytes_, slot});
      }
      if (!requests_.empty()) engine_->Submit(requests_);
      in_flight += requests_.size();
      const size_t n = engine_->Reap(completions_, 1);
      for (size_t i = 0; i < n; ++i) {
        const auto slot = static_cast<uint32_t>(completions_[i].tag);
        const PlannedRead& read = plan_.reads[slot_read_[slot]];
        const std::byte* buffer = staging_.data() + slot * slot_bytes_;
        for (uint32_t r = read.first_row; r < read.first_row + read.row_count; ++r) {
          const uint32_t key = plan_.rows[r].key;
          values_[key] =
              CheckedStoredId(LoadNodeId(buffer + plan_.rows[r].offset_in_read, id_bytes_),
                              unique_edges[key], num_nodes_, path_);
        }
        free_slots_.push_back(slot);
      }
      in_flight -= n;
    }
  } catch (...) {
    // The reads still in flight land in our buffers: let them finish before anyone reuses
    // the reader.
    DrainDiscardingErrors(*engine_);
    throw;
  }
}

}  // namespace strata
