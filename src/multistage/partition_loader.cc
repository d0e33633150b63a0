#include "multistage/partition_loader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <numeric>

#include "common/interrupt.h"
#include "common/random.h"
#include "dataset/stored_ids.h"
#include "features/direct_feature_store.h"
#include "multistage/macro_batch_size.h"
#include "storage/file.h"
#include "strata/error.h"

namespace strata {
namespace {

// Reads are at least this large (when the range is), so the device streams.
constexpr uint64_t kReadBytes = uint64_t{4} << 20;
// Ahead of time, rows closer than this are read together: the bytes between cost less than
// another request does (64 KiB at 1.4 GB/s is about the service time of one random read).
constexpr uint64_t kAheadOfTimeGap = 64 << 10;

uint64_t AlignDown(uint64_t x) { return x / kDirectIoAlignment * kDirectIoAlignment; }
uint64_t AlignUp(uint64_t x) { return AlignDown(x + kDirectIoAlignment - 1); }

ChargedArray<uint64_t> ReadValues(const std::string& path, uint32_t width, MemoryBudget& budget) {
  const std::string bytes = ReadWholeFile(path);
  ChargedArray<uint64_t> values(budget, bytes.size() / width, "hub section");
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = LoadNodeId(reinterpret_cast<const std::byte*>(bytes.data()) + i * width, width);
  }
  return values;
}

// ReadValues of a file of node ids, each checked to be below num_nodes.
ChargedArray<uint64_t> ReadNodeIds(const std::string& path, uint32_t width, uint64_t num_nodes,
                                   MemoryBudget& budget) {
  ChargedArray<uint64_t> ids = ReadValues(path, width, budget);
  CheckStoredIds(reinterpret_cast<const std::byte*>(ids.data()), ids.size(), 8, 0, num_nodes, path);
  return ids;
}

constexpr uint64_t kPartitionOrderStream = 0x6d61637200000000ull;  // "macr"

// The partitions of an epoch, shuffled by (seed, epoch).
std::vector<uint32_t> PartitionOrder(uint32_t parts, uint64_t seed, uint64_t epoch) {
  std::vector<uint32_t> order(parts);
  std::iota(order.begin(), order.end(), 0);
  Rng rng(MixSeed(seed ^ kPartitionOrderStream, epoch));
  for (uint32_t i = parts; i > 1; --i) std::swap(order[i - 1], order[rng.Below(i)]);
  return order;
}

// The dataset's partition offsets, checked to rise from 0 to the graph's nodes.
ChargedArray<uint64_t> ReadOffsets(const Dataset& dataset, const CscGraph& graph,
                                   MemoryBudget& budget) {
  const std::string path = dataset.PathOf(kPartitionOffsetsFile);
  ChargedArray<uint64_t> offsets = ReadValues(path, 8, budget);
  CheckRowOffsets({offsets.data(), offsets.size()}, 0, offsets.size() - 1, graph.num_nodes(), path);
  return offsets;
}

// The partitions' sizes, each list largest first.
struct PartitionSizes {
  std::vector<uint64_t> spans;  // bytes of the aligned feature and indices ranges
  std::vector<uint64_t> nodes;
  std::vector<uint64_t> edges;  // in-edges

