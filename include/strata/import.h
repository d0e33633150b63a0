// `strata import`: builds a dataset directory from NumPy arrays, a SNAP-style edge list or an
// OGB download, within a memory budget whatever the size of the graph, and publishes it
// atomically. Bad input throws an input error naming the file and the line or element;
// nothing is left behind on any failure.
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
  bool progress = false;       // on stderr: a bar on a terminal, else a line every 10 s
};

// Reads DIR/edge_index.npy ([2, E] integers, row 0 sources, row 1 destinations) and
// DIR/features.npy ([N, D] floats) or, when there is none, DIR/features.npz (a SciPy sparse
// [N, D] CSR or CSC matrix, stored as sparse features), and when present DIR/labels.npy ([N]
// integers, -1 for unlabeled) and DIR/{train,val,test}_idx.npy. `npy_dir` may instead be an
// .npz archive holding the same arrays as members (numpy.savez or savez_compressed with those
// names; features dense): the dataset is the one the directory of its members gives, file for
// file.
DatasetMeta ImportNpyDirectory(const std::string& npy_dir, const ImportOptions& options);

struct EdgeListSources {
  std::string edge_list;  // two integer ids per line, '#' comments, blank lines
  std::string features;   // optional [N, D] .npy, or .npz of scipy.sparse.save_npz; fixes N
  std::string labels;     // optional [N] .npy; fixes N when there are no features
  std::string split_dir;  // optional directory with {train,val,test}_idx.npy
};

// Without features or labels, N is the largest id in the edge list plus one.
DatasetMeta ImportEdgeList(const EdgeListSources& sources, const ImportOptions& options);

// Reads an OGB node-property-prediction directory as the `ogb` package downloads it (one
// graph, one task): raw/edge.csv.gz, raw/num-node-list.csv.gz, raw/num-edge-list.csv.gz and
// optional raw/node-feat.csv.gz and raw/node-label.csv.gz, or their binary form raw/data.npz
// (edge_index, num_nodes_list, num_edges_list, optional node_feat) and raw/node-label.npz; and
// split/NAME/{train,valid,test}.csv.gz, NAME being `split_name` or else the only split. A NaN
// label is stored as -1 (unlabeled), and a split naming such a node is an input error. Gives
// the dataset that ImportNpyDirectory gives for the same arrays, file for file.
DatasetMeta ImportOgbDirectory(const std::string& dir, const std::string& split_name,
                               const ImportOptions& options);

}  // namespace strata
