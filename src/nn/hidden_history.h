// HiddenHistory is what one hidden layer's input exchanges with a table of historical
// embeddings (GNNAutoScale; Joestar's partition-based sampling, T. Huang, MIT PhD thesis, 2025,
// §5.2.2): some input rows are not computed but taken from the table (stale: the nodes whose
// neighbourhoods the batch does not hold), and some freshly computed rows are handed back to
// it. A history row is the layer's input as evaluation computes it: the activation of the layer
// below's output, without dropout.
//
// Invariants: stale and fresh are disjoint row numbers of the layer's input; stale_rows holds
// stale.size() rows of the layer's input width, and Forward makes fresh_rows hold fresh.size().
#pragma once

#include <cstdint>
#include <vector>

namespace strata {

template <typename T>
struct HiddenHistory {
  std::vector<uint32_t> stale;
  std::vector<T> stale_rows;
  std::vector<uint32_t> fresh;
  std::vector<T> fresh_rows;  // written by BasicModel::Forward
};

}  // namespace strata