  PartitionSizes(std::span<const uint64_t> offsets, const CscGraph& graph,
                 const DatasetMeta& meta) {
    for (size_t p = 0; p + 1 < offsets.size(); ++p) {
      const uint64_t first = offsets[p], end = offsets[p + 1];
      const uint64_t id_bytes = meta.node_id_bytes;
      spans.push_back(
          AlignUp(end * meta.row_stride_bytes) - AlignDown(first * meta.row_stride_bytes) +
          AlignUp(graph.EdgeBegin(end) * id_bytes) - AlignDown(graph.EdgeBegin(first) * id_bytes));
      nodes.push_back(end - first);
      edges.push_back(graph.EdgeBegin(end) - graph.EdgeBegin(first));
    }
    for (auto* sizes : {&spans, &nodes, &edges}) std::sort(sizes->rbegin(), sizes->rend());
  }
  // A macro-batch buffer of the largest partition with no hubs: its rows and lists and the most
  // its graph can hold (4 bytes an edge, 32 a node for the offsets and id maps).
  uint64_t OnePartitionBytes() const { return spans[0] + edges[0] * 4 + nodes[0] * 32; }
};

// What partition-based sampling sets aside beside the macro-batches' own buffers: the history
// table's staging and stamps and the halo store's reads.
uint64_t HaloFixedBytes(const DatasetMeta& meta, const HaloOptions& halo) {
  if (halo.history_values == 0) return 0;
  return HistoryTable::ChargedBytes(meta.num_nodes, halo.history_values) +
         DirectStoreReadBytes(meta, halo.store.io.depth, halo.store.max_read_bytes);
}

// A macro-batch buffer's historical rows and stamps for the largest partition.
uint64_t OnePartitionHistoryBytes(const PartitionSizes& sizes, const HaloOptions& halo) {
  if (halo.history_values == 0) return 0;
  return AlignUp(sizes.nodes[0] * halo.history_values * 2) + sizes.nodes[0] * 4;
}

// Bytes of the hub section's files as choosing which hubs to keep reads them (8 bytes a
// value; the hub lookup, two words a 64 nodes).
uint64_t HubChoosingBytes(const Dataset& dataset) {
  auto values = [&](std::string_view file, uint64_t width) -> uint64_t {
    std::error_code error;  // a missing file is reported where it is read
    const uint64_t size = std::filesystem::file_size(dataset.PathOf(file), error);
    return error ? 0 : size / width;
  };
  const uint64_t id_bytes = dataset.meta().node_id_bytes;
  const uint64_t section_values =
      values(kHubIdsFile, id_bytes) + values(kHubIndicesFile, id_bytes) + values(kHubIndptrFile, 8);
  return 8 * section_values + 16 * (dataset.meta().num_nodes / 64 + 1);
}

// The least the loader needs once its offsets are read: the hub section read while it chooses
// which hubs to keep, or, keeping none, the halo's fixed buffers and two buffers of the
// largest partition in half of what is left.
uint64_t StartBytes(const Dataset& dataset, const PartitionSizes& sizes, const HaloOptions& halo) {
  return std::max(HubChoosingBytes(dataset),
                  HaloFixedBytes(dataset.meta(), halo) +
                      4 * (sizes.OnePartitionBytes() + OnePartitionHistoryBytes(sizes, halo)));
}

// What reading and looking up the partition offsets charges.
uint64_t OffsetsBytes(uint64_t parts, uint64_t nodes) {
  return 8 * (parts + 1) + PartitionLookup::ChargedBytes(nodes);
}

}  // namespace

PartitionLoader::PartitionLoader(const Dataset& dataset, const CscGraph& graph,
                                 std::vector<bool> train, uint32_t macro_batch, uint32_t io_depth,
                                 uint64_t seed, MemoryBudget& budget, uint32_t ranks,
                                 bool ahead_of_time, HaloOptions halo)
    : graph_(graph),
      train_(std::move(train)),
      budget_(budget),
      row_stride_(dataset.meta().row_stride_bytes),
      row_dtype_(dataset.meta().feature_dtype),
      id_bytes_(dataset.meta().node_id_bytes),
      seed_(seed),
      ahead_of_time_(ahead_of_time),
      history_values_(halo.history_values) {
  if (!dataset.meta().partition) {
    throw Error::Input(fmt::format("--multistage {} needs a partitioned dataset (make one with "
                                   "strata partition)",
                                   history_values_ > 0 ? "pbs" : "partition"),
                       dataset.dir());
  }
  const ChargedArray<uint64_t> offsets = ReadOffsets(dataset, graph, budget);
  offsets_.assign(offsets.data(), offsets.data() + offsets.size());
  PartitionSizes partitions(offsets_, graph, dataset.meta());
  const uint64_t start = StartBytes(dataset, partitions, halo);
  if (start > budget.available()) {
    throw Error::Input(fmt::format(
        "the memory budget of {} is too small for --multistage {}: choosing its hubs reads {} of "
        "hub section, and two buffers of one partition{} need {} in half of what is left; raise "
        "--memory-budget to {} or partition into more parts",
        FormatBytes(budget.limit()), history_values_ > 0 ? "pbs" : "partition",
        FormatBytes(HubChoosingBytes(dataset)), history_values_ > 0 ? " and its halo" : "",
        FormatBytes(2 *
                    (partitions.OnePartitionBytes() + OnePartitionHistoryBytes(partitions, halo))),
        FormatBytesRoundedUp(budget.used() + start)));
  }
  // Kept out of the hub section's share: the halo's fixed buffers and history rows.
  halo_reserve_ =
      HaloFixedBytes(dataset.meta(), halo) + 4 * OnePartitionHistoryBytes(partitions, halo);
  one_partition_bytes_ = partitions.OnePartitionBytes();
  partition_of_ = PartitionLookup(offsets_, budget);
  sorted_spans_ = std::move(partitions.spans);
  sorted_nodes_ = std::move(partitions.nodes);
  sorted_edges_ = std::move(partitions.edges);
  for (uint32_t p = 0; p < parts(); ++p) {
    train_in_partition_.push_back(static_cast<uint64_t>(
        std::count(train_.begin() + static_cast<int64_t>(offsets_[p]),
                   train_.begin() + static_cast<int64_t>(offsets_[p + 1]), true)));
  }
  LoadHubs(dataset);
  for (uint32_t p = 0; p < parts(); ++p) {
    sorted_hub_edges_.push_back(edges_by_partition_start_[p + 1] - edges_by_partition_start_[p]);
  }
  std::sort(sorted_hub_edges_.rbegin(), sorted_hub_edges_.rend());

  std::vector<uint32_t> sizes(std::max<uint32_t>(parts() / std::max<uint32_t>(ranks, 1), 1));
  std::iota(sizes.begin(), sizes.end(), 1);
  if (history_values_ > 0) {
    // Before the buffers are sized: the table's stamps and staging are charged, and a disk
    // without room for the table is refused before anything else is read.
    history_ = std::make_unique<HistoryTable>(offsets_, history_values_, halo.scratch_dir, io_depth,
                                              budget);
    halo_store_ = OpenFeatureStore(dataset, FeatureStoreKind::kDirect, halo.store, budget);
  }
  macro_batch_ =
      ChooseMacroBatch(macro_batch, sizes, [&](uint32_t n) { return 2 * BufferBytes(n); }, budget,
                       {"multistage training", "partition", "partition into more parts"});
  if (history_values_ > 0) {
    for (uint32_t i = 0; i < macro_batch_; ++i) {
      history_buffer_bytes_ += AlignUp(sorted_nodes_[i] * history_values_ * 2);
    }
    history_rows_ = AlignedBuffer(budget, 2 * history_buffer_bytes_, "historical embedding rows");
    for (uint32_t i = 0; i < macro_batch_; ++i) stamps_per_buffer_ += sorted_nodes_[i];
    history_stamps_ =
        ChargedArray<uint32_t>(budget, 2 * stamps_per_buffer_, "historical embedding rows");
  }
  uint64_t span = 0;
  for (uint32_t i = 0; i < macro_batch_; ++i) span += sorted_spans_[i];
  // Both buffers in one arena, registered with the engine so that large reads skip pinning.
  buffer_bytes_ = span;
  buffers_ = AlignedBuffer(budget, 2 * span, "macro-batch buffers");
  IoEngineOptions io;
  io.depth = std::max<uint32_t>(io_depth, 1);
  engine_ = MakeIoEngine(io);
  engine_->RegisterBuffer(buffers_.span());
  features_file_ = engine_->OpenFile(dataset.PathOf(kFeaturesFile));
  indices_path_ = dataset.PathOf(kIndicesFile);
  indices_file_ = engine_->OpenFile(indices_path_);
}

