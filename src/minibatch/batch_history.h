// BatchHistory is a batch's share of partition-based sampling's historical embeddings
// (multistage/history_table.h): for each hidden layer, the input rows the step takes from the
// table and the rows it computes afresh, which Commit hands back after the step. The source
// that sampled the batch fills it; the training step uses it.
//
// Invariants: layers.size() is the model's hidden layers (layers[l - 1] for layer l's input);
// Commit follows the Forward that filled the fresh rows.
#pragma once

#include <cstdint>
#include <vector>

#include "nn/hidden_history.h"

namespace strata {

class BatchHistory {
 public:
  virtual ~BatchHistory() = default;

  // Stores the fresh rows of every layer where the source keeps them; later calls do nothing.
  virtual void Commit() = 0;

  std::vector<HiddenHistory<float>> layers;
  uint64_t width = 0;  // values of a row of any of them
};

}  // namespace strata
