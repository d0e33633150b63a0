// Row normalisation of gathered features, the papers' preprocessing (Kipf & Welling's
// row-normalised bag-of-words): applied per batch to the rows a store returned, so the files
// keep the raw values.
#pragma once

#include <cstdint>
#include <span>

namespace strata {

// Divides each row of `dim` values by its L1 norm; all-zero rows stay zero.
void NormalizeRows(std::span<float> rows, uint64_t dim);

}  // namespace strata
