// Block is one layer of a sampled mini-batch (DGL's message-flow graph): edges from source
// nodes to destination nodes, in local ids. The destination nodes are the first num_dst()
// source nodes, in the same order, so a layer's output rows for the destinations line up
// with the first rows of its input. Edges are stored as CSR by destination: the sources of
// destination d are indices[indptr[d] .. indptr[d + 1]).
//
// A SampledBatch holds the blocks of all layers, input layer first: blocks[l].num_dst() ==
// blocks[l + 1].num_src(), blocks.back()'s destinations are the seeds, and
// blocks.front()'s sources are the input nodes whose features the batch reads.
//
// edge_weights is empty (every edge counts once) or holds one weight per edge: LABOR's inverse
// inclusion probabilities, which the layers' estimators of the full neighbourhood use.
//
// Invariants: indptr.size() == num_dst() + 1, indptr.front() == 0, indptr.back() ==
// indices.size(); every index < num_src(); src_nodes holds distinct global ids;
// edge_weights.size() is 0 or indices.size(), every weight >= 1.
#pragma once

#include <cstdint>
#include <vector>

namespace strata {

struct Block {
  std::vector<uint64_t> src_nodes;  // global ids; the first dst_count are the destinations
  uint32_t dst_count = 0;
  std::vector<uint32_t> indptr;     // num_dst() + 1 offsets
  std::vector<uint32_t> indices;    // local source ids, < num_src()
  std::vector<float> edge_weights;  // empty, or one per edge

  uint32_t num_src() const { return static_cast<uint32_t>(src_nodes.size()); }
  uint32_t num_dst() const { return dst_count; }
  uint64_t num_edges() const { return indices.size(); }
};

struct SampledBatch {
  uint64_t epoch = 0;
  uint64_t index = 0;         // batch number within the epoch
  std::vector<Block> blocks;  // input layer first

  const std::vector<uint64_t>& input_nodes() const { return blocks.front().src_nodes; }
  // The seeds: the last block's destinations.
  std::vector<uint64_t> seeds() const {
    const Block& last = blocks.back();
    return {last.src_nodes.begin(), last.src_nodes.begin() + last.dst_count};
  }
};

}  // namespace strata
