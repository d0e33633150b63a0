#include "nn/init.h"

#include <cmath>

#include "common/random.h"

namespace strata {

template <typename T>
void GlorotUniform(MatrixSpan<T> values, size_t fan_in, size_t fan_out, uint64_t seed,
                   double gain) {
  const double limit = gain * std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
  Rng rng(seed);
  for (size_t i = 0; i < values.rows(); ++i) {
    for (size_t j = 0; j < values.cols(); ++j) {
      values(i, j) = static_cast<T>((2.0 * rng.Uniform() - 1.0) * limit);
    }
  }
}

template void GlorotUniform<float>(MatrixSpan<float>, size_t, size_t, uint64_t, double);
template void GlorotUniform<double>(MatrixSpan<double>, size_t, size_t, uint64_t, double);

}  // namespace strata
