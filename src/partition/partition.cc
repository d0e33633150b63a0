// PartitionDataset (include/strata/partition.h): open the input, assign partitions, score
// hubs, write the renumbered copy, record how good the partitioning is, publish.
#include "strata/partition.h"

#include <fmt/format.h>

#include <memory>

#include "common/clock.h"
#include "common/enum_names.h"
#include "common/progress.h"
#include "dataset/dataset_writer.h"
#include "partition/gap_partitioner.h"
#include "partition/hub_selection.h"
#include "partition/metis_partitioner.h"
#include "partition/partitioned_layout_writer.h"
#include "partition/random_partitioner.h"
#include "strata/error.h"
#include "strata/graph.h"

namespace strata {
namespace {

constexpr EnumNames<PartitionMethod, 3> kMethodNames("partitioning method",
                                                     {{{PartitionMethod::kGap, "gap"},
                                                       {PartitionMethod::kRandom, "random"},
                                                       {PartitionMethod::kMetis, "metis"}}});
constexpr EnumNames<MetisBalance, 3> kBalanceNames("METIS balance",
                                                   {{{MetisBalance::kNodes, "nodes"},
                                                     {MetisBalance::kTrain, "train"},
                                                     {MetisBalance::kClasses, "classes"}}});

void CheckOptions(const PartitionOptions& o, const DatasetMeta& input) {
  if (o.parts < 1 || o.parts > input.num_nodes) {
    throw Error::Input(fmt::format("--parts must be between 1 and the number of nodes ({}), not {}",
                                   input.num_nodes, o.parts));
  }
  if (o.balance != MetisBalance::kNodes && o.method != PartitionMethod::kMetis) {
    throw Error::Input("--balance is for --method metis");
  }
  if (!(o.hub_fraction >= 0 && o.hub_fraction < 1)) {
    throw Error::Input("--hubs must be a fraction in [0, 1)");
  }
  if (input.sparse_features) {
    throw Error::Input("has sparse (CSR) features; strata partition rewrites dense features only",
                       o.input);
  }
  if (input.partition) {
    throw Error::Input("the input is already partitioned; partition the original dataset", o.input);
  }
}

}  // namespace

PartitionMethod ParsePartitionMethod(std::string_view name) { return kMethodNames.Parse(name); }
MetisBalance ParseMetisBalance(std::string_view name) { return kBalanceNames.Parse(name); }
std::string_view PartitionMethodName(PartitionMethod method) { return kMethodNames.Name(method); }

DatasetMeta PartitionDataset(const PartitionOptions& o) {
  const uint64_t start_ns = MonotonicNs();
  const Dataset input = Dataset::Open(o.input);
  CheckOptions(o, input.meta());
  MemoryBudget budget(o.memory_budget_bytes);
  // Every pass streams the edges in order; the topology stays on disk when it does not fit,
  // and no adjacency cache is needed for sequential scans.
  TopologyOptions topology;
  topology.placement = TopologyPlacement::kAuto;
  topology.adjacency_cache_bytes = 0;
  const CscGraph graph(input, budget, topology);
  // The training split and the hubs are held to the end, through the passes that fill the
  // budget: charged, though read into vectors.
  const std::vector<uint64_t> train_ids = input.ReadSplit(Split::kTrain);
  const HeldCharge train_ids_charge =
      HeldCharge::Take(budget, train_ids.capacity() * sizeof(uint64_t), "the training split");
  std::unique_ptr<ProgressBar> progress;
  if (o.progress) progress = std::make_unique<ProgressBar>("partitioning", 0);

  Partitioning partitioning;
  PartitionQuality quality;
  double partitioner_seconds = 0;
  uint64_t partitioner_peak_rss = 0;
  {
    const ChargedArray<int32_t> labels = input.ReadLabels(budget);
    const std::span<const int32_t> label_span(labels.data(), labels.size());
    const uint32_t classes = input.meta().num_classes;
    // The label groups GAP balances and METIS's constraints are drawn from; random needs none.
    const ChargedArray<uint32_t> groups = o.method == PartitionMethod::kRandom
                                              ? ChargedArray<uint32_t>()
                                              : LabelGroups(label_span, train_ids, classes, budget);
    const std::span<const uint32_t> group_span(groups.data(), groups.size());
    if (o.method == PartitionMethod::kGap) {
      GapOptions gap;
      gap.parts = o.parts;
      gap.passes = o.passes;
      gap.cluster_rounds = o.cluster_rounds;
      gap.imbalance = o.imbalance;
      partitioning = GapPartition(graph, group_span, classes + 1, gap, budget, progress.get());
    } else if (o.method == PartitionMethod::kMetis) {
      partitioning = MetisPartition(graph, o.parts, o.balance, group_span, classes, o.seed, budget);
    } else {
      partitioning = RandomPartition(input.meta().num_nodes, o.parts, o.seed, budget);
    }
    partitioner_seconds = (MonotonicNs() - start_ns) * 1e-9;
    partitioner_peak_rss = PeakRssBytes();
    quality = MeasurePartitioning(graph, partitioning, label_span, train_ids, classes);
  }
  const uint64_t hub_count =
      static_cast<uint64_t>(o.hub_fraction * static_cast<double>(input.meta().num_nodes));
  const std::vector<uint64_t> hubs = SelectHubs(graph, partitioning, train_ids, hub_count,
                                                o.hub_walk_steps, budget, progress.get());
  const HeldCharge hubs_charge =
      HeldCharge::Take(budget, hubs.capacity() * sizeof(uint64_t), "the hubs");

  DatasetWriter writer(o.out, o.replace_existing, {o.input});
  writer.MakeSubdir("partition");
  WritePartitionedLayout(input, graph, partitioning, hubs, o.row_pass_bytes, writer, budget,
                         progress.get());
  PartitionMeta meta;
  meta.method = PartitionMethodName(o.method);
  meta.parts = o.parts;
  meta.hubs = hubs.size();
  meta.edge_cut_ratio = quality.edge_cut_ratio;
  meta.label_balance = quality.label_balance;
  meta.max_part_nodes = quality.max_part_nodes;
  meta.min_part_nodes = quality.min_part_nodes;
  meta.seconds = (MonotonicNs() - start_ns) * 1e-9;
  meta.peak_rss_bytes = PeakRssBytes();
  meta.partitioner_seconds = partitioner_seconds;
  meta.partitioner_peak_rss_bytes = partitioner_peak_rss;
  meta.source = input.dir();
  writer.meta().partition = meta;
  writer.Publish();
  if (progress) progress->Finish();
  return writer.meta();
}

}  // namespace strata
