// `strata import`: builds a dataset directory from NumPy arrays or a SNAP-style edge list,
// within a memory budget whatever the size of the graph, and publishes it atomically. Bad
// input throws an input error naming the file and the line or element; nothing is left
// behind on any failure.
#pragma once

#include <cstdint>
#include <string>

#include "strata/dataset.h"

namespace strata {

struct ImportOptions {
  std::string out;
  bool replace_existing = false;
  bool undirected = false;           // also add the reverse of every edge
  bool self_loops = false;           // give every node itself as an in-neighbour
  bool keep_parallel_edges = false;  // by default repeated (src, dst) pairs are merged
  FeatureDtype feature_dtype = FeatureDtype::kFloat32;
  uint64_t memory_budget_bytes = 0;
  uint32_t node_id_bytes = 0;  // 0: automatic; 8 forces 8-byte ids (tests)
  bool progress = false;
};

// Reads DIR/edge_index.npy ([2, E] integers, row 0 sources, row 1 destinations) and
// DIR/features.npy ([N, D] floats) or, when there is none, DIR/features.npz (a SciPy sparse
// [N, D] CSR or CSC matrix, stored as sparse features), and when present DIR/labels.npy ([N]
// integers, -1 for unlabeled) and DIR/{train,val,test}_idx.npy.
DatasetMeta ImportNpyDirectory(const std::string& npy_dir, const ImportOptions& options);

struct EdgeListSources {
  std::string edge_list;  // two integer ids per line, '#' comments, blank lines
  std::string features;   // optional [N, D] .npy, or .npz of scipy.sparse.save_npz; fixes N
  std::string labels;     // optional [N] .npy; fixes N when there are no features
  std::string split_dir;  // optional directory with {train,val,test}_idx.npy
};

// Without features or labels, N is the largest id in the edge list plus one.
DatasetMeta ImportEdgeList(const EdgeListSources& sources, const ImportOptions& options);

}  // namespace strata