PartitionLoader::~PartitionLoader() = default;

uint64_t PartitionLoader::LeastBytes(const Dataset& dataset, const CscGraph& graph,
                                     const HaloOptions& halo) {
  if (!dataset.meta().partition) return 0;  // refused where the loader is built
  MemoryBudget sizing(std::numeric_limits<uint64_t>::max() / 2);
  const ChargedArray<uint64_t> offsets = ReadOffsets(dataset, graph, sizing);
  const PartitionSizes sizes({offsets.data(), offsets.size()}, graph, dataset.meta());
  return OffsetsBytes(offsets.size() - 1, graph.num_nodes()) + StartBytes(dataset, sizes, halo);
}

uint64_t PartitionLoader::macro_batches(uint64_t epoch) const {
  return (parts() + macro_batch_ - 1) / macro_batch_;
}

std::vector<uint64_t> PartitionLoader::seeds_per_macro_batch(uint64_t epoch) const {
  const std::vector<uint32_t> order = PartitionOrder(parts(), seed_, epoch);
  std::vector<uint64_t> seeds(macro_batches(epoch), 0);
  for (uint32_t i = 0; i < parts(); ++i) seeds[i / macro_batch_] += train_in_partition_[order[i]];
  return seeds;
}

std::unique_ptr<MacroBatch> PartitionLoader::Load(uint64_t epoch, uint64_t m, int buffer) {
  const std::vector<uint32_t> order = PartitionOrder(parts(), seed_, epoch);
  const uint64_t first = m * macro_batch_;
  const uint64_t count = std::min<uint64_t>(macro_batch_, parts() - first);
  return LoadPartitions({order.data() + first, count}, buffer);
}

uint64_t PartitionLoader::BufferBytes(uint32_t count) const {
  uint64_t span = 0, nodes = hub_ids_.size(), edges = MaxKeptHubEdges(count);
  for (uint32_t i = 0; i < count; ++i) {
    span += sorted_spans_[i];
    nodes += sorted_nodes_[i];
    edges += sorted_edges_[i];
  }
  // The macro-batch graph holds at most every in-edge of its partitions and the hub edges it
  // keeps (4-byte local ids); each node has an offset and three map entries.
  return span + edges * 4 + (nodes + 1) * 8 + nodes * 24 + HistoryBufferBytes(count);
}

