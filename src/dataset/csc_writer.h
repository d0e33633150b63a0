// CscWriter receives edges sorted by (dst, src) and writes indptr.bin and indices.bin of the
// dataset format as they stream by, with the in-degree statistics. It can add a self loop to
// every node on the way, in its sorted place, without a second pass.
//
// Invariant: indptr entries are written for every destination up to the last one seen, so
// memory use does not depend on the number of nodes or edges.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "storage/file.h"
#include "strata/dataset.h"

namespace strata {

// What writing a CSC produced: the edge count after deduplication and self loops, the two
// files' digests and the in-degree statistics.
struct CscBuildResult {
  uint64_t num_edges = 0;
  FileDigest indptr;
  FileDigest indices;
  DegreeStats in_degree;
};

class CscWriter {
 public:
  CscWriter(const std::string& indptr_path, const std::string& indices_path, uint32_t node_id_bytes,
            bool add_self_loops);

  // Edges must arrive in non-decreasing (dst, src) order; repeats are written as they come.
  void Add(uint64_t dst, uint64_t src) {
    while (current_dst_ < dst) CloseNode();
    if (self_loop_pending_ && src >= dst) {
      self_loop_pending_ = false;
      if (src != dst) WriteIndex(dst);
    }
    WriteIndex(src);
  }

  // Closes every node below `num_nodes` and finishes both files.
  CscBuildResult Finish(uint64_t num_nodes);

 private:
  void WriteIndex(uint64_t id) {
    if (node_id_bytes_ == 4) {
      indices_.AppendValue(static_cast<uint32_t>(id));
    } else {
      indices_.AppendValue(id);
    }
    ++num_edges_;
  }
  void CloseNode();

  FileWriter indptr_;
  FileWriter indices_;
  uint32_t node_id_bytes_;
  bool add_self_loops_;
  bool self_loop_pending_;
  uint64_t current_dst_ = 0;
  uint64_t node_start_ = 0;
  uint64_t num_edges_ = 0;
  uint64_t min_degree_ = std::numeric_limits<uint64_t>::max();
  uint64_t max_degree_ = 0;
  uint64_t zero_degree_nodes_ = 0;
};

}  // namespace strata
