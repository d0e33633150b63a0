#include "train/training_checkpoint.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "nn/checkpoint.h"
#include "strata/error.h"

namespace strata {

std::string CheckpointPath(const std::string& dir) {
  return (std::filesystem::path(dir) / "checkpoint.bin").string();
}

CheckpointHeader ReadCheckpointHeader(const std::string& path) {
  if (!std::filesystem::exists(path)) throw Error::Input("no checkpoint found", path);
  const nlohmann::json meta = nlohmann::json::parse(ReadCheckpointMetadata(path));
  CheckpointHeader header;
  header.model.kind = ParseModelKind(meta.at("model").get<std::string>());
  header.model.layers = meta.at("layers").get<size_t>();
  header.model.hidden = meta.at("hidden").get<size_t>();
  header.model.heads = meta.at("heads").get<size_t>();
  header.model.out_heads = meta.at("out_heads").get<size_t>();
  // Checkpoints from before these options had biases and ReLU.
  header.model.bias = meta.value("bias", true);
  header.model.activation = ParseActivation(meta.value("activation", std::string("relu")));
  header.in_dim = meta.at("in_dim").get<size_t>();
  header.num_classes = meta.at("num_classes").get<size_t>();
  header.epochs_done = meta.at("epochs_done").get<uint64_t>();
  return header;
}

void SaveCheckpoint(const std::string& path, const ModelConfig& c,
                    std::span<const Parameter> params, Optimizer& optimizer, uint64_t epochs_done) {
  const nlohmann::ordered_json meta = {{"epochs_done", epochs_done},
                                       {"model", std::string(ModelKindName(c.kind))},
                                       {"layers", c.layers},
                                       {"hidden", c.hidden},
                                       {"heads", c.heads},
                                       {"out_heads", c.out_heads},
                                       {"bias", c.bias},
                                       {"activation", std::string(ActivationName(c.activation))},
                                       {"in_dim", c.in_dim},
                                       {"num_classes", c.num_classes},
                                       {"optimizer", std::string(optimizer.kind())}};
  WriteCheckpointFile(path, params, &optimizer, meta.dump());
}

uint64_t RestoreCheckpoint(const std::string& path, std::span<const Parameter> params,
                           Optimizer* optimizer) {
  const std::string text = ReadCheckpointFile(path, params, optimizer);
  return nlohmann::json::parse(text).at("epochs_done").get<uint64_t>();
}

}  // namespace strata
