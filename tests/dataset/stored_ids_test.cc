#include "dataset/stored_ids.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "strata/error.h"

namespace strata {
namespace {

// The message CheckStoredIds throws for `ids` stored `width` bytes wide, or "" when it accepts
// them.
template <typename Id>
std::string StoredIdsError(const std::vector<Id>& ids, uint64_t first_element, uint64_t nodes) {
  try {
    CheckStoredIds(reinterpret_cast<const std::byte*>(ids.data()), ids.size(), sizeof(Id),
                   first_element, nodes, "ids.bin");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::kInput);
    return e.what();
  }
  return "";
}

TEST(CheckStoredIds, NamesTheFirstIdBeyondTheNodesInEitherWidth) {
  EXPECT_EQ(StoredIdsError<uint32_t>({0, 4, 2}, 0, 5), "");
  EXPECT_EQ(StoredIdsError<uint32_t>({}, 0, 0), "");
  EXPECT_EQ(StoredIdsError<uint32_t>({0, 5, 9}, 100, 5),
            "node id 5 is >= num_nodes 5 (ids.bin:element [101])");
  EXPECT_EQ(StoredIdsError<uint64_t>({1, 2, uint64_t{1} << 40}, 0, uint64_t{1} << 33),
            "node id 1099511627776 is >= num_nodes 8589934592 (ids.bin:element [2])");
  EXPECT_EQ(StoredIdsError<uint64_t>({uint64_t{1} << 32}, 0, (uint64_t{1} << 32) + 1), "");
}

TEST(CheckRowOffsets, RefusesDecreasingOffsetsAndAWrongEnd) {
  const std::vector<uint64_t> good = {0, 2, 2, 5};
  EXPECT_NO_THROW(CheckRowOffsets(good, 0, 3, 5, "indptr.bin"));
  EXPECT_THROW(CheckRowOffsets(good, 0, 3, 6, "indptr.bin"), Error);
  const std::vector<uint64_t> falling = {0, 3, 2, 5};
  try {
    CheckRowOffsets(falling, 0, 3, 5, "indptr.bin");
    FAIL() << "accepted falling offsets";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "offsets decrease at row 1 (indptr.bin)");
  }
  // A middle piece of the file: neither end is pinned, but it stays within [0, end].
  EXPECT_NO_THROW(CheckRowOffsets(std::vector<uint64_t>{2, 3}, 1, 3, 5, "indptr.bin"));
  EXPECT_THROW(CheckRowOffsets(std::vector<uint64_t>{2, 7}, 1, 3, 5, "indptr.bin"), Error);
}

TEST(CheckStoredLabels, RefusesLabelsOutsideMinusOneToTheClasses) {
  const std::vector<int32_t> labels = {-1, 0, 3, 4};
  EXPECT_NO_THROW(CheckStoredLabels(labels.data(), 3, 0, 4, "labels.bin"));
  try {
    CheckStoredLabels(labels.data(), 4, 10, 4, "labels.bin");
    FAIL() << "accepted label 4 of 4 classes";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "label 4 is outside [-1, num_classes 4) (labels.bin:element [13])");
  }
  const std::vector<int32_t> below = {-2};
  EXPECT_THROW(CheckStoredLabels(below.data(), 1, 0, 4, "labels.bin"), Error);
}

}  // namespace
}  // namespace strata
