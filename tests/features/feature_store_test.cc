#include "strata/feature_store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <functional>

#include "common/float16.h"
#include "common/random.h"
#include "storage/file.h"
#include "strata/error.h"
#include "strata/generate.h"
#include "test_util.h"

namespace strata {
namespace {

struct StoreCase {
  FeatureStoreKind kind;
  IoEngineOptions::Kind engine;
  uint64_t dynamic_rows;
  uint64_t hot_rows;
  uint32_t max_read_bytes;
  const char* name;
  bool coalesce = true;
  // Rewrites the OS result of read attempts (short reads, EAGAIN, EINTR).
  std::function<int(const ReadRequest&, int)> fault_hook = nullptr;
};

class FeatureStoreTest : public ::testing::TestWithParam<std::tuple<StoreCase, FeatureDtype>> {
 protected:
  void SetUp() override {
    // 37 values: rows of 148 (float32) or 74 (float16) bytes, several per block.
    GenerateOptions o = testing::SmallGraph(dir_ / "g", 3001, 37, 3, 4, 5);
    o.feature_dtype = std::get<1>(GetParam());
    meta_ = GenerateDataset(o);
  }

  std::unique_ptr<FeatureStore> Open(const StoreCase& c) {
    DirectStoreOptions direct;
    direct.io.kind = c.engine;
    direct.io.depth = 16;
    direct.max_read_bytes = c.max_read_bytes;
    direct.coalesce = c.coalesce;
    direct.io.fault_hook = c.fault_hook;
    direct.dynamic_rows = c.dynamic_rows;
    direct.max_pinned_ids = 1000;
    for (uint64_t i = 0; i < c.hot_rows; ++i) direct.hot_ids.push_back((i * 7919) % 3001);
    return OpenFeatureStore(Dataset::Open(dir_ / "g"), c.kind, direct, budget_);
  }

  // Expected values straight from the file, decoded independently of the stores.
  std::vector<float> Expected(std::span<const uint64_t> ids) {
    std::string bytes = ReadWholeFile(dir_ / "g/features.bin");
    std::vector<float> out;
    for (uint64_t id : ids) {
      const char* row = bytes.data() + id * meta_.row_stride_bytes;
      for (uint64_t k = 0; k < meta_.feature_dim; ++k) {
        if (meta_.feature_dtype == FeatureDtype::kFloat32) {
          float v;
          std::memcpy(&v, row + 4 * k, 4);
          out.push_back(v);
        } else {
          uint16_t h;
          std::memcpy(&h, row + 2 * k, 2);
          out.push_back(HalfToFloat(h));
        }
      }
    }
    return out;
  }

