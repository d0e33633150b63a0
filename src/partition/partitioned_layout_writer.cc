#include "partition/partitioned_layout_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "common/interrupt.h"
#include "common/progress.h"
#include "dataset/build_common.h"
#include "dataset/csc_builder.h"
#include "dataset/feature_writer.h"
#include "dataset/split_writer.h"
#include "storage/file.h"
#include "strata/error.h"
#include "strata/feature_store.h"

namespace strata {
namespace {

// The renumbering: new ids by partition, then by input id.
struct IdMaps {
  std::vector<uint64_t> offsets;    // parts + 1
  ChargedArray<uint64_t> new_of;    // input id -> new id
  ChargedArray<uint64_t> input_of;  // new id -> input id
};

IdMaps Renumber(const Partitioning& partitioning, MemoryBudget& budget) {
  const uint64_t n = partitioning.part_of.size();
  IdMaps maps;
  maps.offsets.assign(partitioning.parts + 1, 0);
  for (uint64_t v = 0; v < n; ++v) ++maps.offsets[partitioning.part_of[v] + 1];
  for (uint32_t p = 0; p < partitioning.parts; ++p) maps.offsets[p + 1] += maps.offsets[p];
  maps.new_of = ChargedArray<uint64_t>(budget, n, "partition id map");
  maps.input_of = ChargedArray<uint64_t>(budget, n, "partition id map");
  std::vector<uint64_t> cursor(maps.offsets.begin(), maps.offsets.end() - 1);
  for (uint64_t v = 0; v < n; ++v) {
    const uint64_t id = cursor[partitioning.part_of[v]]++;
    maps.new_of[v] = id;
    maps.input_of[id] = v;
  }
  return maps;
}

// Bytes of the budget the row rewrite leaves to everything else while it runs (the two
// writers' buffers, the allocator's slack): this much, or an eighth of what is free.
constexpr uint64_t kRowRewriteReserve = uint64_t{64} << 20;
constexpr uint64_t kRowReadChunk = uint64_t{16} << 20;
// The SSD the choice between passes and random reads is made for (docs/training.md, "The
// machine"): its sequential rate and its random 4 KiB reads per second at depth 128.
constexpr double kSequentialBytesPerSecond = 1.4e9;
constexpr double kRandomReadsPerSecond = 125e3;

// How the feature rows reach their new order: `passes` sequential scans of the input, each
// keeping `range_rows` rows, or (passes == 0) one random read per row.
struct RowRewritePlan {
  uint64_t passes = 0;
  uint64_t range_rows = 0;
};

// Passes while they are cheaper than a random read per row: with the budget a fifth of the
// features, five passes cost a tenth of the random reads (100M rows of 256 bytes); features
// sixty times the budget (MAG240M's 375 GB in 6 GB) cost more in passes than in reads.
RowRewritePlan PlanRowRewrite(const DatasetMeta& in, uint64_t free_bytes) {
  const uint64_t n = in.num_nodes, stride = in.row_stride_bytes;
  RowRewritePlan plan;
  plan.range_rows = std::clamp<uint64_t>(free_bytes / stride, 1, n);
  const uint64_t passes = (n + plan.range_rows - 1) / plan.range_rows;
  const double pass_s =
      static_cast<double>(passes) * static_cast<double>(n * stride) / kSequentialBytesPerSecond;
  const double blocks_per_row = std::ceil(static_cast<double>(stride) / kBlockBytes);
  const double gather_s = static_cast<double>(n) * blocks_per_row / kRandomReadsPerSecond;
  if (pass_s <= gather_s) plan.passes = passes;
  return plan;
}

// Gathers the input's rows of `ids` in that order into `out`, by random direct reads.
void GatherRows(FeatureStore& store, const DatasetMeta& in, std::span<const uint64_t> ids,
                FeatureWriter& out, MemoryBudget& budget, ProgressBar* progress) {
  const uint64_t dim = in.feature_dim;
  // A few MiB of rows per gather: enough for the engine's queue, little of the budget.
  const uint64_t chunk = std::clamp<uint64_t>((uint64_t{16} << 20) / (dim * 4), 64, 1 << 16);
  ChargedArray<float> rows(budget, chunk * dim, "partitioned feature rows");
  for (uint64_t first = 0; first < ids.size(); first += chunk) {
    const uint64_t count = std::min<uint64_t>(chunk, ids.size() - first);
    store.Gather(ids.subspan(first, count), {rows.data(), count * dim});
    out.AppendRows({rows.data(), count * dim});
    if (progress) progress->Update(first + count);
    ThrowIfInterrupted();
  }
}

// Moves the rows by `plan.passes` sequential scans of the input: each keeps the rows whose new
// ids fall in the next range of `plan.range_rows`, then appends that range (and the hubs in it,
// `hub_ids` being new ids, ascending). Rows are copied as stored: every dtype keeps its bytes.
void PassRows(const Dataset& input, const IdMaps& maps, const RowRewritePlan& plan,
              std::span<const uint64_t> hub_ids, FeatureWriter& rows_out, FeatureWriter& hubs_out,
              MemoryBudget& budget, ProgressBar* progress) {
  const uint64_t n = input.meta().num_nodes, stride = input.meta().row_stride_bytes;
  const FileReader file(input.PathOf(kFeaturesFile));
  const uint64_t chunk_rows = std::clamp<uint64_t>(kRowReadChunk / stride, 1, n);
  ChargedArray<std::byte> chunk(budget, chunk_rows * stride, "partition row reads");
  ChargedArray<std::byte> range(budget, plan.range_rows * stride, "partition row passes");
  size_t next_hub = 0;
  for (uint64_t pass = 0; pass < plan.passes; ++pass) {
    const uint64_t low = pass * plan.range_rows, high = std::min(n, low + plan.range_rows);
    for (uint64_t first = 0; first < n; first += chunk_rows) {
      const uint64_t count = std::min(chunk_rows, n - first);
      file.ReadExact(first * stride, chunk.data(), count * stride);
      for (uint64_t k = 0; k < count; ++k) {
        const uint64_t id = maps.new_of[first + k];
        if (id >= low && id < high) {
          std::memcpy(range.data() + (id - low) * stride, chunk.data() + k * stride, stride);
        }
      }
      if (progress) progress->Update(pass * n + first + count);
      ThrowIfInterrupted();
    }
    rows_out.AppendStoredRows({range.data(), (high - low) * stride});
    for (; next_hub < hub_ids.size() && hub_ids[next_hub] < high; ++next_hub) {
      hubs_out.AppendStoredRows({range.data() + (hub_ids[next_hub] - low) * stride, stride});
    }
  }
}

// Writes the input's feature rows in the new order to features.bin and the hubs' rows to
// hub_features.bin. A random read per row runs at the disk's random-read rate, which at 100M
// rows is most of an hour; a pass over the input runs at its sequential rate, and as few are
// made as the budget allows. PlanRowRewrite picks the cheaper.
void WriteFeatureRows(const Dataset& input, const IdMaps& maps, std::span<const uint64_t> hub_ids,
                      std::span<const uint64_t> hub_inputs, uint64_t row_pass_bytes,
                      DatasetWriter& writer, MemoryBudget& budget, ProgressBar* progress) {
  const DatasetMeta& in = input.meta();
  const std::string source = input.PathOf(kFeaturesFile);
  FeatureWriter rows_out(writer.PathOf(kFeaturesFile), in.feature_dim, in.feature_dtype, source,
                         budget);
  FeatureWriter hubs_out(writer.PathOf(kHubFeaturesFile), in.feature_dim, in.feature_dtype, source,
                         budget);
  rows_out.ExpectRows(in.num_nodes);  // the hubs' rows and the others', on one file system
  if (in.feature_dim > 0 && in.num_nodes > 0) {
    const uint64_t reads =
        std::clamp<uint64_t>(kRowReadChunk / in.row_stride_bytes, 1, in.num_nodes) *
        in.row_stride_bytes;
    uint64_t free = budget.available() - std::min(budget.available(), reads);
    free -= std::min(kRowRewriteReserve, free / 8);
    if (row_pass_bytes > 0) free = std::min(free, row_pass_bytes);
    const RowRewritePlan plan = PlanRowRewrite(in, free);
    if (plan.passes > 0) {
      if (progress) {
        progress->Restart(fmt::format("writing features ({} passes)", plan.passes),
                          plan.passes * in.num_nodes);
      }
      PassRows(input, maps, plan, hub_ids, rows_out, hubs_out, budget, progress);
    } else {
      std::unique_ptr<FeatureStore> store =
          OpenFeatureStore(input, FeatureStoreKind::kDirect, DirectStoreOptions{}, budget);
      if (progress) progress->Restart("writing features (random reads)", in.num_nodes);
      GatherRows(*store, in, {maps.input_of.data(), maps.input_of.size()}, rows_out, budget,
                 progress);
      GatherRows(*store, in, hub_inputs, hubs_out, budget, nullptr);
    }
  }
  writer.Record(kFeaturesFile, rows_out.Finish());
  writer.Record(kHubFeaturesFile, hubs_out.Finish());
}

void WriteTopology(const CscGraph& graph, const IdMaps& maps, uint32_t node_id_bytes,
                   DatasetWriter& writer, MemoryBudget& budget, ProgressBar* progress) {
  const uint64_t n = graph.num_nodes();
  constexpr uint64_t kBatch = 1 << 16;
  std::vector<uint64_t> src, dst;
  src.reserve(kBatch);
  dst.reserve(kBatch);
  {
    // The builder takes what is left but the edge batches and the graph's scan buffer.
    const uint64_t reserve = 2 * kBatch * sizeof(uint64_t) + CscGraph::kScanChunkEdges * 16;
    CscBuilder builder(budget, CscBufferBytes(budget, reserve), writer.spill_dir(), IdBitsFor(n),
                       /*deduplicate=*/false);
    ForEachEdge(graph, [&](uint64_t source, uint64_t destination) {
      src.push_back(maps.new_of[source]);
      dst.push_back(maps.new_of[destination]);
      if (src.size() == kBatch) {
        builder.Add(src, dst);
        src.clear();
        dst.clear();
      }
    });
    builder.Add(src, dst);
    WriteGraph(builder, n, node_id_bytes, /*add_self_loops=*/false, writer, progress);
  }
}

// The hubs' in-neighbour lists in new ids, sorted as in the CSC: hub_indptr.bin (uint64[H+1])
// and hub_indices.bin (node ids).
void WriteHubAdjacency(const CscGraph& graph, const IdMaps& maps,
                       std::span<const uint64_t> hub_inputs, uint32_t node_id_bytes,
                       DatasetWriter& writer, MemoryBudget& budget) {
  FileWriter indptr(writer.PathOf(kHubIndptrFile)), indices(writer.PathOf(kHubIndicesFile));
  uint64_t written = 0;
  indptr.AppendValue(written);
  uint64_t max_degree = 0;
  for (uint64_t hub : hub_inputs) max_degree = std::max(max_degree, graph.InDegree(hub));
  ChargedArray<uint64_t> list_buffer(budget, max_degree, "a hub's in-neighbour list");
  for (uint64_t hub : hub_inputs) {
    const std::span<uint64_t> list(list_buffer.data(), graph.InDegree(hub));
    for (uint64_t k = 0; k < list.size(); ++k) list[k] = graph.EdgeBegin(hub) + k;
    graph.ResolveSources(list);
    for (uint64_t& id : list) id = maps.new_of[id];
    std::sort(list.begin(), list.end());
    for (uint64_t id : list) AppendNodeId(indices, id, node_id_bytes);
    written += list.size();
    indptr.AppendValue(written);
  }
  writer.Record(kHubIndptrFile, indptr.Finish());
  writer.Record(kHubIndicesFile, indices.Finish());
}

}  // namespace

void WritePartitionedLayout(const Dataset& input, const CscGraph& graph,
                            const Partitioning& partitioning, std::span<const uint64_t> hubs,
                            uint64_t row_pass_bytes, DatasetWriter& writer, MemoryBudget& budget,
                            ProgressBar* progress) {
  const DatasetMeta& in = input.meta();
  const uint32_t id_bytes = in.node_id_bytes;
  DatasetMeta& meta = writer.meta();
  meta.feature_dim = in.feature_dim;
  meta.feature_dtype = in.feature_dtype;
  meta.row_stride_bytes = in.row_stride_bytes;
  meta.num_classes = in.num_classes;
  meta.node_id_bytes = id_bytes;
  meta.train_size = in.train_size;
  meta.val_size = in.val_size;
  meta.test_size = in.test_size;
  meta.minor_version = kDatasetFormatMinorVersion;

  const IdMaps maps = Renumber(partitioning, budget);
  {
    FileWriter offsets(writer.PathOf(kPartitionOffsetsFile));
    offsets.Append(std::span<const uint64_t>(maps.offsets));
    writer.Record(kPartitionOffsetsFile, offsets.Finish());
    FileWriter input_ids(writer.PathOf(kPartitionOriginalIdsFile));
    for (uint64_t i = 0; i < maps.input_of.size(); ++i) {
      AppendNodeId(input_ids, maps.input_of[i], id_bytes);
    }
    writer.Record(kPartitionOriginalIdsFile, input_ids.Finish());
  }
  {
    const ChargedArray<int32_t> labels = input.ReadLabels(budget);
    FileWriter out(writer.PathOf(kLabelsFile));
    for (uint64_t i = 0; i < maps.input_of.size(); ++i) out.AppendValue(labels[maps.input_of[i]]);
    writer.Record(kLabelsFile, out.Finish());
  }
  for (Split split : kAllSplits) {
    std::vector<uint64_t> ids = input.ReadSplit(split);
    const HeldCharge ids_charge =
        HeldCharge::Take(budget, ids.capacity() * sizeof(uint64_t), "a split's node ids");
    for (uint64_t& id : ids) id = maps.new_of[id];
    std::sort(ids.begin(), ids.end());
    NodeBits seen(in.num_nodes, budget);
    SplitWriter out(writer.PathOf(SplitFile(split)), id_bytes, seen);
    for (uint64_t id : ids) out.Add(id);
    writer.Record(SplitFile(split), out.Finish());
  }

  // The hubs' new ids, ascending, and their input ids in the same order.
  ChargedArray<uint64_t> hub_ids(budget, hubs.size(), "the hubs' ids");
  ChargedArray<uint64_t> hub_inputs(budget, hubs.size(), "the hubs' ids");
  for (size_t i = 0; i < hubs.size(); ++i) hub_ids[i] = maps.new_of[hubs[i]];
  std::sort(hub_ids.data(), hub_ids.data() + hub_ids.size());
  for (size_t i = 0; i < hubs.size(); ++i) hub_inputs[i] = maps.input_of[hub_ids[i]];
  const std::span<const uint64_t> hub_id_span(hub_ids.data(), hub_ids.size());
  const std::span<const uint64_t> hub_input_span(hub_inputs.data(), hub_inputs.size());
  {
    FileWriter out(writer.PathOf(kHubIdsFile));
    for (uint64_t id : hub_id_span) AppendNodeId(out, id, id_bytes);
    writer.Record(kHubIdsFile, out.Finish());
  }
  WriteHubAdjacency(graph, maps, hub_input_span, id_bytes, writer, budget);

  WriteFeatureRows(input, maps, hub_id_span, hub_input_span, row_pass_bytes, writer, budget,
                   progress);
  if (progress) progress->Restart("writing topology", graph.num_edges());
  WriteTopology(graph, maps, id_bytes, writer, budget, progress);
}

}  // namespace strata
