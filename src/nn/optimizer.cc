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
constexpr EnumNames<WeightDecayScope, 3> kScopeNames(
    "weight decay scope", {{{WeightDecayScope::kAll, "all"},
                            {WeightDecayScope::kWeights, "weights"},
                            {WeightDecayScope::kFirstLayer, "first-layer"}}});

}  // namespace

OptimizerKind ParseOptimizerKind(std::string_view name) { return kOptimizerNames.Parse(name); }
std::string_view OptimizerKindName(OptimizerKind kind) { return kOptimizerNames.Name(kind); }
WeightDecayScope ParseWeightDecayScope(std::string_view name) { return kScopeNames.Parse(name); }

std::vector<bool> DecayedParameters(std::span<const Parameter> params, WeightDecayScope scope) {
  std::vector<bool> decayed;
  for (const Parameter& p : params) {
    const std::string_view name = p.name;
    const bool bias = name == "bias" || name.ends_with(".bias");
    const bool first_layer = name.starts_with("layers.0.");
    switch (scope) {
      case WeightDecayScope::kAll:
        decayed.push_back(true);
        break;
      case WeightDecayScope::kWeights:
        decayed.push_back(!bias);
        break;
      case WeightDecayScope::kFirstLayer:
        decayed.push_back(!bias && first_layer);
        break;
    }
  }
  return decayed;
}

std::unique_ptr<Optimizer> MakeOptimizer(const OptimizerOptions& options,
                                         std::vector<Parameter> params) {
  std::vector<bool> decayed = DecayedParameters(params, options.weight_decay_scope);
  std::unique_ptr<Optimizer> optimizer;
  if (options.kind == OptimizerKind::kSgd) {
    optimizer =
        std::make_unique<Sgd>(std::move(params), SgdOptions{options.lr, 0.9, options.weight_decay});
  } else {
    AdamOptions adam;
    adam.lr = options.lr;
    adam.weight_decay = options.weight_decay;
    optimizer = std::make_unique<Adam>(std::move(params), adam);
  }
  optimizer->set_decayed(std::move(decayed));
  return optimizer;
}

}  // namespace strata
