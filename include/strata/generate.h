// `strata generate`: synthetic datasets a GNN can learn, of any size, written through the
// same bounded-memory CSC builder as an import. Deterministic for a seed, whatever the thread
// count. See docs/format.md for what is written and README.md for the models.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "strata/dataset.h"

namespace strata {

enum class GraphModel { kSbm, kRmat, kHsbm };
GraphModel ParseGraphModel(std::string_view name);  // sbm | rmat | hsbm
std::string_view GraphModelName(GraphModel model);

struct GenerateOptions {
  std::string out;
  bool replace_existing = false;
  uint64_t nodes = 0;
  double avg_degree = 10;  // directed edges per node before deduplication
  uint64_t feature_dim = 64;
  uint32_t classes = 8;
  GraphModel graph = GraphModel::kSbm;
  uint64_t seed = 0;
  double homophily = 0.8;  // SBM: share of pairs inside one class; HSBM: its aim
  // HSBM: the share of the edges the planted blocks cut at 2, 4, 8, ... parts (each at least the
  // one before), what the hierarchy's upper levels are drawn to make (dataset/hsbm_model.h).
  std::vector<double> cuts = {0.05, 0.1, 0.15, 0.2, 0.25};
  double degree_exponent = 2.5;  // SBM, HSBM: power-law exponent of the degree distribution
  // HSBM: class k holds a share of the nodes proportional to (k + 1)^-class_skew (0: equal
  // classes), as real graphs' classes are uneven. At most 4.
  double class_skew = 0;
  // HSBM: this share of each leaf community, its lightest nodes, gets a label drawn at random
  // (dataset/hsbm_model.h); what keeps a GNN's accuracy below 100% as on real graphs.
  double label_noise = 0;
  // This share of the nodes, chosen by the seed, has no edges (pairs that would touch one are
  // drawn again), as real graphs have isolated nodes. At most 0.5.
  double isolated = 0;
  double noise = 1.0;  // feature noise standard deviation; centroids have norm ~1
  // HSBM, dense features: each community level below the class adds an offset of about this
  // norm, shared by the community's nodes (dataset/hsbm_model.h).
  double community_offset = 0;
  // > 0: dense binary bag-of-words features instead, this many ones per row, drawn from class
  // word distributions whose topic words are 1 + 1/noise times as likely as the background's
  // (dataset/binary_features.h).
  uint64_t binary_ones = 0;
  // > 0: sparse bag-of-words features stored as CSR (features/*.bin, format minor version 2),
  // round(density × feature_dim) ones per row, topic words a share 1 / (1 + noise) of them
  // (dataset/sparse_features.h). At most 1/8.
  double feature_density = 0;
  double train_ratio = 0.1, val_ratio = 0.05, test_ratio = 0.05;
  FeatureDtype feature_dtype = FeatureDtype::kFloat32;
  uint64_t memory_budget_bytes = 0;
  uint32_t node_id_bytes = 0;  // 0: automatic; 8 forces 8-byte ids (tests)
  unsigned threads = 0;        // 0: all hardware threads
  bool progress = false;       // on stderr: a bar on a terminal, else a line every 10 s
};

// Sets every option of `options` but out, nodes and what the run's machine decides (budget,
// threads, seed, dtype) to a hierarchical graph calibrated to a real one: "products"
// (ogbn-products), "papers100M" (ogbn-papers100M) or "arxiv" (ogbn-arxiv); README.md,
// "Generated data". Throws an input error naming --like for another name.
void ApplyGraphPreset(std::string_view name, GenerateOptions& options);

// Validates the options (input errors name the option), writes and publishes the dataset.
DatasetMeta GenerateDataset(const GenerateOptions& options);

}  // namespace strata
