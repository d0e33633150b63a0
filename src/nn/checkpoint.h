// Checkpoints: a model's parameters and its optimizer's state in one self-checking binary
// blob, restored bit for bit. The layout (all integers little-endian):
//
//   "STRATACK"                                 8-byte magic
//   u32 version (1), u32 reserved (0)
//   u64 n, n bytes                             metadata: opaque to this code; the trainer
//                                              stores its config and epoch there as JSON
//   u32 count, count tensors                   the parameters, in Model::Parameters() order
//   u32 n, n bytes                             optimizer kind ("adam", "sgd"; "" if none)
//   u64 steps                                  optimizer step count
//   u32 count, count tensors                   optimizer state, in Optimizer::State() order
//   u64 xxh64 (seed 0) of every byte before it
//
//   tensor: u32 n, n bytes name, u64 rows, u64 cols, rows * cols float32
//
// Loading is all or nothing: the checksum, names, shapes and optimizer kind are verified
// before any value is copied, and a mismatch throws strata::Error (input) naming the file.
// Files are written atomically (a temporary sibling renamed into place), so a crash leaves
// the previous checkpoint intact.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nn/optimizer.h"
#include "nn/parameter.h"

namespace strata {

// optimizer may be null (no optimizer section: kind "", no state).
std::vector<std::byte> EncodeCheckpoint(std::span<const Parameter> params, Optimizer* optimizer,
                                        std::string_view metadata);

// Restores params (and the optimizer's state and step count when optimizer is non-null)
// from `bytes`; returns the metadata. `source` names the data in error messages.
std::string DecodeCheckpoint(std::span<const std::byte> bytes, std::span<const Parameter> params,
                             Optimizer* optimizer, std::string_view source = "checkpoint");

// The metadata alone, e.g. to rebuild the model's config before loading its parameters.
std::string DecodeCheckpointMetadata(std::span<const std::byte> bytes,
                                     std::string_view source = "checkpoint");

void WriteCheckpointFile(const std::string& path, std::span<const Parameter> params,
                         Optimizer* optimizer, std::string_view metadata);
std::string ReadCheckpointFile(const std::string& path, std::span<const Parameter> params,
                               Optimizer* optimizer);
std::string ReadCheckpointMetadata(const std::string& path);

}  // namespace strata
