#include "train/training_checkpoint.h"

#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/json_fields.h"
#include "nn/checkpoint.h"
#include "storage/file.h"
#include "strata/dataset.h"
#include "strata/error.h"

namespace strata {
namespace {

// The metadata SaveCheckpoint writes. A checkpoint is user input: metadata that is not that
// JSON is an input error naming the file, not an escaped nlohmann exception.
template <typename Fn>
auto ReadMetadata(const std::string& path, Fn read) {
  try {
    return read();
  } catch (const nlohmann::json::exception& e) {
    throw Error::Input(fmt::format("bad checkpoint metadata: {}", e.what()), path);
  }
}

nlohmann::json ParseMetadata(const std::string& text, const std::string& path) {
  return ReadMetadata(path, [&] { return nlohmann::json::parse(text); });
}

CheckpointHeader HeaderOf(const nlohmann::json& meta, const std::string& path) {
  return ReadMetadata(path, [&] {
    CheckpointHeader header;
    header.model.kind = ParseModelKind(meta.at("model").get<std::string>());
    header.model.layers = IntegerField<size_t>(meta, "layers", path);
    header.model.hidden = IntegerField<size_t>(meta, "hidden", path);
    header.model.heads = IntegerField<size_t>(meta, "heads", path);
    header.model.out_heads = IntegerField<size_t>(meta, "out_heads", path);
    // Checkpoints from before these options had biases and ReLU.
    header.model.bias = meta.value("bias", true);
    header.model.activation = ParseActivation(meta.value("activation", std::string("relu")));
    header.in_dim = IntegerField<size_t>(meta, "in_dim", path);
    header.num_classes = IntegerField<size_t>(meta, "num_classes", path);
    header.epochs_done = IntegerField<uint64_t>(meta, "epochs_done", path);
    return header;
  });
}

// The shape as a user would type it, to say what differs.
std::string DescribeShape(const ModelOptions& m, size_t in_dim, size_t num_classes) {
  const std::string heads =
      m.kind == ModelKind::kGat ? fmt::format(", heads {}/{}", m.heads, m.out_heads) : "";
  return fmt::format("{} with {} layers of {}{}, bias {}, {}, {} inputs, {} classes",
                     ModelKindName(m.kind), m.layers, m.hidden, heads, m.bias ? "on" : "off",
                     ActivationName(m.activation), in_dim, num_classes);
}

// Refuses a checkpoint of another network, dataset or seed, naming what differs.
void CheckSameRun(const std::string& path, const nlohmann::json& meta, const CheckpointHeader& h,
                  const ModelConfig& c, const RunIdentity& identity) {
  const std::string written = DescribeShape(h.model, h.in_dim, h.num_classes);
  const std::string asked = DescribeShape(c, c.in_dim, c.num_classes);
  if (written != asked) {
    throw Error::Input(
        fmt::format("the checkpoint holds a {}; this run asks for a {}", written, asked), path);
  }
  // Checkpoints written before the identity was recorded are taken as they are.
  if (!meta.contains("dataset_meta_xxh64")) return;
  const auto dataset = IntegerField<uint64_t>(meta, "dataset_meta_xxh64", path);
  if (dataset != identity.dataset_meta_xxh64) {
    throw Error::Input(fmt::format("the checkpoint was written for another dataset (meta.json "
                                   "xxh64 {:016x}, this one's is {:016x})",
                                   dataset, identity.dataset_meta_xxh64),
                       path);
  }
  const auto seed = IntegerField<uint64_t>(meta, "seed", path);
  if (seed != identity.seed) {
    throw Error::Input(
        fmt::format("the checkpoint was written with --seed {}, this run has --seed {}", seed,
                    identity.seed),
        path);
  }
}

}  // namespace

std::string CheckpointPath(const std::string& dir) {
  return (std::filesystem::path(dir) / "checkpoint.bin").string();
}

RunIdentity IdentifyRun(const std::string& dataset_dir, uint64_t seed) {
  return {DigestFile((std::filesystem::path(dataset_dir) / kMetaFile).string()).xxh64, seed};
}

CheckpointHeader ReadCheckpointHeader(const std::string& path) {
  if (!std::filesystem::exists(path)) throw Error::Input("no checkpoint found", path);
  return HeaderOf(ParseMetadata(ReadCheckpointMetadata(path), path), path);
}

void SaveCheckpoint(const std::string& path, const ModelConfig& c,
                    std::span<const Parameter> params, Optimizer& optimizer, uint64_t epochs_done,
                    const RunIdentity& identity, const BestModel* best) {
  nlohmann::ordered_json meta = {{"epochs_done", epochs_done},
                                 {"model", std::string(ModelKindName(c.kind))},
                                 {"layers", c.layers},
                                 {"hidden", c.hidden},
                                 {"heads", c.heads},
                                 {"out_heads", c.out_heads},
                                 {"bias", c.bias},
                                 {"activation", std::string(ActivationName(c.activation))},
                                 {"in_dim", c.in_dim},
                                 {"num_classes", c.num_classes},
                                 {"optimizer", std::string(optimizer.kind())},
                                 {"dataset_meta_xxh64", identity.dataset_meta_xxh64},
                                 {"seed", identity.seed}};
  if (best != nullptr) {
    meta["best_epoch"] = best->epoch;
    meta["best_val_acc"] = best->val_acc;
  }
  WriteCheckpointFile(path, params, &optimizer, meta.dump(),
                      best != nullptr ? best->params : std::span<const Parameter>());
}

ResumePoint ResumeCheckpoint(const std::string& path, const ModelConfig& config,
                             std::span<const Parameter> params, Optimizer& optimizer,
                             const RunIdentity& identity,
                             std::span<const Parameter> best_snapshot) {
  if (!std::filesystem::exists(path)) throw Error::Input("no checkpoint found", path);
  // One read: the checks and the values come from the same bytes, whatever replaces the file.
  const std::string text = ReadWholeFile(path);
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(text.data()),
                                         text.size());
  const nlohmann::json meta = ParseMetadata(DecodeCheckpointMetadata(bytes, path), path);
  const CheckpointHeader header = HeaderOf(meta, path);
  ReadMetadata(path, [&] { CheckSameRun(path, meta, header, config, identity); });
  const bool has_best = meta.contains("best_epoch");
  bool best_restored = false;
  DecodeCheckpoint(bytes, params, &optimizer, path,
                   has_best ? best_snapshot : std::span<const Parameter>(), &best_restored);
  ResumePoint point;
  point.epochs_done = header.epochs_done;
  if (has_best) {
    const auto best_epoch = IntegerField<uint64_t>(meta, "best_epoch", path);
    if (!best_restored || best_epoch >= header.epochs_done) {
      throw Error::Input(fmt::format("bad checkpoint: best epoch {} of {} without its parameters "
                                     "or after the last epoch",
                                     best_epoch, header.epochs_done),
                         path);
    }
    point.best = BestModel{
        best_epoch, ReadMetadata(path, [&] { return meta.at("best_val_acc").get<double>(); }),
        best_snapshot};
  }
  return point;
}

uint64_t RestoreModel(const std::string& path, std::span<const Parameter> params) {
  return HeaderOf(ParseMetadata(ReadCheckpointFile(path, params, nullptr), path), path).epochs_done;
}

}  // namespace strata
