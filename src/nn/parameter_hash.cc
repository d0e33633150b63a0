#include "nn/parameter_hash.h"

#include <xxhash.h>

namespace strata {

uint64_t ParameterValuesHash(std::span<const Parameter> params) {
  XXH64_state_t* state = XXH64_createState();
  XXH64_reset(state, 0);
  for (const Parameter& p : params) {
    for (size_t r = 0; r < p.value.rows(); ++r) {
      XXH64_update(state, p.value.row(r), p.value.cols() * sizeof(float));
    }
  }
  const uint64_t hash = XXH64_digest(state);
  XXH64_freeState(state);
  return hash;
}

}  // namespace strata
