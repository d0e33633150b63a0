#include "dataset/csc_writer.h"

#include <algorithm>

#include "common/interrupt.h"

namespace strata {

CscWriter::CscWriter(const std::string& indptr_path, const std::string& indices_path,
                     uint32_t node_id_bytes, bool add_self_loops)
    : indptr_(indptr_path),
      indices_(indices_path),
      node_id_bytes_(node_id_bytes),
      add_self_loops_(add_self_loops),
      self_loop_pending_(add_self_loops) {
  indptr_.AppendValue(uint64_t{0});
}

void CscWriter::CloseNode() {
  if (self_loop_pending_) WriteIndex(current_dst_);
  uint64_t degree = num_edges_ - node_start_;
  min_degree_ = std::min(min_degree_, degree);
  max_degree_ = std::max(max_degree_, degree);
  zero_degree_nodes_ += degree == 0;
  indptr_.AppendValue(num_edges_);
  node_start_ = num_edges_;
  ++current_dst_;
  self_loop_pending_ = add_self_loops_;
  // Long runs of nodes without edges write indptr without passing the merge's checks.
  if ((current_dst_ & 0xFFFFF) == 0) ThrowIfInterrupted();
}

CscBuildResult CscWriter::Finish(uint64_t num_nodes) {
  while (current_dst_ < num_nodes) CloseNode();
  CscBuildResult result;
  result.num_edges = num_edges_;
  result.in_degree.min = num_nodes == 0 ? 0 : min_degree_;
  result.in_degree.max = max_degree_;
  result.in_degree.mean = num_nodes == 0 ? 0 : static_cast<double>(num_edges_) / num_nodes;
  result.in_degree.zero_count = zero_degree_nodes_;
  result.indptr = indptr_.Finish();
  result.indices = indices_.Finish();
  return result;
}

}  // namespace strata
