#include "nn/layer_spec.h"

#include "nn/model.h"

namespace strata {

size_t LayerSpec::out_dim() const {
  return kind == ModelKind::kGat && gat.concat_heads ? gat.heads * out : out;
}

size_t LayerSpec::gathered_width() const {
  // GAT gathers each head's transformed row and its source attention score; an MLP nothing.
  if (kind == ModelKind::kMlp) return 0;
  return kind == ModelKind::kGat ? gat.heads * out + gat.heads : out;
}

size_t LayerSpec::self_width() const {
  return kind == ModelKind::kSage || kind == ModelKind::kMlp ? out : 0;
}

bool LayerSpec::aggregates_inputs() const {
  return kind == ModelKind::kSage || kind == ModelKind::kGcn;
}

std::vector<LayerSpec> LayerSpecsOf(const ModelConfig& config) {
  std::vector<LayerSpec> specs;
  size_t in = config.in_dim;
  for (size_t l = 0; l < config.layers; ++l) {
    const bool last = l + 1 == config.layers;
    LayerSpec spec;
    spec.kind = config.kind;
    spec.in = in;
    spec.out = last ? config.num_classes : config.hidden;
    if (config.kind == ModelKind::kGat) {
      spec.gat.heads = last ? config.out_heads : config.heads;
      spec.gat.concat_heads = !last;
      spec.gat.attention_dropout = config.attention_dropout;
    }
    in = spec.out_dim();
    specs.push_back(spec);
  }
  return specs;
}

}  // namespace strata
