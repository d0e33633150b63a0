// NeighborSampler on its hot path: one training batch of 1000 seeds with fanouts 15,10,5
// (GraphSAGE's usual setting) on a generated SBM graph of 200k nodes and average in-degree
// 20, sampled with 1 and 2 threads. Items are sampled edges; input_nodes is the batch's
// distinct input nodes, the rows a gather would read.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "strata/generate.h"
#include "strata/graph.h"
#include "strata/neighbor_sampler.h"

namespace strata {
namespace {

// The graph, generated once into a temporary directory removed at exit.
struct BenchGraph {
  BenchGraph() {
    char pattern[] = "/tmp/strata-sampler-bench-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir = pattern;
    GenerateOptions o;
    o.out = dir + "/g";
    o.nodes = 200000;
    o.avg_degree = 20;
    o.feature_dim = 4;
    o.classes = 8;
    o.seed = 1;
    o.memory_budget_bytes = uint64_t{512} << 20;
    GenerateDataset(o);
    const Dataset dataset = Dataset::Open(o.out);
    graph = std::make_unique<CscGraph>(dataset, budget);
    train = dataset.ReadSplit(Split::kTrain);
  }
  ~BenchGraph() {
    graph.reset();
    std::filesystem::remove_all(dir);
  }
  std::string dir;
  MemoryBudget budget{uint64_t{1} << 30};
  std::unique_ptr<CscGraph> graph;
  std::vector<uint64_t> train;
};

BenchGraph& Graph() {
  static BenchGraph graph;
  return graph;
}

void BM_NeighborSamplerBatch(benchmark::State& state) {
  BenchGraph& g = Graph();
  const unsigned threads = static_cast<unsigned>(state.range(0));
  NeighborSampler sampler(*g.graph, g.train, {15, 10, 5}, 1000, 7, g.budget, threads);
  const uint64_t per_epoch = sampler.batches_per_epoch();
  sampler.BatchSeeds(0, 0);  // the epoch's shuffle, once, outside the timing
  uint64_t b = 0;
  uint64_t edges = 0;
  uint64_t input_nodes = 0;
  for (auto _ : state) {
    SampledBatch batch = sampler.Sample(0, b++ % per_epoch);
    for (const Block& block : batch.blocks) edges += block.num_edges();
    input_nodes += batch.input_nodes().size();
    benchmark::DoNotOptimize(batch);
  }
  state.SetItemsProcessed(static_cast<int64_t>(edges));
  state.counters["input_nodes"] =
      benchmark::Counter(double(input_nodes), benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_NeighborSamplerBatch)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace strata
