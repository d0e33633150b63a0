// A training run's checkpoint: DIR/checkpoint.bin, the model's parameters and the optimizer's
// state in the format of nn/checkpoint.h, with JSON metadata recording the epochs completed
// and the network's shape (kind, layers, hidden, heads, out_heads, in_dim, num_classes,
// optimizer), so that `strata eval` can rebuild the model before loading it and a resume can
// tell where to continue. Written atomically after every epoch.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "nn/model.h"
#include "nn/optimizer.h"
#include "nn/parameter.h"

namespace strata {

// DIR/checkpoint.bin.
std::string CheckpointPath(const std::string& dir);

struct CheckpointHeader {
  ModelOptions model;  // kind and widths; the dropout fields keep their defaults
  size_t in_dim = 0;
  size_t num_classes = 0;
  uint64_t epochs_done = 0;
};

// The metadata of the checkpoint at `path`; an input error when there is none or it is not
// a Strata checkpoint.
CheckpointHeader ReadCheckpointHeader(const std::string& path);

void SaveCheckpoint(const std::string& path, const ModelConfig& config,
                    std::span<const Parameter> params, Optimizer& optimizer, uint64_t epochs_done);

// Restores `params` (and the optimizer's state when it is non-null) from the checkpoint at
// `path`; returns the epochs it had completed.
uint64_t RestoreCheckpoint(const std::string& path, std::span<const Parameter> params,
                           Optimizer* optimizer);

}  // namespace strata