uint64_t PartitionLoader::HistoryBufferBytes(uint32_t count) const {
  if (history_values_ == 0) return 0;
  // Each partition's rows, aligned, and a stamp per node.
  uint64_t bytes = 0;
  for (uint32_t i = 0; i < count; ++i) {
    bytes += AlignUp(sorted_nodes_[i] * history_values_ * 2) + sorted_nodes_[i] * 4;
  }
  return bytes;
}

uint64_t PartitionLoader::MaxKeptHubEdges(uint32_t count) const {
  uint64_t edges = edge_hub_.size() - edges_by_partition_start_[parts()];  // hub to hub
  for (uint32_t i = 0; i < count && i < sorted_hub_edges_.size(); ++i) {
    edges += sorted_hub_edges_[i];
  }
  return edges;
}

std::vector<uint64_t> PartitionLoader::HubsWithin(const ChargedArray<uint64_t>& ids,
                                                  const ChargedArray<uint64_t>& indptr,
                                                  const ChargedArray<uint64_t>& indices,
                                                  uint64_t available_bytes) const {
  const uint64_t all = ids.size();
  std::vector<uint64_t> order(all);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](uint64_t a, uint64_t b) {
    return indptr[a + 1] - indptr[a] > indptr[b + 1] - indptr[b];
  });
  std::vector<uint32_t> rank(all);
  for (uint64_t r = 0; r < all; ++r) rank[order[r]] = static_cast<uint32_t>(r);
  const HubLookup hub_of({ids.data(), all}, graph_.num_nodes(), budget_);
  // What the `k` first hubs of `order` need: the section (a row, id, lookup entry and two
  // 4-byte entries per edge), and room for two buffers of the largest partition in half of
  // what is left, their graphs holding the hub nodes and the most hub edges one partition
  // keeps (the hub-to-hub edges and the largest partition's edges into hubs).
  std::vector<uint64_t> into_hubs(parts());
  auto fits = [&](uint64_t k) {
    std::fill(into_hubs.begin(), into_hubs.end(), 0);
    uint64_t section = 0, hub_to_hub = 0;
    for (uint64_t r = 0; r < k; ++r) {
      const uint64_t h = order[r];
      section += row_stride_ + 12 + (indptr[h + 1] - indptr[h]) * 8;
      for (uint64_t e = indptr[h]; e < indptr[h + 1]; ++e) {
        const int64_t source = hub_of(indices[e]);
        if (source >= 0 && rank[source] < k) {
          ++hub_to_hub;
        } else {
          ++into_hubs[partition_of_(indices[e])];
        }
      }
    }
    const uint64_t kept_edges =
        hub_to_hub + (k == 0 ? 0 : *std::max_element(into_hubs.begin(), into_hubs.end()));
    return section + 4 * (one_partition_bytes_ + 32 * k + 4 * kept_edges) <= available_bytes;
  };
  uint64_t count = all;
  if (!fits(all)) {
    uint64_t low = 0, high = all;  // fits(low) or low == 0; !fits(high)
    while (high - low > 1) {
      const uint64_t mid = (low + high) / 2;
      (fits(mid) ? low : high) = mid;
    }
    count = low;
  }
  order.resize(count);
  std::sort(order.begin(), order.end());
  return order;
}

