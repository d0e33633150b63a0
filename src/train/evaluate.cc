#include "train/evaluate.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "common/interrupt.h"
#include "strata/error.h"
#include "train/training_checkpoint.h"

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

AccuracyCount EvaluateNodes(Session& session, std::span<const uint64_t> ids) {
  EvalScratch scratch{{}, TrackedCharge(session.budget(), "evaluation batch features")};
  AccuracyCount total;
  for (uint64_t first = 0; first < ids.size(); first += kEvalBatchSeeds) {
    std::span<const uint64_t> seeds =
        ids.subspan(first, std::min(kEvalBatchSeeds, ids.size() - first));
    EvaluateSeeds(session, seeds, first / kEvalBatchSeeds, scratch, total);
  }
  return total;
}

EvalResult EvaluateCheckpoint(const TrainOptions& options) {
  TrainOptions o = options;
  const std::string path = CheckpointPath(o.checkpoint_dir);
  const CheckpointHeader header = ReadCheckpointHeader(path);
  o.model = header.model;
  if (o.sampling.fanouts.size() != o.model.layers) {
    o.sampling.fanouts = std::vector<int>(o.model.layers, -1);
  }
  CheckTrainOptions(o);
  Dataset dataset = Dataset::Open(o.dataset);
  if (header.in_dim != dataset.meta().feature_dim ||
      header.num_classes != dataset.meta().num_classes) {
    throw Error::Input("the checkpoint was trained on a dataset of another shape", path);
  }
  Session session(o, std::move(dataset));
  RestoreModel(path, session.model().model().Parameters());
  EvalResult result;
  result.epoch = header.epochs_done;
  result.val_acc = EvaluateNodes(session, session.split_ids(Split::kVal)).accuracy();
  result.test_acc = EvaluateNodes(session, session.split_ids(Split::kTest)).accuracy();
  return result;
}

}  // namespace strata
