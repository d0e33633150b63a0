#include "minibatch/cache_sizing.h"

#include <algorithm>

namespace strata {

CacheSizes SizeFeatureCache(const CacheSizingInputs& in) {
  const uint64_t widest = in.widest_batch_rows;
  // Batches in flight as float32 matrices, less those a reserve holds, and the read buffers of
  // the store.
  const uint64_t in_flight = in.max_run_ahead + uint64_t{2};
  const uint64_t unreserved = in_flight - std::min<uint64_t>(in_flight, in.reserved_batches);
  const uint64_t reserve =
      unreserved * widest * in.feature_dim * 4 + uint64_t{in.io_depth} * in.max_read_bytes;
  const uint64_t feature_bytes = in.num_nodes * in.row_bytes;
  uint64_t cache_bytes =
      in.cache_fraction >= 0
          ? static_cast<uint64_t>(in.cache_fraction * feature_bytes)
          : (in.available_bytes > reserve ? (in.available_bytes - reserve) / 2 : 0);
  cache_bytes = std::min(cache_bytes, feature_bytes);
  const uint64_t cache_rows = cache_bytes / std::max<uint64_t>(in.row_bytes, 1);
  CacheSizes sizes;
  sizes.hot_rows = static_cast<uint64_t>(cache_rows * in.hot_share);
  sizes.dynamic_rows = cache_rows - sizes.hot_rows;
  if (sizes.dynamic_rows > 0) {
    sizes.max_pinned_ids = std::min<uint64_t>(
        in.num_nodes, 2 * (uint64_t{in.max_run_ahead} + 1) * std::max<uint64_t>(widest, 1));
  }
  return sizes;
}

}  // namespace strata