void PartitionLoader::LoadHubs(const Dataset& dataset) {
  const uint64_t n = graph_.num_nodes();
  const ChargedArray<uint64_t> all_ids =
      ReadNodeIds(dataset.PathOf(kHubIdsFile), id_bytes_, n, budget_);
  const ChargedArray<uint64_t> indices =
      ReadNodeIds(dataset.PathOf(kHubIndicesFile), id_bytes_, n, budget_);
  const std::string indptr_path = dataset.PathOf(kHubIndptrFile);
  const ChargedArray<uint64_t> indptr = ReadValues(indptr_path, 8, budget_);
  CheckRowOffsets({indptr.data(), indptr.size()}, 0, all_ids.size(), indices.size(), indptr_path);
  const std::vector<uint64_t> kept = HubsWithin(
      all_ids, indptr, indices, budget_.available() - std::min(budget_.available(), halo_reserve_));
  if (kept.size() < all_ids.size()) {
    std::fprintf(stderr, "%s\n",
                 fmt::format("strata: note: the hub section keeps the {} most connected of its {} "
                             "hubs, all that fit the budget ({}) with macro-batches of one "
                             "partition; the others load with their partitions",
                             kept.size(), all_ids.size(), FormatBytes(budget_.limit()))
                     .c_str());
  }
  const uint64_t hubs = kept.size();
  hub_ids_ = ChargedArray<uint64_t>(budget_, hubs, "hub section");
  for (uint64_t i = 0; i < hubs; ++i) hub_ids_[i] = all_ids[kept[i]];
  const uint64_t bytes = hubs * row_stride_;
  hub_rows_ = AlignedBuffer(budget_, AlignUp(std::max<uint64_t>(bytes, 1)), "hub feature rows");
  const FileReader rows(dataset.PathOf(kHubFeaturesFile));
  if (hubs == all_ids.size()) {
    if (bytes > 0) rows.ReadExact(0, hub_rows_.data(), bytes);
  } else {
    for (uint64_t i = 0; i < hubs; ++i) {
      rows.ReadExact(kept[i] * row_stride_, hub_rows_.data() + i * row_stride_, row_stride_);
    }
  }
  hub_index_ = HubLookup({hub_ids_.data(), hubs}, graph_.num_nodes(), budget_);

  // A hub's in-neighbour is kept in a macro-batch when it is a hub too (always) or when its
  // partition is in the macro-batch; so the hub section's edges are sorted once by source
  // partition, hub-to-hub edges apart, and a macro-batch visits only its own partitions'.
  std::vector<uint64_t> count(parts() + 1, 0);
  uint64_t hub_to_hub = 0;
  for (uint64_t k : kept) {
    for (uint64_t e = indptr[k]; e < indptr[k + 1]; ++e) {
      if (hub_index_(indices[e]) >= 0) {
        ++hub_to_hub;
      } else {
        ++count[partition_of_(indices[e]) + 1];
      }
    }
  }
  for (uint32_t p = 0; p < parts(); ++p) count[p + 1] += count[p];
  edges_by_partition_start_.assign(count.begin(), count.end());
  const uint64_t kept_edges = count[parts()] + hub_to_hub;
  edge_hub_ = ChargedArray<uint32_t>(budget_, kept_edges, "hub section");
  edge_source_ = ChargedArray<uint32_t>(budget_, kept_edges, "hub section");
  uint64_t next_hub_edge = count[parts()];
  for (uint64_t h = 0; h < hubs; ++h) {
    for (uint64_t e = indptr[kept[h]]; e < indptr[kept[h] + 1]; ++e) {
      const uint64_t v = indices[e];
      const int64_t hub = hub_index_(v);
      const uint32_t p = partition_of_(v);
      const uint64_t slot = hub >= 0 ? next_hub_edge++ : count[p]++;
      edge_hub_[slot] = static_cast<uint32_t>(h);
      edge_source_[slot] =
          static_cast<uint32_t>(hub >= 0 ? static_cast<uint64_t>(hub) : v - offsets_[p]);
    }
  }
}

std::unique_ptr<MacroBatch> PartitionLoader::LoadPartitions(std::span<const uint32_t> partitions,
                                                            int buffer) {
  if (partitions.size() > macro_batch_) throw Error::Internal("macro-batch too large");
  auto batch = std::make_unique<MacroBatch>();
  batch->buffer = buffer;
  batch->row_dtype = row_dtype_;
  std::byte* const base = buffers_.data() + buffer * buffer_bytes_;
  std::vector<ReadRequest> index_reads, row_reads;
  std::vector<const std::byte*> rows_at, indices_at;
  RowRanges ranges;
  uint64_t used = 0;
  auto add_range = [&](std::vector<ReadRequest>& reads, int file, uint64_t begin, uint64_t end) {
    const uint64_t first = AlignDown(begin), last = AlignUp(end);
    for (uint64_t offset = first; offset < last; offset += kReadBytes) {
      const uint64_t length = std::min(kReadBytes, last - offset);
      reads.push_back({file, offset, static_cast<uint32_t>(length), base + used + (offset - first),
                       reads.size()});
    }
    const std::byte* start = base + used + (begin - first);
    used += last - first;
    return start;
  };
  for (uint32_t p : partitions) {
    ranges.file_first.push_back(AlignDown(offsets_[p] * row_stride_));
    ranges.buffer_at.push_back(base + used);
    rows_at.push_back(add_range(row_reads, features_file_, offsets_[p] * row_stride_,
                                offsets_[p + 1] * row_stride_));
    indices_at.push_back(add_range(index_reads, indices_file_,
                                   graph_.EdgeBegin(offsets_[p]) * id_bytes_,
                                   graph_.EdgeBegin(offsets_[p + 1]) * id_bytes_));
  }
  for (std::vector<ReadRequest>* reads : {&index_reads, &row_reads}) {
    std::erase_if(*reads, [](const ReadRequest& r) { return r.length == 0; });
    for (const ReadRequest& r : *reads) batch->bytes_read += r.length;
  }
  std::vector<ReadCompletion> done(std::max(index_reads.size(), row_reads.size()));
  auto reap = [&](size_t count) {
    if (done.size() < count) done.resize(count);
    for (size_t reaped = 0; reaped < count;) {
      reaped += engine_->Reap({done.data(), count - reaped}, 1);
      ThrowIfInterrupted();
    }
  };
  // The lists first (a few percent of the bytes); the graph is then built while the rows
  // stream in, so the build costs no time the reads do not take anyway. Ahead of time, the
  // rows wait for the graph: only those its mini-batches use are read.
  engine_->Submit(index_reads);
  reap(index_reads.size());
  size_t submitted = 0;
  if (!ahead_of_time_) {
    engine_->Submit(row_reads);
    submitted = row_reads.size();
  }
  try {
    BuildBatch(*batch, partitions, rows_at, indices_at);
    if (batch->halo) batch->halo->buffer = buffer;
    if (graph_built_) graph_built_(*batch);
    if (ahead_of_time_) {
      if (!batch->input_rows) throw Error::Internal("ahead-of-time loading without its rows");
      uint64_t all_rows = 0;
      for (const ReadRequest& r : row_reads) all_rows += r.length;
      row_reads = TouchedRowReads(partitions, *batch->input_rows, ranges);
      uint64_t touched = 0;
      for (const ReadRequest& r : row_reads) touched += r.length;
      batch->bytes_read -= all_rows - touched;
      batch->aot_bytes_saved = all_rows - touched;
      engine_->Submit(row_reads);
      submitted = row_reads.size();
    }
  } catch (...) {
    // No read may land in the buffer after it is handed to another macro-batch.
    try {
      reap(submitted);
    } catch (...) {
    }
    throw;
  }
  reap(submitted);
  return batch;
}

