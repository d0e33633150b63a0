// EvaluateCheckpoint (strata/train.h): `strata eval`, the accuracy of a saved model on the
// validation and test splits, sampled or layer-wise, in a Session of its own.
#include <string>
#include <utility>
#include <vector>

#include "minibatch/evaluate.h"
#include "minibatch/session.h"
#include "strata/error.h"
#include "strata/train.h"
#include "train/training_checkpoint.h"

namespace strata {

EvalResult EvaluateCheckpoint(const TrainOptions& options) {
  TrainOptions o = options;
  const std::string path = CheckpointPath(o.checkpoint_dir);
  const CheckpointHeader header = ReadCheckpointHeader(path);
  o.model = header.model;
  if (o.sampling.fanouts.size() != o.model.layers || o.model.kind == ModelKind::kMlp) {
    o.sampling.fanouts = std::vector<int>(o.model.layers, o.model.kind == ModelKind::kMlp ? 0 : -1);
  }
  // Layer-wise evaluation reads each feature row once: the budget goes to its matrices rather
  // than to a feature cache.
  if (o.eval == EvalMode::kLayerwise) o.features.cache_fraction = 0;
  CheckTrainOptions(o);
  Dataset dataset = Dataset::Open(o.dataset);
  if (header.in_dim != dataset.meta().feature_dim ||
      header.num_classes != dataset.meta().num_classes) {
    throw Error::Input("the checkpoint was trained on a dataset of another shape", path);
  }
  Session session(o, std::move(dataset), /*training=*/false);
  RestoreModel(path, session.model().model().Parameters());
  EvalResult result;
  result.epoch = header.epochs_done;
  const std::vector<uint64_t>& val = session.split_ids(Split::kVal);
  const std::vector<uint64_t>& test = session.split_ids(Split::kTest);
  if (o.eval == EvalMode::kLayerwise) {
    const std::vector<AccuracyCount> counts = EvaluateLayerwise(session, {val, test});
    result.val_acc = counts[0].accuracy();
    result.test_acc = counts[1].accuracy();
    return result;
  }
  result.val_acc = EvaluateNodes(session, val).accuracy();
  result.test_acc = EvaluateNodes(session, test).accuracy();
  return result;
}

}  // namespace strata
