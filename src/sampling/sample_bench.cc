#include "sampling/sample_bench.h"

#include <algorithm>
#include <chrono>
#include <iterator>

#include "strata/error.h"
#include "strata/graph.h"
#include "strata/neighbor_sampler.h"

namespace strata {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

nlohmann::ordered_json RunSampleBench(const SampleBenchOptions& o) {
  if (o.batches == 0) throw Error::Input("--batches must be positive");
  MemoryBudget budget(o.memory_budget_bytes);
  const Dataset dataset = Dataset::Open(o.dataset);
  const DatasetMeta& meta = dataset.meta();
  const auto load_start = std::chrono::steady_clock::now();
  CscGraph graph(dataset, budget);
  std::vector<uint64_t> train = dataset.ReadSplit(Split::kTrain);
  if (train.empty()) throw Error::Input("the dataset has no training nodes", o.dataset);
  const double load_s = SecondsSince(load_start);
  NeighborSampler sampler(graph, std::move(train), o.fanouts, o.batch_size, o.seed, budget,
                          o.threads);
  sampler.set_labor(o.labor);
  const uint64_t per_epoch = sampler.batches_per_epoch();
  // Shuffling an epoch happens once per epoch, not per batch, and the first batch also
  // allocates the sampler's scratch: keep both out of the timing.
  sampler.Sample(0, 0);

  const size_t layers = o.fanouts.size();
  std::vector<double> edges_per_block(layers, 0), sources_per_block(layers, 0);
  // Input rows shared with the batch before, over the batches that have one.
  std::vector<uint64_t> previous;
  double shared = 0, shared_of = 0;
  double input_nodes = 0;
  double edges = 0;
  double max_ms = 0;
  double timed_s = 0;
  for (uint64_t b = 0; b < o.batches; ++b) {
    const uint64_t epoch = b / per_epoch;
    if (epoch > 0 && b % per_epoch == 0) sampler.BatchSeeds(epoch, 0);
    const auto start = std::chrono::steady_clock::now();
    SampledBatch batch = sampler.Sample(epoch, b % per_epoch);
    const double s = SecondsSince(start);
    timed_s += s;
    max_ms = std::max(max_ms, s * 1e3);
    input_nodes += batch.input_nodes().size();
    std::vector<uint64_t> rows = batch.input_nodes();
    std::sort(rows.begin(), rows.end());
    if (b > 0) {
      std::vector<uint64_t> both;
      std::set_intersection(rows.begin(), rows.end(), previous.begin(), previous.end(),
                            std::back_inserter(both));
      shared += static_cast<double>(both.size());
      shared_of += static_cast<double>(rows.size());
    }
    previous = std::move(rows);
    for (size_t l = 0; l < layers; ++l) {
      sources_per_block[l] += batch.blocks[l].num_src();
      edges_per_block[l] += batch.blocks[l].num_edges();
      edges += batch.blocks[l].num_edges();
    }
  }
  const double n = static_cast<double>(o.batches);
  nlohmann::ordered_json report;
  report["dataset"] = o.dataset;
  report["num_nodes"] = meta.num_nodes;
  report["num_edges"] = meta.num_edges;
  report["fanouts"] = o.fanouts;
  report["batch_size"] = o.batch_size;
  report["batches"] = o.batches;
  report["threads"] = o.threads;
  report["load_s"] = load_s;
  report["seconds"] = timed_s;
  report["batches_per_s"] = n / timed_s;
  report["sampled_edges_per_s"] = edges / timed_s;
  report["sample_ms_mean"] = timed_s / n * 1e3;
  report["sample_ms_max"] = max_ms;
  report["input_nodes_per_batch_mean"] = input_nodes / n;
  report["edges_per_batch_mean"] = edges / n;
  for (double& e : edges_per_block) e /= n;
  for (double& e : sources_per_block) e /= n;
  report["sampler"] = o.labor.enabled ? "labor" : "neighbor";
  report["batch_dependency"] = o.labor.batch_dependency;
  report["labor_importance"] = o.labor.importance;  // -1: until convergence
  report["sources_per_block_mean"] = sources_per_block;
  report["edges_per_block_mean"] = edges_per_block;
  report["consecutive_input_overlap"] = shared_of > 0 ? shared / shared_of : 0.0;
  report["memory_budget_bytes"] = budget.limit();
  report["memory_charged_peak_bytes"] = budget.peak();
  report["peak_rss_bytes"] = PeakRssBytes();
  return report;
}

}  // namespace strata
