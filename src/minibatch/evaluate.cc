#include "minibatch/evaluate.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "common/interrupt.h"
#include "minibatch/batch_bound.h"
#include "minibatch/layerwise_inference.h"
#include "minibatch/memory_plan.h"
#include "strata/error.h"

namespace strata {
namespace {

// One evaluation batch, its blocks and input features charged to the run's batch reserve,
// which the memory plan sized for the largest batch of this many seeds.
void EvaluateBatch(Session& session, std::span<const uint64_t> seeds, uint64_t stream,
                   AccuracyCount& total) {
  // Every neighbour at every layer (the default but for an MLP) is one full-neighbourhood batch.
  const TrainOptions& o = session.options();
  const std::vector<int> fanouts = EvalFanouts(o.sampling, o.model.kind);
  const bool full = std::all_of(fanouts.begin(), fanouts.end(), [](int f) { return f < 0; });
  const SampledBatch batch = full ? session.eval_sampler().SampleFullNeighborhood(seeds)
                                  : session.eval_sampler().SampleSeeds(seeds, stream);
  MemoryBudget& reserve = session.batch_reserve();
  const uint64_t block_bytes = BlockBytes(batch);
  reserve.Charge(block_bytes, "an evaluation batch's blocks");
  const HeldCharge blocks(reserve, block_bytes);
  const auto& inputs = batch.input_nodes();
  ChargedArray<float> features(reserve, inputs.size() * session.dataset().meta().feature_dim,
                               "evaluation batch features");
  session.store().Gather(inputs, {features.data(), features.size()});
  const AccuracyCount count =
      session.model().CountCorrect(batch, {features.data(), features.size()});
  total.correct += count.correct;
  total.labelled += count.labelled;
  ThrowIfInterrupted();
}

}  // namespace

AccuracyCount EvaluateNodes(Session& session, std::span<const uint64_t> ids, uint32_t rank,
                            uint32_t ranks) {
  const uint64_t per_batch = session.memory_plan().eval_seeds;
  if (per_batch == 0) throw Error::Internal("the run planned no sampled evaluation");
  AccuracyCount total;
  for (uint64_t first = rank * kEvalBatchSeeds; first < ids.size();
       first += ranks * kEvalBatchSeeds) {
    // A chunk's stream numbers its sampled neighbourhoods, whatever batches it is cut into.
    const std::span<const uint64_t> chunk =
        ids.subspan(first, std::min(kEvalBatchSeeds, ids.size() - first));
    for (uint64_t at = 0; at < chunk.size(); at += per_batch) {
      EvaluateBatch(session, chunk.subspan(at, std::min(per_batch, chunk.size() - at)),
                    first / kEvalBatchSeeds, total);
    }
  }
  return total;
}

std::vector<AccuracyCount> EvaluateLayerwise(
    Session& session, std::initializer_list<std::span<const uint64_t>> node_lists) {
  std::vector<std::vector<uint64_t>> sorted;
  std::vector<uint64_t> all;
  for (std::span<const uint64_t> ids : node_lists) {
    sorted.emplace_back(ids.begin(), ids.end());
    std::sort(sorted.back().begin(), sorted.back().end());
    all.insert(all.end(), ids.begin(), ids.end());
  }
  const LayerwiseOptions options = LayerwiseOptionsOf(session);
  const std::span<const int32_t> labels = session.model().labels();
  std::vector<AccuracyCount> counts(sorted.size());
  std::vector<int32_t> listed;  // a piece's labels, -1 for nodes not in the list
  auto score = [&](std::span<const uint64_t> ids, MatrixSpan<const float> logits) {
    for (size_t list = 0; list < sorted.size(); ++list) {
      listed.resize(ids.size());
      for (size_t i = 0; i < ids.size(); ++i) {
        const bool in = std::binary_search(sorted[list].begin(), sorted[list].end(), ids[i]);
        listed[i] = in ? labels[ids[i]] : -1;
      }
      const AccuracyCount count = CountCorrect(logits, listed);
      counts[list].correct += count.correct;
      counts[list].labelled += count.labelled;
    }
  };
  // No batch is in flight while layer-wise evaluation runs, so the batches' reserve (three of
  // the largest training batches) and the model's unused plan are room for its sums: fewer
  // passes over the features.
  session.LendTrainingMemory();
  try {
    RunLayerwise(session, all, options, score);
  } catch (...) {
    session.ReclaimTrainingMemory();
    throw;
  }
  session.ReclaimTrainingMemory();
  return counts;
}

}  // namespace strata
