#include "nn/optimizer.h"

#include "common/enum_names.h"
#include "nn/adam.h"
#include "nn/sgd.h"
#include "strata/error.h"

namespace strata {

namespace {

constexpr EnumNames<OptimizerKind, 2> kOptimizerNames("optimizer",
                                                      {{{OptimizerKind::kAdam, "adam"},
                                                        {OptimizerKind::kSgd, "sgd"}}});

}  // namespace

OptimizerKind ParseOptimizerKind(std::string_view name) { return kOptimizerNames.Parse(name); }
std::string_view OptimizerKindName(OptimizerKind kind) { return kOptimizerNames.Name(kind); }

std::unique_ptr<Optimizer> MakeOptimizer(const OptimizerOptions& options,
                                         std::vector<Parameter> params) {
  if (options.kind == OptimizerKind::kSgd) {
    return std::make_unique<Sgd>(std::move(params),
                                 SgdOptions{options.lr, 0.9, options.weight_decay});
  }
  AdamOptions adam;
  adam.lr = options.lr;
  adam.weight_decay = options.weight_decay;
  return std::make_unique<Adam>(std::move(params), adam);
}

}  // namespace strata