std::vector<ReadRequest> PartitionLoader::TouchedRowReads(std::span<const uint32_t> partitions,
                                                          std::span<const uint64_t> locals,
                                                          const RowRanges& ranges) const {
  std::vector<ReadRequest> reads;
  uint64_t first_local = 0;
  auto local = locals.begin();
  for (size_t i = 0; i < partitions.size(); ++i) {
    const uint32_t p = partitions[i];
    const uint64_t end_local = first_local + (offsets_[p + 1] - offsets_[p]);
    uint64_t run_begin = 0, run_end = 0;  // file bytes of the read being grown
    auto flush = [&] {
      if (run_end == run_begin) return;
      reads.push_back({features_file_, run_begin, static_cast<uint32_t>(run_end - run_begin),
                       ranges.buffer_at[i] + (run_begin - ranges.file_first[i]), reads.size()});
      run_begin = run_end = 0;
    };
    for (; local != locals.end() && *local < end_local; ++local) {
      const uint64_t offset = (offsets_[p] + (*local - first_local)) * row_stride_;
      const uint64_t begin = AlignDown(offset), end = AlignUp(offset + row_stride_);
      // A gap shorter than kAheadOfTimeGap costs less read than another request does.
      if (run_end > run_begin && begin <= run_end + kAheadOfTimeGap &&
          end - run_begin <= kReadBytes) {
        run_end = std::max(run_end, end);
      } else {
        flush();
        run_begin = begin;
        run_end = end;
      }
    }
    flush();
    first_local = end_local;
  }
  return reads;
}
void PartitionLoader::NumberHalo(MacroBatch& batch, std::span<const uint32_t> partitions,
                                 std::span<const std::pair<uint64_t, uint64_t>> cut,
                                 std::vector<uint32_t>& kept, ChargedArray<uint64_t>& indptr) {
  std::vector<uint64_t> halo_ids(cut.size());
  for (size_t i = 0; i < cut.size(); ++i) halo_ids[i] = cut[i].second;
  std::sort(halo_ids.begin(), halo_ids.end());
  halo_ids.erase(std::unique(halo_ids.begin(), halo_ids.end()), halo_ids.end());
  const uint64_t begin = batch.global_of.size();
  for (const auto& [at, u] : cut) {
    kept[at] = static_cast<uint32_t>(
        begin + (std::lower_bound(halo_ids.begin(), halo_ids.end(), u) - halo_ids.begin()));
  }
  batch.halo = std::make_unique<Halo>();
  batch.halo->begin = begin;
  batch.halo->partitions.assign(partitions.begin(), partitions.end());
  for (uint64_t u : halo_ids) {
    batch.global_of.push_back(u);
    batch.row_of.push_back(nullptr);  // in halo->features
  }
  // The halo's lists are empty: sampling stops at the halo.
  ChargedArray<uint64_t> extended(budget_, batch.global_of.size() + 1, "macro-batch graph");
  std::copy(indptr.data(), indptr.data() + begin + 1, extended.data());
  std::fill(extended.data() + begin + 1, extended.data() + extended.size(), indptr[begin]);
  indptr = std::move(extended);
}