  testing::ScratchDir dir_;
  MemoryBudget budget_{uint64_t{256} << 20};
  DatasetMeta meta_;
};

TEST_P(FeatureStoreTest, ReturnsTheFileValuesForAnyIdList) {
  const StoreCase& c = std::get<0>(GetParam());
  auto store = Open(c);
  Rng rng(3);
  std::vector<std::vector<uint64_t>> lists = {{}, {0}, {3000}, {0, 3000, 0, 3000}};
  for (int i = 0; i < 20; ++i) {
    std::vector<uint64_t> ids;
    size_t n = 1 + rng.Below(700);
    for (size_t k = 0; k < n; ++k) ids.push_back(rng.Below(i % 2 ? 3001 : 200));  // repeats
    lists.push_back(ids);
  }
  for (const auto& ids : lists) {
    std::vector<float> out(ids.size() * store->dim(), -1.0f);
    store->Gather(ids, out);
    ASSERT_EQ(out, Expected(ids)) << c.name << " with " << ids.size() << " ids";
  }
  FeatureStoreStats s = store->stats();
  EXPECT_GT(s.rows_requested, 0u);
}

TEST_P(FeatureStoreTest, OutstandingGathersCompleteInAnyOrder) {
  const StoreCase& c = std::get<0>(GetParam());
  auto store = Open(c);
  Rng rng(4);
  std::vector<std::vector<uint64_t>> lists(5);
  std::vector<std::vector<float>> outs(5);
  std::vector<FeatureStore::Ticket> tickets;
  for (int i = 0; i < 5; ++i) {
    for (int k = 0; k < 300; ++k) lists[i].push_back(rng.Below(3001));
    outs[i].resize(lists[i].size() * store->dim());
    tickets.push_back(store->Submit(lists[i], outs[i]));
  }
  for (int i : {3, 0, 4, 1, 2}) {
    store->Wait(tickets[i]);
    ASSERT_EQ(outs[i], Expected(lists[i])) << c.name;
  }
}

// Every read comes back at most half done (whole blocks, so O_DIRECT can continue it).
int HalveEveryRead(const ReadRequest& request, int result) {
  if (result <= 4096) return result;
  return std::max(4096, result / 2 / 4096 * 4096);
}

// Every third attempt fails with EAGAIN or EINTR, as an overloaded device or a signal would.
int RetryEveryThirdRead(const ReadRequest&, int result) {
  static std::atomic<int> attempts{0};
  int n = attempts++;
  if (n % 3 == 1) return -EAGAIN;
  if (n % 3 == 2) return -EINTR;
  return result;
}

const StoreCase kCases[] = {
    {FeatureStoreKind::kMemory, IoEngineOptions::Kind::kAuto, 0, 0, 65536, "memory"},
    {FeatureStoreKind::kMmap, IoEngineOptions::Kind::kAuto, 0, 0, 65536, "mmap"},
    {FeatureStoreKind::kDirect, IoEngineOptions::Kind::kUring, 0, 0, 65536, "direct_uring"},
    {FeatureStoreKind::kDirect, IoEngineOptions::Kind::kPread, 0, 0, 65536, "direct_pread"},
    {FeatureStoreKind::kDirect, IoEngineOptions::Kind::kUring, 0, 0, 4096, "direct_one_block"},
    {FeatureStoreKind::kDirect, IoEngineOptions::Kind::kUring, 100, 0, 65536, "direct_dynamic"},
    {FeatureStoreKind::kDirect, IoEngineOptions::Kind::kPread, 100, 300, 8192, "direct_tiered"},
    {FeatureStoreKind::kDirect, IoEngineOptions::Kind::kUring, 0, 0, 65536, "direct_row_reads",
     false},
    {FeatureStoreKind::kDirect, IoEngineOptions::Kind::kUring, 0, 0, 65536, "direct_short_reads",
     true, HalveEveryRead},
    {FeatureStoreKind::kDirect, IoEngineOptions::Kind::kPread, 50, 0, 65536, "direct_pread_retries",
     true, RetryEveryThirdRead},
};

INSTANTIATE_TEST_SUITE_P(Stores, FeatureStoreTest,
                         ::testing::Combine(::testing::ValuesIn(kCases),
                                            ::testing::Values(FeatureDtype::kFloat32,
                                                              FeatureDtype::kFloat16)),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param).name) +
                                  (std::get<1>(info.param) == FeatureDtype::kFloat16 ? "_f16"
                                                                                     : "_f32");
                         });

// An EIO from the device surfaces as an error naming the file and offset, never as rows.
TEST(DirectFeatureStore, ReportsIoErrorsWithFileAndOffset) {
  testing::ScratchDir dir;
  DatasetMeta meta = GenerateDataset(testing::SmallGraph(dir / "g", 2000, 64, 2, 4));
  MemoryBudget budget(uint64_t{64} << 20);
  for (auto engine : {IoEngineOptions::Kind::kUring, IoEngineOptions::Kind::kPread}) {
    DirectStoreOptions direct;
    direct.io.kind = engine;
    direct.io.depth = 8;
    direct.io.fault_hook = [](const ReadRequest& r, int result) {
      return r.offset >= 100 * 4096 ? -EIO : result;
    };
    auto store =
        OpenFeatureStore(Dataset::Open(dir / "g"), FeatureStoreKind::kDirect, direct, budget);
    std::vector<uint64_t> ids = {1, 2, 1999, 3};  // row 1999 lies in block 124
    std::vector<float> out(ids.size() * 64);
    try {
      store->Gather(ids, out);
      FAIL() << "expected an I/O error";
    } catch (const Error& e) {
      std::string what = e.what();
      EXPECT_NE(what.find("offset"), std::string::npos) << what;
      EXPECT_NE(what.find("features.bin"), std::string::npos) << what;
    }
  }
}

}  // namespace
}  // namespace strata
