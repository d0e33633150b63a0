// Decoding stored feature rows (float32 or float16, as laid out in features.bin) into
// float32. Kernels over spans, shared by every feature store and the caches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "strata/dataset.h"

namespace strata {

// Writes `out.size()` float32 values decoded from the start of `row`.
void DecodeRow(const std::byte* row, FeatureDtype dtype, std::span<float> out);

// Where row `id` starts in features.bin and how many bytes of it carry features.
struct RowLayout {
  uint64_t num_rows = 0;
  uint64_t dim = 0;
  FeatureDtype dtype = FeatureDtype::kFloat32;
  uint64_t stride = 0;  // row_stride_bytes

  static RowLayout Of(const DatasetMeta& meta) {
    return {meta.num_nodes, meta.feature_dim, meta.feature_dtype, meta.row_stride_bytes};
  }
  uint64_t offset(uint64_t id) const { return id * stride; }
  uint64_t row_bytes() const { return dim * FeatureDtypeBytes(dtype); }
};

}  // namespace strata