void PartitionLoader::LoadHalo(MacroBatch& batch, std::span<const uint64_t> input,
                               std::span<const uint64_t> hidden) {
  Halo& halo = *batch.halo;
  const uint64_t halo_nodes = batch.global_of.size() - halo.begin;
  // `locals`' node ids, and their slots in the halo's arrays.
  auto slots_of = [&](std::span<const uint64_t> locals, std::vector<uint32_t>& slot) {
    slot.assign(halo_nodes, Halo::kNotLoaded);
    std::vector<uint64_t> nodes(locals.size());
    for (size_t i = 0; i < locals.size(); ++i) {
      nodes[i] = batch.global_of[locals[i]];
      slot[locals[i] - halo.begin] = static_cast<uint32_t>(i);
    }
    return nodes;
  };
  const std::vector<uint64_t> feature_nodes = slots_of(input, halo.feature_slot);
  const uint64_t dim = halo_store_->dim();
  halo.features = ChargedArray<float>(budget_, feature_nodes.size() * dim, "macro-batch halo rows");
  const uint64_t store_before = halo_store_->stats().bytes_read;
  halo_store_->Gather(feature_nodes, {halo.features.data(), halo.features.size()});
  halo.feature_bytes_read = halo_store_->stats().bytes_read - store_before;

  // The partitions' rows first, then the halo's: both as the table holds them now (every
  // macro-batch before the last written back: the stream's order).
  const uint64_t table_before = history_->bytes_read();
  std::byte* const rows = history_rows_.data() + halo.buffer * history_buffer_bytes_;
  std::vector<uint64_t> first_local{0}, row_offset;
  uint64_t offset = 0;
  for (uint32_t p : halo.partitions) {
    row_offset.push_back(offset);
    history_->ReadPartition(p, rows + offset);
    offset += history_->PartitionBytes(p);
    first_local.push_back(first_local.back() + offsets_[p + 1] - offsets_[p]);
  }
  const std::span<uint32_t> stamps(history_stamps_.data() + halo.buffer * stamps_per_buffer_,
                                   first_local.back());
  // The stamps of rows no step recomputes stay as the table has them.
  for (size_t i = 0; i < halo.partitions.size(); ++i) {
    const std::span<const uint32_t> kept = history_->PartitionStamps(halo.partitions[i]);
    std::copy(kept.begin(), kept.end(), stamps.begin() + static_cast<int64_t>(first_local[i]));
  }
  const std::vector<uint64_t> history_nodes = slots_of(hidden, halo.history_slot);
  halo.history = ChargedArray<uint16_t>(budget_, history_nodes.size() * history_values_,
                                        "macro-batch halo rows");
  halo.stamps.resize(history_nodes.size());
  history_->Gather(history_nodes, {halo.history.data(), halo.history.size()}, halo.stamps);
  halo.history_bytes_read = history_->bytes_read() - table_before;
  halo.write_back =
      std::make_shared<HistoryWriteBack>(halo.partitions, std::move(first_local),
                                         std::move(row_offset), rows, stamps, history_values_);
}

uint64_t PartitionLoader::WriteBack(HistoryWriteBack& write_back) {
  const uint64_t before = history_->bytes_written();
  for (size_t i = 0; i < write_back.partitions().size(); ++i) {
    history_->WritePartition(write_back.partitions()[i], write_back.partition_rows(i),
                             write_back.partition_stamps(i));
  }
  return history_->bytes_written() - before;
}

void PartitionLoader::BuildBatch(MacroBatch& batch, std::span<const uint32_t> partitions,
                                 std::span<const std::byte* const> rows_at,
                                 std::span<const std::byte* const> indices_at) {
  // Rows of the partitions' nodes, then of the hubs outside them.
  uint64_t nodes = hub_ids_.size();
  for (uint32_t p : partitions) nodes += offsets_[p + 1] - offsets_[p];
  batch.global_of.reserve(nodes);
  batch.row_of.reserve(nodes);
  for (size_t i = 0; i < partitions.size(); ++i) {
    const uint32_t p = partitions[i];
    for (uint64_t v = offsets_[p]; v < offsets_[p + 1]; ++v) {
      batch.global_of.push_back(v);
      batch.row_of.push_back(rows_at[i] + (v - offsets_[p]) * row_stride_);
    }
  }
  BuildGraph(batch, partitions, indices_at);
}

