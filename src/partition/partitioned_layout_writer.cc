#include "partition/partitioned_layout_writer.h"

#include <algorithm>
#include <vector>

#include "common/interrupt.h"
#include "common/progress.h"
#include "dataset/build_common.h"
#include "dataset/csc_builder.h"
#include "dataset/feature_writer.h"
#include "dataset/split_writer.h"
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

// Gathers the input's rows of `ids` in that order into a features file at `path`.
FileDigest WriteRows(FeatureStore& store, const DatasetMeta& meta, std::span<const uint64_t> ids,
                     const std::string& path, MemoryBudget& budget, ProgressBar* progress) {
  FeatureWriter writer(path, meta.feature_dim, meta.feature_dtype);
  if (meta.feature_dim == 0) return writer.Finish();
  // A few MiB of rows per gather: enough for the engine's queue, little of the budget.
  const uint64_t chunk =
      std::clamp<uint64_t>((uint64_t{16} << 20) / (meta.feature_dim * 4), 64, 1 << 16);
  ChargedArray<float> rows(budget, chunk * meta.feature_dim, "partitioned feature rows");
  for (uint64_t first = 0; first < ids.size(); first += chunk) {
    const uint64_t count = std::min<uint64_t>(chunk, ids.size() - first);
    store.Gather(ids.subspan(first, count), {rows.data(), count * meta.feature_dim});
    writer.AppendRows({rows.data(), count * meta.feature_dim});
    if (progress) progress->Update(first + count);
    ThrowIfInterrupted();
  }
  return writer.Finish();
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
                       DatasetWriter& writer) {
  FileWriter indptr(writer.PathOf(kHubIndptrFile)), indices(writer.PathOf(kHubIndicesFile));
  uint64_t written = 0;
  indptr.AppendValue(written);
  std::vector<uint64_t> list;
  for (uint64_t hub : hub_inputs) {
    list.resize(graph.InDegree(hub));
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
                            DatasetWriter& writer, MemoryBudget& budget, ProgressBar* progress) {
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
    for (uint64_t& id : ids) id = maps.new_of[id];
    std::sort(ids.begin(), ids.end());
    SplitWriter out(writer.PathOf(SplitFile(split)), in.num_nodes, id_bytes, budget);
    for (uint64_t id : ids) out.Add(id);
    writer.Record(SplitFile(split), out.Finish());
  }

  std::vector<uint64_t> hub_ids;  // new ids, ascending, and the input ids in the same order
  for (uint64_t hub : hubs) hub_ids.push_back(maps.new_of[hub]);
  std::sort(hub_ids.begin(), hub_ids.end());
  std::vector<uint64_t> hub_inputs;
  for (uint64_t id : hub_ids) hub_inputs.push_back(maps.input_of[id]);
  {
    FileWriter out(writer.PathOf(kHubIdsFile));
    for (uint64_t id : hub_ids) AppendNodeId(out, id, id_bytes);
    writer.Record(kHubIdsFile, out.Finish());
  }
  WriteHubAdjacency(graph, maps, hub_inputs, id_bytes, writer);

  {
    std::unique_ptr<FeatureStore> store =
        OpenFeatureStore(input, FeatureStoreKind::kDirect, DirectStoreOptions{}, budget);
    if (progress) progress->Restart("writing features", in.num_nodes);
    writer.Record(kFeaturesFile, WriteRows(*store, in, {maps.input_of.data(), maps.input_of.size()},
                                           writer.PathOf(kFeaturesFile), budget, progress));
    writer.Record(kHubFeaturesFile, WriteRows(*store, in, hub_inputs,
                                              writer.PathOf(kHubFeaturesFile), budget, nullptr));
  }
  if (progress) progress->Restart("writing topology", graph.num_edges());
  WriteTopology(graph, maps, id_bytes, writer, budget, progress);
}

}  // namespace strata
