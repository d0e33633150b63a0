// Importing the per-node arrays of a dataset, from .npy files or any sequence of values (an
// OGB CSV column): features [N, D] streamed into the aligned row layout, labels [N] as int32,
// and split id lists checked against N and for repeats. Each function validates shape and
// values, writes its file into the staging dataset, records its digest and fills its fields
// of meta.json.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "dataset/dataset_writer.h"
#include "dataset/node_bits.h"
#include "strata/dataset.h"
#include "strata/memory_budget.h"
#include "strata/npy.h"

namespace strata {

class FeatureWriter;

// Integers read in order, with where each one is for errors: an .npy array ("element [i]")
// or a column of a CSV file ("line i + 1").
struct IntColumn {
  using Visit = std::function<void(uint64_t index, int64_t value)>;
  std::string path;                            // as errors name the file
  std::function<void(const Visit&)> for_each;  // calls visit for every value in order
  std::function<std::string(uint64_t)> where;  // the position of value `index`
};
// The elements of a 1-D integer .npy array, which must outlive the column.
IntColumn NpyColumn(const NpyReader& array);

// Throws unless `features` is a 2-D floating-point array; returns its row count.
uint64_t CheckFeatureShape(const NpyReader& features);
// Throws unless `labels` is a 1-D integer array of `num_nodes` elements.
void CheckLabelShape(const NpyReader& labels, uint64_t num_nodes);

void ImportFeatures(const NpyReader& features, FeatureDtype dtype, MemoryBudget& budget,
                    DatasetWriter& writer);
// Writes empty features (feature_dim 0) for datasets given without them.
void WriteNoFeatures(MemoryBudget& budget, DatasetWriter& writer);

// Finishes `rows` (feature_dim `dim`, stored as `dtype`) into the dataset's features.
void RecordFeatures(FeatureWriter& rows, uint64_t dim, FeatureDtype dtype, DatasetWriter& writer);

// Labels are class ids >= 0 or -1 (unlabeled), exactly `num_nodes` of them.
void ImportLabels(const IntColumn& labels, uint64_t num_nodes, DatasetWriter& writer);
// All nodes unlabeled (-1), num_classes 0.
void WriteNoLabels(uint64_t num_nodes, DatasetWriter& writer);

// Throws unless `ids` is a 1-D integer array.
void CheckSplitShape(const NpyReader& ids);
// `ids` may be null for an empty split. `seen`: the nodes of the splits imported before, shared
// by the three calls for a dataset, so that a node in two splits is refused.
void ImportSplit(Split split, const IntColumn* ids, NodeBits& seen, DatasetWriter& writer);

}  // namespace strata
