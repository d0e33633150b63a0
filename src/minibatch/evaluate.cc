#include "minibatch/evaluate.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "common/interrupt.h"
#include "minibatch/layerwise_inference.h"
#include "strata/error.h"

namespace strata {
namespace {

struct EvalScratch {
  std::vector<float> features;
  TrackedCharge charge;
};

void EvaluateSeeds(Session& session, std::span<const uint64_t> seeds, uint64_t stream,
                   EvalScratch& scratch, AccuracyCount& total) {
  const TrainOptions& o = session.options();
  const bool full = o.sampling.eval_fanouts.empty();
  SampledBatch batch = full ? session.eval_sampler().SampleFullNeighborhood(seeds)
                            : session.eval_sampler().SampleSeeds(seeds, stream);
  const auto& inputs = batch.input_nodes();
  const uint64_t dim = session.dataset().meta().feature_dim;
  const uint64_t width = std::max<uint64_t>(
      dim, o.model.hidden * (o.model.kind == ModelKind::kGat ? o.model.heads : 1));
  const uint64_t feature_bytes = inputs.size() * dim * sizeof(float);
  const uint64_t activation_bytes = 2 * inputs.size() * width * sizeof(float);
  const uint64_t need = feature_bytes + activation_bytes;
  const uint64_t have =
      session.budget().available() + scratch.charge.bytes() + session.model().charged_bytes();
  if (need > have && seeds.size() > 1) {
    const size_t half = seeds.size() / 2;
    EvaluateSeeds(session, seeds.first(half), stream, scratch, total);
    EvaluateSeeds(session, seeds.subspan(half), stream, scratch, total);
    return;
  }
  if (full && seeds.size() == 1 && feature_bytes > have) {
    throw Error::Input(fmt::format(
        "evaluating node {} with its full {}-hop neighbourhood needs {} of input features, "
        "more than the memory budget leaves ({}); raise --memory-budget or sample "
        "evaluation neighbourhoods with --eval-fanouts",
        seeds[0], o.sampling.fanouts.size(), FormatBytes(feature_bytes), FormatBytes(have)));
  }
  scratch.charge.Update(feature_bytes);
  scratch.features.resize(inputs.size() * dim);
  session.store().Gather(inputs, scratch.features);
  AccuracyCount count = session.model().CountCorrect(batch, scratch.features);
  total.correct += count.correct;
  total.labelled += count.labelled;
  ThrowIfInterrupted();
}

}  // namespace

AccuracyCount EvaluateNodes(Session& session, std::span<const uint64_t> ids, uint32_t rank,
                            uint32_t ranks) {
  EvalScratch scratch{{}, TrackedCharge(session.budget(), "evaluation batch features")};
  AccuracyCount total;
  for (uint64_t first = rank * kEvalBatchSeeds; first < ids.size();
       first += ranks * kEvalBatchSeeds) {
    std::span<const uint64_t> seeds =
        ids.subspan(first, std::min(kEvalBatchSeeds, ids.size() - first));
    EvaluateSeeds(session, seeds, first / kEvalBatchSeeds, scratch, total);
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
  LayerwiseOptions options;
  options.scratch_dir = session.options().scratch_dir;
  options.half_on_disk = session.options().scratch_float16;
  const std::span<const int32_t> labels = session.model().labels();
  std::vector<AccuracyCount> counts(sorted.size());
  std::vector<int32_t> listed;  // a piece's labels, -1 for nodes not in the list
  RunLayerwise(
      session, all, options, [&](std::span<const uint64_t> ids, MatrixSpan<const float> logits) {
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
      });
  return counts;
}

}  // namespace strata
