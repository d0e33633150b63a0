#include "multistage/multistage_options.h"

#include <fmt/format.h>

#include "strata/error.h"

namespace strata {

void CheckMultistageOptions(const MultistageOptions& options, size_t layers) {
  if (options.reuse < 1 || options.reuse > 4) {
    throw Error::Input(fmt::format("--reuse must be between 1 and 4, not {}", options.reuse));
  }
  if (!options.fanouts.empty() && options.fanouts.size() != layers) {
    throw Error::Input(fmt::format("--macro-fanouts lists {} layers, the model has {}",
                                   options.fanouts.size(), layers));
  }
  if (options.world_size == 0 || options.rank >= options.world_size) {
    throw Error::Input(
        fmt::format("rank {} is not one of world_size {}", options.rank, options.world_size));
  }
  if (options.method == MultistageMethod::kPbs && layers < 2) {
    throw Error::Input(
        "--multistage pbs needs a model of two layers or more: its halo's historical "
        "embeddings are hidden layers' inputs");
  }
  if (options.halo_hops != 1) {
    throw Error::Input(fmt::format(
        "--halo-hops {}: partition-based sampling keeps one hop of halo (its historical "
        "embeddings stand in for the hops beyond)",
        options.halo_hops));
  }
  if (options.world_size > 1 && options.adaptive_reuse) {
    throw Error::Input(
        "adaptive reuse (reuse auto) serves one rank: the ranks would take "
        "different numbers of steps");
  }
}

}  // namespace strata