void PartitionLoader::BuildGraph(MacroBatch& batch, std::span<const uint32_t> partitions,
                                 std::span<const std::byte* const> indices_at) {
  // Where each partition's nodes start in local ids (-1: not in this macro-batch).
  std::vector<int64_t> first_local(parts(), -1);
  uint64_t next = 0;
  for (uint32_t p : partitions) {
    first_local[p] = static_cast<int64_t>(next);
    next += offsets_[p + 1] - offsets_[p];
  }
  // Hubs outside the macro-batch's partitions get the next local ids.
  const uint64_t hubs = hub_ids_.size();
  std::vector<int64_t> hub_local(hubs, -1);
  for (uint64_t h = 0; h < hubs; ++h) {
    const uint32_t p = partition_of_(hub_ids_[h]);
    if (first_local[p] >= 0) {
      hub_local[h] = first_local[p] + static_cast<int64_t>(hub_ids_[h] - offsets_[p]);
      continue;
    }
    hub_local[h] = static_cast<int64_t>(next++);
    batch.global_of.push_back(hub_ids_[h]);
    batch.row_of.push_back(hub_rows_.data() + h * row_stride_);
  }
  auto local_of = [&](uint64_t v) -> int64_t {
    const uint32_t p = partition_of_(v);
    if (first_local[p] >= 0) return first_local[p] + static_cast<int64_t>(v - offsets_[p]);
    const int64_t hub = hub_index_(v);
    return hub < 0 ? -1 : hub_local[hub];
  };

  const uint64_t nodes = next;
  ChargedArray<uint64_t> indptr(budget_, nodes + 1, "macro-batch graph");
  // At most every edge of the partitions and the hub edges the macro-batch keeps: reserved,
  // never regrown.
  std::vector<uint32_t> kept;
  uint64_t most_edges = edge_hub_.size() - edges_by_partition_start_[parts()];
  for (uint32_t p : partitions) {
    most_edges += graph_.EdgeBegin(offsets_[p + 1]) - graph_.EdgeBegin(offsets_[p]);
    most_edges += edges_by_partition_start_[p + 1] - edges_by_partition_start_[p];
  }
  kept.reserve(most_edges);
  // With a halo: (position in kept, node id) of each edge from outside, numbered below.
  const bool with_halo = history_values_ > 0;
  std::vector<std::pair<uint64_t, uint64_t>> cut;
  uint64_t local = 0;
  indptr[0] = 0;
  for (size_t i = 0; i < partitions.size(); ++i) {
    const uint32_t p = partitions[i];
    const uint64_t first_edge = graph_.EdgeBegin(offsets_[p]);
    for (uint64_t v = offsets_[p]; v < offsets_[p + 1]; ++v) {
      const std::byte* list = indices_at[i] + (graph_.EdgeBegin(v) - first_edge) * id_bytes_;
      for (uint64_t k = 0; k < graph_.InDegree(v); ++k) {
        const uint64_t u =
            CheckedStoredId(LoadNodeId(list + k * id_bytes_, id_bytes_), graph_.EdgeBegin(v) + k,
                            graph_.num_nodes(), indices_path_);
        const int64_t s = local_of(u);
        if (s >= 0) {
          kept.push_back(static_cast<uint32_t>(s));
        } else if (with_halo) {
          cut.emplace_back(kept.size(), u);
          kept.push_back(0);  // the halo node's local id, once the halo is numbered
        }
      }
      indptr[++local] = kept.size();
      if (train_[v]) batch.train_local.push_back(local - 1);
    }
  }
  // The outside hubs' lists: their hub in-neighbours, then those in the macro-batch's
  // partitions, grouped by hub with a counting sort.
  const uint64_t first_hub_local = local;
  std::vector<uint64_t> hub_count(nodes - first_hub_local + 1, 0);
  // Calls fn(edge, local id of its source) for every hub edge the macro-batch keeps.
  auto for_each_kept_hub_edge = [&](auto&& fn) {
    for (uint64_t e = edges_by_partition_start_[parts()]; e < edge_hub_.size(); ++e) {
      fn(e, hub_local[edge_source_[e]]);
    }
    for (uint32_t p : partitions) {
      for (uint64_t e = edges_by_partition_start_[p]; e < edges_by_partition_start_[p + 1]; ++e) {
        fn(e, first_local[p] + static_cast<int64_t>(edge_source_[e]));
      }
    }
  };
  for_each_kept_hub_edge([&](uint64_t e, int64_t) {
    const int64_t dst = hub_local[edge_hub_[e]];
    if (dst >= static_cast<int64_t>(first_hub_local)) ++hub_count[dst - first_hub_local + 1];
  });
  for (size_t i = 1; i < hub_count.size(); ++i) hub_count[i] += hub_count[i - 1];
  const uint64_t base = kept.size();
  kept.resize(base + hub_count.back());
  for (uint64_t j = 0; j + 1 < hub_count.size(); ++j)
    indptr[first_hub_local + j + 1] = base + hub_count[j + 1];
  for_each_kept_hub_edge([&](uint64_t e, int64_t source) {
    const int64_t dst = hub_local[edge_hub_[e]];
    if (dst < static_cast<int64_t>(first_hub_local)) return;
    kept[base + hub_count[dst - first_hub_local]++] = static_cast<uint32_t>(source);
  });
  if (with_halo) NumberHalo(batch, partitions, cut, kept, indptr);
  ChargedArray<uint32_t> indices(budget_, kept.size(), "macro-batch graph");
  std::copy(kept.begin(), kept.end(), indices.data());
  batch.graphs.push_back(
      std::make_unique<CscGraph>(std::move(indptr), std::move(indices), budget_));
  batch.maps_charge = std::make_unique<TrackedCharge>(budget_, "macro-batch id maps");
  batch.maps_charge->Update(batch.global_of.size() * 16 + batch.train_local.size() * 8);
}

}  // namespace strata
