#include "nn/model.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "common/enum_names.h"
#include "nn/dropout.h"
#include "nn/gat_conv.h"
#include "nn/gcn_conv.h"
#include "nn/layer_spec.h"
#include "nn/linear.h"
#include "nn/model_seeds.h"
#include "nn/sage_conv.h"
#include "strata/error.h"

namespace strata {
namespace {

void CheckProbability(const char* option, double p) {
  if (!(p >= 0 && p < 1)) {
    throw Error::Input(fmt::format("{} must be in [0, 1), not {}", option, p));
  }
}

constexpr EnumNames<ModelKind, 4> kModelNames("model", {{{ModelKind::kSage, "sage"},
                                                         {ModelKind::kGcn, "gcn"},
                                                         {ModelKind::kGat, "gat"},
                                                         {ModelKind::kMlp, "mlp"}}});
constexpr EnumNames<Activation, 2> kActivationNames("activation", {{{Activation::kRelu, "relu"},
                                                                    {Activation::kElu, "elu"}}});

}  // namespace

void CheckModelOptions(const ModelOptions& options) {
  if (options.layers == 0) throw Error::Input("--layers must be positive");
  if (options.hidden == 0) throw Error::Input("--hidden must be positive");
  CheckProbability("--dropout", options.dropout);
  CheckProbability("--input-dropout", options.input_dropout);
  CheckProbability("--attention-dropout", options.attention_dropout);
  if (options.kind == ModelKind::kGat && (options.heads == 0 || options.out_heads == 0)) {
    throw Error::Input("--heads and --out-heads must be positive");
  }
}

ModelKind ParseModelKind(std::string_view name) { return kModelNames.Parse(name); }
std::string_view ModelKindName(ModelKind kind) { return kModelNames.Name(kind); }
Activation ParseActivation(std::string_view name) { return kActivationNames.Parse(name); }
std::string_view ActivationName(Activation activation) { return kActivationNames.Name(activation); }

template <typename T>
BasicModel<T>::BasicModel(const ModelConfig& config) : config_(config) {
  CheckModelOptions(config);
  if (config.in_dim == 0 || config.num_classes == 0) {
    throw Error::Input("the model's input and class dimensions must be positive");
  }
  config_.threads = std::max(1u, config.threads);
  const std::vector<LayerSpec> specs = LayerSpecsOf(config);
  for (size_t l = 0; l < specs.size(); ++l) {
    const LayerSpec& spec = specs[l];
    const uint64_t seed = LayerSeed(config.seed, l);
    std::unique_ptr<BasicLayer<T>> layer;
    switch (spec.kind) {
      case ModelKind::kSage:
        layer = std::make_unique<BasicSageConv<T>>(spec.in, spec.out, seed, config.bias);
        break;
      case ModelKind::kGcn:
        layer = std::make_unique<BasicGcnConv<T>>(spec.in, spec.out, seed, config.bias);
        break;
      case ModelKind::kGat:
        layer = std::make_unique<BasicGatConv<T>>(spec.in, spec.out, spec.gat, seed, config.bias);
        break;
      case ModelKind::kMlp:
        layer = std::make_unique<BasicLinear<T>>(spec.in, spec.out, seed, config.bias);
        break;
    }
    layer->set_threads(config_.threads);
    layers_.push_back(std::move(layer));
  }
  outputs_.resize(config.layers);
  grads_.resize(config.layers);
}

template <typename T>
BasicModel<T>::~BasicModel() = default;

template <typename T>
MatrixSpan<const T> BasicModel<T>::Forward(std::span<const Block> blocks,
                                           MatrixSpan<const T> features,
                                           std::span<const T> gcn_norm, bool training,
                                           uint64_t step_seed,
                                           std::span<HiddenHistory<T>> history) {
  const size_t num_layers = layers_.size();
  if (blocks.size() != num_layers) {
    throw Error::Internal("the model has " + std::to_string(num_layers) + " layers but the batch " +
                          std::to_string(blocks.size()) + " blocks");
  }
  // Layer l + 1 reads layer l's output rows as its sources, so its sources must be layer l's
  // destinations in the same order (this also makes every gcn_norm prefix line up).
  for (size_t l = 0; l + 1 < num_layers; ++l) {
    if (blocks[l].num_dst() != blocks[l + 1].num_src() ||
        !std::equal(blocks[l + 1].src_nodes.begin(), blocks[l + 1].src_nodes.end(),
                    blocks[l].src_nodes.begin())) {
      throw Error::Internal("block " + std::to_string(l + 1) + "'s sources are not block " +
                            std::to_string(l) + "'s destinations");
    }
  }
  if (features.rows() != blocks[0].num_src() || features.cols() != config_.in_dim) {
    throw Error::Internal(
        "features are " + std::to_string(features.rows()) + "x" + std::to_string(features.cols()) +
        ", expected " + std::to_string(blocks[0].num_src()) + "x" + std::to_string(config_.in_dim));
  }
  if (config_.kind == ModelKind::kGcn && gcn_norm.size() < blocks[0].num_src()) {
    throw Error::Internal("GCN needs a normalisation value for each of the " +
                          std::to_string(blocks[0].num_src()) + " input nodes");
  }
  if (!history.empty() && history.size() + 1 != num_layers) {
    throw Error::Internal("a history exchange for each hidden layer, not " +
                          std::to_string(history.size()));
  }
  history_ = history;
  const unsigned threads = config_.threads;
  MatrixSpan<const T> h = features;
  if (training && config_.input_dropout > 0) {
    dropped_input_.Resize(features.rows(), features.cols());
    Dropout<T>(features, dropped_input_.span(), config_.input_dropout, InputDropoutSeed(step_seed),
               threads, RowKeys(blocks[0].src_nodes));
    h = dropped_input_.span();
  }
  step_dropout_ = training ? config_.dropout : 0.0;
  step_seed_ = step_seed;
  blocks_ = blocks;
  for (size_t l = 0; l < num_layers; ++l) {
    LayerInput<T> input;
    input.graph = CsrOf(blocks[l]);
    input.features = h;
    if (config_.kind == ModelKind::kGcn) input.gcn_norm = gcn_norm.first(blocks[l].num_src());
    input.training = training;
    input.seed = AttentionDropoutSeed(step_seed, l);
    layers_[l]->Forward(input, outputs_[l]);
    if (l + 1 < num_layers) {
      if (!history.empty()) KeepFreshRows(outputs_[l].span(), history[l]);
      Activate(outputs_[l].span(), step_dropout_, ActivationDropoutSeed(step_seed, l),
               DestinationKeys(blocks[l]));
      if (!history.empty()) PutStaleRows(history[l], outputs_[l].span());
    }
    h = outputs_[l].span();
  }
  return h;
}

template <typename T>
void BasicModel<T>::KeepFreshRows(MatrixSpan<const T> out, HiddenHistory<T>& history) const {
  const size_t width = out.cols();
  history.fresh_rows.resize(history.fresh.size() * width);
  for (size_t i = 0; i < history.fresh.size(); ++i) {
    std::copy_n(out.row(history.fresh[i]), width, history.fresh_rows.data() + i * width);
  }
  Activate(MatrixSpan<T>(history.fresh_rows.data(), history.fresh.size(), width), 0, 0, {});
}

template <typename T>
void BasicModel<T>::PutStaleRows(const HiddenHistory<T>& history, MatrixSpan<T> out) const {
  const size_t width = out.cols();
  if (history.stale_rows.size() != history.stale.size() * width) {
    throw Error::Internal("stale history rows do not match the layer's width");
  }
  for (size_t i = 0; i < history.stale.size(); ++i) {
    std::copy_n(history.stale_rows.data() + i * width, width, out.row(history.stale[i]));
  }
}

template <typename T>
void BasicModel<T>::Activate(MatrixSpan<T> x, double dropout, uint64_t seed, RowKeys keys) const {
  if (config_.activation == Activation::kElu) {
    EluDropout<T>(x, dropout, seed, config_.threads, keys);
  } else {
    ReluDropout<T>(x, dropout, seed, config_.threads, keys);
  }
}

template <typename T>
void BasicModel<T>::Backward(MatrixSpan<const T> grad_logits,
                             const std::function<void(size_t)>& layer_done) {
  const unsigned threads = config_.threads;
  MatrixSpan<const T> grad = grad_logits;
  for (size_t l = layers_.size(); l-- > 0;) {
    BasicMatrix<T>* grad_in = l > 0 ? &grads_[l - 1] : nullptr;
    layers_[l]->Backward(grad, grad_in);
    if (layer_done) layer_done(l);
    if (l > 0) {
      if (config_.activation == Activation::kElu) {
        EluDropoutBackward<T>(outputs_[l - 1].span(), grads_[l - 1].span(), step_dropout_,
                              ActivationDropoutSeed(step_seed_, l - 1), threads,
                              DestinationKeys(blocks_[l - 1]));
      } else {
        ReluDropoutBackward<T>(outputs_[l - 1].span(), grads_[l - 1].span(), step_dropout_,
                               threads);
      }
      // A stale row is the table's constant, not a function of the parameters.
      if (!history_.empty()) {
        MatrixSpan<T> g = grads_[l - 1].span();
        for (uint32_t row : history_[l - 1].stale) std::fill_n(g.row(row), g.cols(), T(0));
      }
      grad = grads_[l - 1].span();
    }
  }
}

template <typename T>
std::vector<BasicParameter<T>> BasicModel<T>::Parameters() {
  std::vector<BasicParameter<T>> all;
  for (size_t l = 0; l < layers_.size(); ++l) {
    for (auto& p : layers_[l]->Parameters("layers." + std::to_string(l) + ".")) {
      all.push_back(std::move(p));
    }
  }
  return all;
}

template <typename T>
size_t BasicModel<T>::AllocatedBytes() const {
  size_t bytes = CapacityBytes<T>({&dropped_input_});
  for (const auto& layer : layers_) bytes += layer->AllocatedBytes();
  for (const auto& m : outputs_) bytes += CapacityBytes<T>({&m});
  for (const auto& m : grads_) bytes += CapacityBytes<T>({&m});
  return bytes;
}

uint64_t ModelBytesBound(const ModelConfig& config, std::span<const BlockShape> shapes) {
  uint64_t bytes = 0;
  const std::vector<LayerSpec> specs = LayerSpecsOf(config);
  for (size_t l = 0; l < specs.size(); ++l) {
    const LayerSpec& spec = specs[l];
    const BlockShape shape = l < shapes.size() ? shapes[l] : BlockShape{};
    switch (spec.kind) {
      case ModelKind::kSage:
        bytes += BasicSageConv<float>::BytesBound(spec.in, spec.out, config.bias, l > 0, shape);
        break;
      case ModelKind::kGcn:
        bytes += BasicGcnConv<float>::BytesBound(spec.in, spec.out, config.bias, l > 0, shape);
        break;
      case ModelKind::kGat:
        bytes += BasicGatConv<float>::BytesBound(spec.in, spec.out, spec.gat, config.bias, shape);
        break;
      case ModelKind::kMlp:
        bytes += BasicLinear<float>::BytesBound(spec.in, spec.out, config.bias);
        break;
    }
    // The layer's output, and the gradient of its input unless it is the first.
    uint64_t activations = shape.dst * spec.out_dim();
    if (l > 0) activations += shape.src * spec.in;
    if (l == 0 && config.input_dropout > 0) activations += shape.src * spec.in;
    bytes += MatrixBytesBound(activations * sizeof(float));
  }
  return bytes;
}

template class BasicModel<float>;
template class BasicModel<double>;

}  // namespace strata
