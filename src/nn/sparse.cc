#include "nn/sparse.h"

#include <algorithm>
#include <string>

#include "strata/error.h"

namespace strata {

BlockCsr CsrOf(const Block& block) {
  if (block.indptr.size() != size_t{block.num_dst()} + 1 || block.indptr.front() != 0 ||
      block.indptr.back() != block.indices.size() || block.num_dst() > block.num_src() ||
      (!block.edge_weights.empty() && block.edge_weights.size() != block.indices.size())) {
    throw Error::Internal("malformed block: indptr of " + std::to_string(block.indptr.size()) +
                          " entries for " + std::to_string(block.num_dst()) + " destinations and " +
                          std::to_string(block.indices.size()) + " edges, " +
                          std::to_string(block.num_src()) + " sources, " +
                          std::to_string(block.edge_weights.size()) + " edge weights");
  }
  return {block.num_dst(), block.num_src(), block.indptr, block.indices, block.edge_weights};
}

void CheckCsr(const BlockCsr& graph) {
  if (graph.indptr.size() != size_t{graph.num_dst} + 1 || graph.indptr.front() != 0 ||
      graph.indptr.back() != graph.indices.size() || graph.num_dst > graph.num_src ||
      (!graph.weights.empty() && graph.weights.size() != graph.indices.size())) {
    throw Error::Internal("malformed CSR: indptr of " + std::to_string(graph.indptr.size()) +
                          " entries for " + std::to_string(graph.num_dst) + " destinations, " +
                          std::to_string(graph.weights.size()) + " edge weights");
  }
  for (uint32_t d = 0; d < graph.num_dst; ++d) {
    if (graph.indptr[d] > graph.indptr[d + 1]) {
      throw Error::Internal("malformed CSR: indptr decreases at destination " + std::to_string(d));
    }
  }
  for (uint64_t e = 0; e < graph.indices.size(); ++e) {
    if (graph.indices[e] >= graph.num_src) {
      throw Error::Internal("malformed CSR: edge " + std::to_string(e) + " names source " +
                            std::to_string(graph.indices[e]) + " >= num_src " +
                            std::to_string(graph.num_src));
    }
  }
}

void BlockCsc::Build(const BlockCsr& csr) {
  num_src = csr.num_src;
  num_dst = csr.num_dst;
  weights = csr.weights;
  indptr.assign(size_t{num_src} + 1, 0);
  for (uint32_t s : csr.indices) ++indptr[s + 1];
  for (uint32_t s = 0; s < num_src; ++s) indptr[s + 1] += indptr[s];
  dst.resize(csr.indices.size());
  edge.resize(csr.indices.size());
  // Walking edges in CSR order and appending to each source's bucket keeps every bucket
  // sorted by edge id. indptr[s] serves as the bucket's cursor and ends as its end, so a
  // final shift restores the starts.
  for (uint32_t d = 0; d < num_dst; ++d) {
    for (uint32_t e = csr.indptr[d]; e < csr.indptr[d + 1]; ++e) {
      uint32_t slot = indptr[csr.indices[e]]++;
      dst[slot] = d;
      edge[slot] = e;
    }
  }
  for (uint32_t s = num_src; s > 0; --s) indptr[s] = indptr[s - 1];
  indptr[0] = 0;
}

void SelfLoopCsr::Build(const BlockCsr& csr) {
  num_dst_ = csr.num_dst;
  num_src_ = csr.num_src;
  indptr_.resize(size_t{num_dst_} + 1);
  indices_.resize(csr.indices.size() + num_dst_);
  uint32_t out = 0;
  indptr_[0] = 0;
  for (uint32_t d = 0; d < num_dst_; ++d) {
    for (uint32_t e = csr.indptr[d]; e < csr.indptr[d + 1]; ++e) indices_[out++] = csr.indices[e];
    indices_[out++] = d;
    indptr_[d + 1] = out;
  }
}

}  // namespace strata
