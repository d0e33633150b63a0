#include "features/row_normalize.h"

#include <cmath>

namespace strata {

void NormalizeRows(std::span<float> rows, uint64_t dim) {
  for (size_t start = 0; start < rows.size(); start += dim) {
    double sum = 0;
    for (uint64_t k = 0; k < dim; ++k) sum += std::fabs(rows[start + k]);
    if (sum == 0) continue;
    const float scale = static_cast<float>(1.0 / sum);
    for (uint64_t k = 0; k < dim; ++k) rows[start + k] *= scale;
  }
}

}  // namespace strata
