#include "nn/checkpoint.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstring>

#include "nn/adam.h"
#include "nn/loss.h"
#include "nn/model.h"
#include "nn/sgd.h"
#include "nn_test_util.h"
#include "strata/error.h"
#include "test_util.h"

namespace strata {
namespace {

using testing::BitIdentical;
using testing::RandomBlocks;
using testing::RandomMatrix;

ModelConfig Config(uint64_t seed) {
  ModelConfig config;
  config.kind = ModelKind::kGat;
  config.in_dim = 6;
  config.hidden = 4;
  config.num_classes = 3;
  config.heads = 2;
  config.seed = seed;
  return config;
}

void TrainSteps(Model& model, Optimizer& optimizer, int steps) {
  std::vector<Block> blocks = RandomBlocks({40, 20, 10}, 4, 1);
  Matrix features = RandomMatrix<float>(40, 6, 2);
  std::vector<int32_t> labels = {0, 1, 2, 0, 1, 2, 0, 1, 2, 0};
  Matrix grad(10, 3);
  for (int s = 0; s < steps; ++s) {
    SoftmaxCrossEntropy<float>(model.Forward(blocks, features.span(), {}, true, s), labels,
                               grad.span());
    model.Backward(grad.span());
    optimizer.Step();
  }
}

void ExpectSameState(Model& a, Optimizer& oa, Model& b, Optimizer& ob) {
  auto pa = a.Parameters(), pb = b.Parameters();
  for (size_t i = 0; i < pa.size(); ++i) EXPECT_TRUE(BitIdentical<float>(pa[i].value, pb[i].value));
  auto sa = oa.State(), sb = ob.State();
  ASSERT_EQ(sa.size(), sb.size());
  for (size_t i = 0; i < sa.size(); ++i)
    EXPECT_TRUE(BitIdentical<float>(sa[i].values, sb[i].values));
  EXPECT_EQ(oa.steps(), ob.steps());
}

TEST(Checkpoint, RoundTripIsBitExactAndTrainingContinuesIdentically) {
  Model model(Config(1));
  Adam adam(model.Parameters(), {.lr = 0.01});
  TrainSteps(model, adam, 3);
  std::vector<std::byte> bytes = EncodeCheckpoint(model.Parameters(), &adam, "{\"epoch\":3}");

  Model restored(Config(2));  // other initial weights, overwritten by the load
  Adam restored_adam(restored.Parameters(), {.lr = 0.01});
  EXPECT_EQ(DecodeCheckpoint(bytes, restored.Parameters(), &restored_adam), "{\"epoch\":3}");
  ExpectSameState(model, adam, restored, restored_adam);

  TrainSteps(model, adam, 2);
  TrainSteps(restored, restored_adam, 2);
  ExpectSameState(model, adam, restored, restored_adam);
}

TEST(Checkpoint, FileIsWrittenAtomicallyAndReadBack) {
  testing::ScratchDir dir;
  Model model(Config(3));
  Sgd sgd(model.Parameters(), {.lr = 0.1, .momentum = 0.9});
  TrainSteps(model, sgd, 2);
  std::string path = dir / "model.ckpt";
  WriteCheckpointFile(path, model.Parameters(), &sgd, "meta");
  EXPECT_EQ(testing::ListDirectory(dir.path()), std::vector<std::string>{"model.ckpt"});
  EXPECT_EQ(ReadCheckpointMetadata(path), "meta");

  Model restored(Config(4));
  Sgd restored_sgd(restored.Parameters(), {.lr = 0.1, .momentum = 0.9});
  EXPECT_EQ(ReadCheckpointFile(path, restored.Parameters(), &restored_sgd), "meta");
  ExpectSameState(model, sgd, restored, restored_sgd);

  // Evaluation loads the parameters alone.
  Model eval(Config(5));
  ReadCheckpointFile(path, eval.Parameters(), nullptr);
  auto a = model.Parameters(), b = eval.Parameters();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(BitIdentical<float>(a[i].value, b[i].value));
}

TEST(Checkpoint, RejectsCorruptionAndMismatchesWithoutTouchingTheModel) {
  Model model(Config(6));
  Adam adam(model.Parameters(), {});
  std::vector<std::byte> bytes = EncodeCheckpoint(model.Parameters(), &adam, "");

  Model target(Config(7));
  Adam target_adam(target.Parameters(), {});
  Matrix before;
  before.CopyFrom(target.Parameters()[0].value);

  std::vector<std::byte> flipped = bytes;
  flipped[flipped.size() / 2] ^= std::byte{1};
  EXPECT_THROW(DecodeCheckpoint(flipped, target.Parameters(), &target_adam), Error);
  std::vector<std::byte> truncated(bytes.begin(), bytes.end() - 9);
  EXPECT_THROW(DecodeCheckpoint(truncated, target.Parameters(), &target_adam), Error);

  ModelConfig wider = Config(8);
  wider.hidden = 5;
  Model other_shape(wider);
  EXPECT_THROW(DecodeCheckpoint(bytes, other_shape.Parameters(), nullptr), Error);

  Sgd sgd(target.Parameters(), {});
  EXPECT_THROW(DecodeCheckpoint(bytes, target.Parameters(), &sgd), Error);
  std::vector<std::byte> no_optimizer = EncodeCheckpoint(model.Parameters(), nullptr, "");
  EXPECT_THROW(DecodeCheckpoint(no_optimizer, target.Parameters(), &target_adam), Error);

  EXPECT_TRUE(BitIdentical<float>(target.Parameters()[0].value, before.span()));
}

// The snapshot section carries another model's values (the best-validation one) bit for bit,
// and is ignored by a reader that does not ask for it.
TEST(Checkpoint, SnapshotRoundTrips) {
  Model model(Config(1)), best(Config(3));
  Adam adam(model.Parameters(), {.lr = 0.01});
  std::vector<Parameter> snapshot = best.Parameters();
  for (Parameter& p : snapshot) p.name = "best/" + p.name;
  std::vector<std::byte> bytes = EncodeCheckpoint(model.Parameters(), &adam, "m", snapshot);

  Model restored(Config(2)), restored_best(Config(4));
  Adam restored_adam(restored.Parameters(), {.lr = 0.01});
  std::vector<Parameter> target = restored_best.Parameters();
  for (Parameter& p : target) p.name = "best/" + p.name;
  EXPECT_EQ(DecodeCheckpoint(bytes, restored.Parameters(), &restored_adam, "c", target), "m");
  auto expected = best.Parameters();
  for (size_t i = 0; i < target.size(); ++i) {
    EXPECT_TRUE(BitIdentical<float>(target[i].value, expected[i].value));
  }
  Model eval(Config(5));
  EXPECT_EQ(DecodeCheckpoint(bytes, eval.Parameters(), nullptr), "m");
}

// Version 1 files (before the snapshot section) still load.
TEST(Checkpoint, ReadsVersionOne) {
  Model model(Config(1));
  Adam adam(model.Parameters(), {.lr = 0.01});
  TrainSteps(model, adam, 2);
  std::vector<std::byte> bytes = EncodeCheckpoint(model.Parameters(), &adam, "v1");
  // Version 1 is version 2 without the (empty) snapshot count before the checksum.
  bytes.resize(bytes.size() - 12);
  const uint32_t version = 1;
  std::memcpy(bytes.data() + 8, &version, sizeof(version));
  const uint64_t checksum = XXH64(bytes.data(), bytes.size(), 0);
  const auto* p = reinterpret_cast<const std::byte*>(&checksum);
  bytes.insert(bytes.end(), p, p + sizeof(checksum));

  Model restored(Config(2));
  Adam restored_adam(restored.Parameters(), {.lr = 0.01});
  Model best(Config(3));
  EXPECT_EQ(DecodeCheckpoint(bytes, restored.Parameters(), &restored_adam, "c", best.Parameters()),
            "v1");
  ExpectSameState(model, adam, restored, restored_adam);
}

}  // namespace
}  // namespace strata
