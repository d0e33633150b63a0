// How a training run splits the memory budget's remainder for the direct store's cache: the
// batches in flight that no reserve holds already are provided for first (their input
// features, and the store's read buffers), then half of what is left goes to the cache (or the
// share of the feature bytes the user asked for), capped at the whole feature file, and
// divided between the static hot tier and the windowed dynamic tier. The other half stays for
// the batches' blocks and whatever else runs ahead. A pure function, so that the arithmetic
// can be checked by itself.
#pragma once

#include <cstdint>

namespace strata {

struct CacheSizingInputs {
  uint64_t num_nodes = 0;
  uint64_t feature_dim = 0;
  uint64_t row_bytes = 0;          // stored bytes of one row: feature_dim * dtype size
  uint64_t widest_batch_rows = 0;  // input rows of the widest batch sampled ahead
  uint32_t max_run_ahead = 0;
  uint32_t reserved_batches = 0;  // of the max_run_ahead + 2 in flight, held in a reserve
  uint32_t io_depth = 0;
  uint32_t max_read_bytes = 0;
  double cache_fraction = -1;    // >= 0: this share of the feature bytes, whatever the budget
  double hot_share = 0;          // of the cache's rows, for the static hot tier
  uint64_t available_bytes = 0;  // what the budget leaves for the store and the batches
};

struct CacheSizes {
  uint64_t hot_rows = 0;
  uint64_t dynamic_rows = 0;
  // Entries of the dynamic tier's pin table: room for the ids of the batches in the window
  // (twice over, for hashing), never more than there are nodes; 0 without a dynamic tier.
  uint64_t max_pinned_ids = 0;
};

CacheSizes SizeFeatureCache(const CacheSizingInputs& in);

}  // namespace strata
