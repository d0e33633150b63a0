// Importing the per-node arrays of a dataset from .npy files: features [N, D] streamed into
// the aligned row layout, labels [N] as int32, and split id lists checked against N and for
// repeats. Each function validates shape and values, writes its file into the staging
// dataset, records its digest and fills its fields of meta.json.
#pragma once

#include <cstdint>
#include <string>

#include "dataset/dataset_writer.h"
#include "strata/dataset.h"
#include "strata/memory_budget.h"
#include "strata/npy.h"

namespace strata {

// Throws unless `features` is a 2-D floating-point array; returns its row count.
uint64_t CheckFeatureShape(const NpyReader& features);
// Throws unless `labels` is a 1-D integer array of `num_nodes` elements.
void CheckLabelShape(const NpyReader& labels, uint64_t num_nodes);

void ImportFeatures(const NpyReader& features, FeatureDtype dtype, MemoryBudget& budget,
                    DatasetWriter& writer);
// Writes empty features (feature_dim 0) for datasets given without them.
void WriteNoFeatures(DatasetWriter& writer);

void ImportLabels(const NpyReader& labels, uint64_t num_nodes, DatasetWriter& writer);
// All nodes unlabeled (-1), num_classes 0.
void WriteNoLabels(uint64_t num_nodes, DatasetWriter& writer);

// `ids` may be null for an empty split.
void ImportSplit(Split split, const NpyReader* ids, uint64_t num_nodes, MemoryBudget& budget,
                 DatasetWriter& writer);

}  // namespace strata
