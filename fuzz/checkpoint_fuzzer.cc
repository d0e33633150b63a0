// Fuzzes the checkpoint reader as `strata eval` and `strata train --resume` use it: the
// metadata and the network shape it records (ReadCheckpointHeader), the parameters restored
// into a small GraphSAGE model (2 layers, 4 inputs, hidden 4, 2 classes: the seeds in
// fuzz/corpus/checkpoint_fuzzer are checkpoints of that model) for evaluation (RestoreModel),
// and a resume with Adam and with SGD (ResumeCheckpoint: the run's identity and shape checked,
// then the parameters, optimizer state and best-validation snapshot decoded; and the decoding
// alone, ReadCheckpointFile, so that inputs failing the identity check still reach it).
//
// The last 8 bytes of an input are replaced by the xxh64 of the rest before decoding: a
// mutated input would otherwise almost never get past the checksum, and what lies behind it is
// the parser worth fuzzing. Checksum mismatches are covered by tests/nn/checkpoint_test.cc.
#include <xxhash.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "fuzz_support.h"
#include "nn/checkpoint.h"
#include "nn/model.h"
#include "nn/optimizer.h"
#include "train/training_checkpoint.h"

namespace strata {
namespace {

ModelConfig SeedConfig() {
  ModelConfig config;
  config.kind = ModelKind::kSage;
  config.layers = 2;
  config.hidden = 4;
  config.in_dim = 4;
  config.num_classes = 2;
  return config;
}

// The best-validation snapshot's names in a checkpoint.
std::vector<Parameter> Renamed(std::vector<Parameter> params) {
  for (Parameter& p : params) p.name = "best/" + p.name;
  return params;
}

// The model and the optimizers a checkpoint is decoded into, built once per process.
struct Target {
  ModelConfig config = SeedConfig();
  Model model{config};
  std::vector<Parameter> params = model.Parameters();
  Model best_model{config};
  std::vector<Parameter> best = Renamed(best_model.Parameters());
  std::unique_ptr<Optimizer> adam = MakeOptimizer({.kind = OptimizerKind::kAdam}, params);
  std::unique_ptr<Optimizer> sgd = MakeOptimizer({.kind = OptimizerKind::kSgd}, params);
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  if (size >= 8) {
    uint64_t checksum = XXH64(bytes.data(), size - 8, 0);
    std::memcpy(bytes.data() + size - 8, &checksum, 8);
  }
  static fuzz::FuzzInputFile file;
  const std::string& path = file.Write(bytes.data(), size);
  fuzz::AcceptInputErrors([&] { ReadCheckpointHeader(path); });

  static Target target;
  fuzz::AcceptInputErrors([&] { RestoreModel(path, target.params); });
  for (Optimizer* optimizer : {target.adam.get(), target.sgd.get()}) {
    fuzz::AcceptInputErrors([&] {
      ResumeCheckpoint(path, target.config, target.params, *optimizer, RunIdentity{}, target.best);
    });
    fuzz::AcceptInputErrors(
        [&] { ReadCheckpointFile(path, target.params, optimizer, target.best); });
  }
  return 0;
}

}  // namespace strata
