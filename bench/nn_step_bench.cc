// One GraphSAGE training step (forward, loss, backward, Adam) on already-gathered inputs,
// shaped like the target: 3 layers, hidden 256, 128-dim input, fanouts 15,10,5
// (input layer first), batch 1000, 47 classes. Blocks are sampled uniformly without
// replacement from an implicit random graph of 2.45M nodes (ogbn-products' size; degrees
// 1..49) so that the unique node counts per layer are realistic (~1000 -> ~6k -> ~60k ->
// ~750k). Reports the step time, the share of it spent in GEMM, and the node counts.
//
// BM_FirstLayerAggregate compares the fused gather + mean aggregation that the first layer
// runs (Spmm over local ids) with the unfused form a tensor framework runs (materialise one
// row per edge, then segment-sum), to show the pass the fusion saves.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "common/random.h"
#include "nn/adam.h"
#include "nn/gemm.h"
#include "nn/loss.h"
#include "nn/model.h"
#include "nn/spmm.h"
#include "strata/block.h"

namespace strata {
namespace {

constexpr uint64_t kNumNodes = 2'450'000;
constexpr size_t kInDim = 128;
constexpr size_t kHidden = 256;
constexpr size_t kClasses = 47;
constexpr size_t kBatch = 1000;

uint64_t Degree(uint64_t v) { return 1 + MixSeed(v, ~uint64_t{0}) % 49; }
uint64_t Neighbor(uint64_t v, uint64_t j) { return MixSeed(v, j) % kNumNodes; }

struct SyntheticBatch {
  std::vector<Block> blocks;  // input layer first
  Matrix features;
  std::vector<int32_t> labels;
};

// Samples blocks from the output layer down, numbering sources as DGL does: destinations
// first, then new sources in order of first appearance.
SyntheticBatch MakeBatch(const std::vector<uint32_t>& fanouts, uint64_t seed) {
  Rng rng(seed);
  std::vector<uint64_t> dst(kBatch);
  for (auto& v : dst) v = rng.Below(kNumNodes);
  std::sort(dst.begin(), dst.end());
  dst.erase(std::unique(dst.begin(), dst.end()), dst.end());
  std::vector<int32_t> local(kNumNodes, -1);
  std::vector<Block> reversed;
  for (size_t l = fanouts.size(); l-- > 0;) {
    Block block;
    block.dst_count = static_cast<uint32_t>(dst.size());
    block.src_nodes = dst;
    for (uint32_t i = 0; i < dst.size(); ++i) local[dst[i]] = static_cast<int32_t>(i);
    block.indptr.push_back(0);
    std::vector<uint64_t> slots;
    for (uint64_t v : dst) {
      uint64_t degree = Degree(v);
      uint64_t take = std::min<uint64_t>(degree, fanouts[l]);
      slots.resize(degree);
      for (uint64_t j = 0; j < degree; ++j) slots[j] = j;
      for (uint64_t k = 0; k < take; ++k) {  // partial Fisher-Yates: distinct picks
        std::swap(slots[k], slots[k + rng.Below(degree - k)]);
        uint64_t u = Neighbor(v, slots[k]);
        if (local[u] < 0) {
          local[u] = static_cast<int32_t>(block.src_nodes.size());
          block.src_nodes.push_back(u);
        }
        block.indices.push_back(static_cast<uint32_t>(local[u]));
      }
      block.indptr.push_back(static_cast<uint32_t>(block.indices.size()));
    }
    for (uint64_t u : block.src_nodes) local[u] = -1;
    dst = block.src_nodes;
    reversed.push_back(std::move(block));
  }
  SyntheticBatch batch;
  batch.blocks.assign(reversed.rbegin(), reversed.rend());
  batch.features.Resize(batch.blocks[0].num_src(), kInDim);
  for (float& x : batch.features.values()) x = static_cast<float>(rng.Uniform() * 2 - 1);
  batch.labels.resize(batch.blocks.back().num_dst());
  for (auto& y : batch.labels) y = static_cast<int32_t>(rng.Below(kClasses));
  return batch;
}

const SyntheticBatch& TargetBatch() {
  static const SyntheticBatch batch = MakeBatch({15, 10, 5}, 1);
  return batch;
}

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void BM_SageStep(benchmark::State& state) {
  const SyntheticBatch& batch = TargetBatch();
  ModelConfig config;
  config.kind = ModelKind::kSage;
  config.in_dim = kInDim;
  config.hidden = kHidden;
  config.num_classes = kClasses;
  config.layers = 3;
  config.dropout = 0;  // as the PyTorch reference (shared/peers/torch_sage_step.py)
  config.threads = static_cast<unsigned>(state.range(0));
  Model model(config);
  Adam adam(model.Parameters(), {.lr = 1e-3});
  Matrix grad(batch.labels.size(), kClasses);
  double forward_s = 0, backward_s = 0, adam_s = 0;
  uint64_t step = 0;
  auto run_step = [&] {
    auto t0 = std::chrono::steady_clock::now();
    MatrixSpan<const float> logits =
        model.Forward(batch.blocks, batch.features.span(), {}, true, step++);
    SoftmaxCrossEntropy<float>(logits, batch.labels, grad.span());
    forward_s += Seconds(t0);
    auto t1 = std::chrono::steady_clock::now();
    model.Backward(grad.span());
    backward_s += Seconds(t1);
    auto t2 = std::chrono::steady_clock::now();
    adam.Step();
    adam_s += Seconds(t2);
  };
  run_step();  // warm-up: buffers reach their steady-state sizes
  forward_s = backward_s = adam_s = 0;
  ResetGemmCounters();
  double total_s = 0;
  for (auto _ : state) {
    auto start = std::chrono::steady_clock::now();
    run_step();
    total_s += Seconds(start);
  }
  GemmCounters gemm = ReadGemmCounters();
  const double n = static_cast<double>(state.iterations());
  state.counters["gemm_share"] = gemm.seconds / total_s;
  state.counters["gemm_gflops"] = static_cast<double>(gemm.flops) / gemm.seconds * 1e-9;
  state.counters["forward_ms"] = forward_s / n * 1e3;
  state.counters["backward_ms"] = backward_s / n * 1e3;
  state.counters["adam_ms"] = adam_s / n * 1e3;
  for (size_t l = 0; l < batch.blocks.size(); ++l) {
    state.counters["nodes_l" + std::to_string(l)] = batch.blocks[l].num_src();
  }
  state.counters["seeds"] = batch.blocks.back().num_dst();
}
BENCHMARK(BM_SageStep)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_FirstLayerAggregate(benchmark::State& state) {
  const SyntheticBatch& batch = TargetBatch();
  const Block& block = batch.blocks[0];
  const BlockCsr g = CsrOf(block);
  const bool fused = state.range(0) == 1;
  const unsigned threads = static_cast<unsigned>(state.range(1));
  Matrix out(block.num_dst(), kInDim);
  Matrix messages;  // unfused: one gathered row per edge
  for (auto _ : state) {
    if (fused) {
      Spmm<float>(g, Reduce::kMean, batch.features.span(), out.span(), threads);
    } else {
      messages.Resize(g.num_edges(), kInDim);
      for (uint64_t e = 0; e < g.num_edges(); ++e) {
        std::memcpy(messages.row(e), batch.features.row(g.indices[e]), kInDim * sizeof(float));
      }
      // The segment sum over consecutive message rows is an SpMM with identity indices.
      std::vector<uint32_t> identity(g.num_edges());
      for (uint32_t e = 0; e < identity.size(); ++e) identity[e] = e;
      BlockCsr segments{g.num_dst, static_cast<uint32_t>(g.num_edges()), g.indptr, identity, {}};
      Spmm<float>(segments, Reduce::kMean, messages.span(), out.span(), threads);
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * g.num_edges() * kInDim * sizeof(float));
  state.SetLabel(fused ? "fused gather+aggregate" : "gather, then aggregate");
}
BENCHMARK(BM_FirstLayerAggregate)
    ->Args({1, 1})
    ->Args({0, 1})
    ->Args({1, 2})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace strata
