#include "fullgraph/csr_files.h"

#include <fmt/format.h>

#include <limits>
#include <vector>

#include "fullgraph/propagation.h"
#include "storage/file.h"
#include "strata/error.h"

namespace strata {

ChargedArray<uint64_t> ReadRowOffsets(const std::string& path, uint64_t rows, uint64_t end,
                                      MemoryBudget& budget, std::string_view what) {
  ChargedArray<uint64_t> offsets(budget, rows + 1, what);
  ReadArrayFile(path, offsets.data(), rows + 1);
  CheckRowOffsets({offsets.data(), rows + 1}, 0, rows, end, path);
  return offsets;
}

ChargedCsr ReadNormalisedAdjacency(const Dataset& dataset, uint64_t rows, MemoryBudget& budget) {
  const DatasetMeta& meta = dataset.meta();
  const uint64_t n = meta.num_nodes;
  // CsrView's column ids are 32-bit.
  if (n > std::numeric_limits<uint32_t>::max()) {
    throw Error::Input(fmt::format("{} nodes do not fit Â's 32-bit column ids", n), dataset.dir());
  }
  const ChargedArray<uint64_t> indptr =
      ReadRowOffsets(dataset.PathOf(kIndptrFile), n, meta.num_edges, budget, "the graph's indptr");
  ChargedArray<float> norm(budget, n, "GCN normalisation");
  GcnNormalisation({indptr.data(), n + 1}, {norm.data(), n});
  const uint32_t width = meta.node_id_bytes;
  const uint64_t edges = indptr[rows];
  ChargedArray<std::byte> ids(budget, edges * width, "the adjacency's ids");
  ReadArrayFile(dataset.PathOf(kIndicesFile), ids.data(), edges * width);

  ChargedCsr a;
  a.rows = rows;
  a.cols = n;
  a.indptr = ChargedArray<uint64_t>(budget, rows + 1, "Â's offsets");
  a.indices = ChargedArray<uint32_t>(budget, rows + edges, "Â's column ids");
  a.values = ChargedArray<float>(budget, rows + edges, "Â's values");
  uint64_t k = 0;
  a.indptr[0] = 0;
  for (uint64_t i = 0; i < rows; ++i) {
    bool self = false;
    for (uint64_t e = indptr[i]; e < indptr[i + 1]; ++e) {
      const uint64_t j = LoadNodeId(ids.data() + e * width, width);
      if (j >= n) {
        throw Error::Input(fmt::format("node id {} in row {} is >= num_nodes {}", j, i, n),
                           dataset.PathOf(kIndicesFile));
      }
      if (!self && j >= i) {
        a.indices[k] = static_cast<uint32_t>(i);
        a.values[k++] = norm[i] * norm[i];
        self = true;
      }
      a.indices[k] = static_cast<uint32_t>(j);
      a.values[k++] = norm[i] * norm[j];
    }
    if (!self) {
      a.indices[k] = static_cast<uint32_t>(i);
      a.values[k++] = norm[i] * norm[i];
    }
    a.indptr[i + 1] = k;
  }
  return a;
}

ChargedCsr ReadSparseFeatures(const Dataset& dataset, MemoryBudget& budget) {
  const DatasetMeta& meta = dataset.meta();
  if (meta.feature_dim == 0) throw Error::Input("the dataset has no features", dataset.dir());
  if (!meta.sparse_features) {
    throw Error::Input(
        "the dataset has dense features; Â · X needs sparse (CSR) ones (strata generate "
        "--feature-density)",
        dataset.dir());
  }
  ChargedCsr x;
  x.rows = meta.num_nodes;
  x.cols = meta.feature_dim;
  x.indptr = ReadRowOffsets(dataset.PathOf(kSparseIndptrFile), x.rows, meta.feature_nnz, budget,
                            "the features' indptr");
  x.indices = ChargedArray<uint32_t>(budget, meta.feature_nnz, "the features' column ids");
  ReadArrayFile(dataset.PathOf(kSparseIndicesFile), x.indices.data(), meta.feature_nnz);
  // The product indexes its accumulator by these.
  for (uint64_t k = 0; k < meta.feature_nnz; ++k) {
    if (x.indices[k] >= x.cols) {
      throw Error::Input(
          fmt::format("column {} of stored value {} is >= feature_dim {}", x.indices[k], k, x.cols),
          dataset.PathOf(kSparseIndicesFile));
    }
  }
  x.values = ChargedArray<float>(budget, meta.feature_nnz, "the features' values");
  ReadArrayFile(dataset.PathOf(kSparseValuesFile), x.values.data(), meta.feature_nnz);
  return x;
}

}  // namespace strata
