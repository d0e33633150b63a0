#include "train/training_checkpoint.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "nn/checkpoint.h"
#include "nn/matrix.h"
#include "nn/model.h"
#include "nn/optimizer.h"
#include "strata/error.h"
#include "test_util.h"

namespace strata {
namespace {

const char kGoodMetadata[] =
    R"({"epochs_done":1,"model":"sage","layers":2,"hidden":4,"heads":8,"out_heads":1,)"
    R"("bias":true,"activation":"relu","in_dim":4,"num_classes":2,"optimizer":"adam"})";

// The checkpoint fuzzer's crash (fuzz/checkpoint_fuzzer.cc): metadata that is not JSON escaped
// as nlohmann's parse_error from ReadCheckpointHeader and RestoreModel. Neither that nor
// a number its field cannot hold (converted with undefined behaviour before) may be anything
// but an input error.
TEST(TrainingCheckpoint, BadMetadataIsAnInputError) {
  testing::ScratchDir dir;
  const std::string path = dir / "checkpoint.bin";
  Matrix value(2, 3), grad(2, 3);
  const std::vector<Parameter> params = {{"w", value.span(), grad.span()}};
  auto kind_of = [&](auto read) {
    try {
      read();
    } catch (const Error& e) {
      return e.kind() == Error::Kind::kInput ? std::string("input error") : e.what();
    }
    return std::string("no error");
  };

  WriteCheckpointFile(path, params, nullptr, kGoodMetadata);
  EXPECT_EQ(ReadCheckpointHeader(path).model.hidden, 4u);
  EXPECT_EQ(RestoreModel(path, params), 1u);

  std::string layers_too_large = kGoodMetadata;
  layers_too_large.replace(layers_too_large.find("\"layers\":2"), 10, "\"layers\":1e30");
  for (const std::string& metadata :
       {std::string(R"({"epochs_done":1,"model":"sage","layers":2,"n","layers":2})"),
        std::string("[]"), std::string(""), layers_too_large}) {
    WriteCheckpointFile(path, params, nullptr, metadata);
    EXPECT_EQ(kind_of([&] { ReadCheckpointHeader(path); }), "input error") << metadata;
    EXPECT_EQ(kind_of([&] { RestoreModel(path, params); }), "input error") << metadata;
  }
}

// Metadata that names a best epoch must come with its parameters, and an identity must be
// whole: otherwise a resume would restore uninitialised values or fail with an internal error.
TEST(TrainingCheckpoint, ResumeRefusesIncompleteRunState) {
  testing::ScratchDir dir;
  const std::string path = dir / "checkpoint.bin";
  ModelConfig config;  // the network kGoodMetadata describes
  static_cast<ModelOptions&>(config) = {.kind = ModelKind::kSage, .layers = 2, .hidden = 4};
  std::tie(config.in_dim, config.num_classes) = std::pair(4, 2);
  Model model(config), best(config);
  std::vector<Parameter> params = model.Parameters();
  std::vector<Parameter> snapshot = best.Parameters();
  for (Parameter& p : snapshot) p.name = "best/" + p.name;
  std::unique_ptr<Optimizer> adam = MakeOptimizer({.kind = OptimizerKind::kAdam}, params);
  const RunIdentity identity{7, 3};
  const std::string base = std::string(kGoodMetadata).substr(0, sizeof(kGoodMetadata) - 2);
  auto resume_error = [&](const std::string& metadata) {
    WriteCheckpointFile(path, params, adam.get(), metadata);
    try {
      ResumeCheckpoint(path, config, params, *adam, identity, snapshot);
    } catch (const Error& e) {
      return e.kind() == Error::Kind::kInput ? std::string("input error") : e.what();
    }
    return std::string("no error");
  };
  EXPECT_EQ(resume_error(base + R"(,"dataset_meta_xxh64":7,"seed":3})"), "no error");
  EXPECT_EQ(resume_error(base + R"(,"dataset_meta_xxh64":7})"), "input error");
  EXPECT_EQ(resume_error(base + R"(,"dataset_meta_xxh64":7,"seed":3,"best_epoch":0,)"
                                R"("best_val_acc":0.5})"),
            "input error");
}

}  // namespace
}  // namespace strata
