// Checkpoints: a model's parameters and its optimizer's state in one self-checking binary
// blob, restored bit for bit. The layout (all integers little-endian):
//
//   "STRATACK"                                 8-byte magic
//   u32 version (2), u32 reserved (0)
//   u64 n, n bytes                             metadata: opaque to this code; the trainer
//                                              stores its config and epoch there as JSON
//   u32 count, count tensors                   the parameters, in Model::Parameters() order
//   u32 n, n bytes                             optimizer kind ("adam", "sgd"; "" if none)
//   u64 steps                                  optimizer step count
//   u32 count, count tensors                   optimizer state, in Optimizer::State() order
//   u32 count, count tensors                   a snapshot of parameters kept with the run (the
//                                              best-validation model); version 2 only, may be 0
//   u64 xxh64 (seed 0) of every byte before it
//
//   tensor: u32 n, n bytes name, u64 rows, u64 cols, rows * cols float32
//
// Loading is all or nothing: the checksum, names, shapes and optimizer kind are verified
// before any value is copied, and a mismatch throws strata::Error (input) naming the file.
// Files are written crash-consistently: to a temporary sibling, fsynced, renamed into place and
// the directory fsynced, so a crash at any moment leaves the previous checkpoint or the new one.
// Version 1 files (no snapshot section) are still read.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nn/optimizer.h"
#include "nn/parameter.h"

namespace strata {

// optimizer may be null (no optimizer section: kind "", no state); snapshot may be empty.
std::vector<std::byte> EncodeCheckpoint(std::span<const Parameter> params, Optimizer* optimizer,
                                        std::string_view metadata,
                                        std::span<const Parameter> snapshot = {});

// Restores params (and the optimizer's state and step count when optimizer is non-null)
// from `bytes`; returns the metadata. `source` names the data in error messages. A non-empty
// `snapshot` is restored too when the file has one (it is left as it is when the file's
// snapshot section is empty, and then *snapshot_restored, when given, is false); a file's
// snapshot is ignored when `snapshot` is empty.
std::string DecodeCheckpoint(std::span<const std::byte> bytes, std::span<const Parameter> params,
                             Optimizer* optimizer, std::string_view source = "checkpoint",
                             std::span<const Parameter> snapshot = {},
                             bool* snapshot_restored = nullptr);

// The metadata alone, e.g. to rebuild the model's config before loading its parameters.
std::string DecodeCheckpointMetadata(std::span<const std::byte> bytes,
                                     std::string_view source = "checkpoint");

void WriteCheckpointFile(const std::string& path, std::span<const Parameter> params,
                         Optimizer* optimizer, std::string_view metadata,
                         std::span<const Parameter> snapshot = {});
std::string ReadCheckpointFile(const std::string& path, std::span<const Parameter> params,
                               Optimizer* optimizer, std::span<const Parameter> snapshot = {});
std::string ReadCheckpointMetadata(const std::string& path);

}  // namespace strata
