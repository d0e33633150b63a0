// A training run's checkpoint: DIR/checkpoint.bin, the model's parameters, the optimizer's
// state and the best-validation model so far, in the format of nn/checkpoint.h, with JSON
// metadata recording the epochs completed, the network's shape (kind, layers, hidden, heads,
// out_heads, bias, activation, in_dim, num_classes, optimizer) and the run's identity (the
// dataset's meta.json digest and the seed), so that `strata eval` can rebuild the model before
// loading it and a resume can tell where to continue — and refuse to continue another run.
// Written crash-consistently after every epoch.
//
// A resume continues the run exactly: every random stream (sampling, dropout) is derived from
// (seed, epoch, ...), so the parameters, the optimizer's moments and step count, the epoch and
// the best-validation model are all the state there is.
#pragma once

#include <cstdint>
#include <optional>
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

// What a resume must match: the same dataset (by the xxh64 of its meta.json, which records
// every file's digest) and the same seed.
struct RunIdentity {
  uint64_t dataset_meta_xxh64 = 0;
  uint64_t seed = 0;
};

// The identity of a run of `seed` on the dataset in `dataset_dir`.
RunIdentity IdentifyRun(const std::string& dataset_dir, uint64_t seed);

// The best-validation model so far: its epoch, accuracy and parameters.
struct BestModel {
  uint64_t epoch = 0;
  double val_acc = 0;
  std::span<const Parameter> params;
};

// The metadata of the checkpoint at `path`; an input error when there is none or it is not
// a Strata checkpoint.
CheckpointHeader ReadCheckpointHeader(const std::string& path);

// `best` may be null (no epoch evaluated yet).
void SaveCheckpoint(const std::string& path, const ModelConfig& config,
                    std::span<const Parameter> params, Optimizer& optimizer, uint64_t epochs_done,
                    const RunIdentity& identity, const BestModel* best);

struct ResumePoint {
  uint64_t epochs_done = 0;
  // With its params restored into the snapshot given; empty when the checkpoint has none.
  std::optional<BestModel> best;
};

// Continues the run of the checkpoint at `path`: refuses (input error, one line naming the
// file) a checkpoint of another model shape, dataset or seed, then restores `params`, the
// optimizer's state and, into `best_snapshot`, the best-validation model.
ResumePoint ResumeCheckpoint(const std::string& path, const ModelConfig& config,
                             std::span<const Parameter> params, Optimizer& optimizer,
                             const RunIdentity& identity, std::span<const Parameter> best_snapshot);

// Restores the parameters alone (evaluation); returns the epochs the checkpoint had completed.
uint64_t RestoreModel(const std::string& path, std::span<const Parameter> params);

}  // namespace strata
