// The seeds of a model's random draws, numbered here once for every training path: the
// mini-batch model (nn/model.cc) and the full-graph runner start from the same parameters and
// drop out the same values for the same seeds because both take their seeds from here.
//
// Layer l's parameters come from LayerSeed(model seed, l). A training step's dropout masks come
// from streams under its step seed: the input features' stream 0, layer l's attention dropout
// 2l + 1 and the dropout after layer l's activation 2l + 2, so no two draws of a step share a
// stream whatever the number of layers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/random.h"

namespace strata {

inline uint64_t LayerSeed(uint64_t model_seed, size_t layer) { return MixSeed(model_seed, layer); }

inline uint64_t InputDropoutSeed(uint64_t step_seed) { return MixSeed(step_seed, 0); }
inline uint64_t AttentionDropoutSeed(uint64_t step_seed, size_t layer) {
  return MixSeed(step_seed, 2 * layer + 1);
}
inline uint64_t ActivationDropoutSeed(uint64_t step_seed, size_t layer) {
  return MixSeed(step_seed, 2 * layer + 2);
}

}  // namespace strata
