// Dataset::Verify checks what the files mean, not only their checksums: each case edits a good
// dataset and records the new checksums, so that only the contents can give it away.
#include "dataset/dataset_contents.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "storage/file.h"
#include "strata/error.h"
#include "strata/generate.h"
#include "test_util.h"

namespace strata {
namespace {

// Overwrites the 4-byte value at `element` of the dataset's `file`, recording its checksum.
void Overwrite(const std::string& dir, const std::string& file, uint64_t element, uint32_t value) {
  const std::string path = dir + "/" + file;
  FileDigest digest;
  {
    std::string bytes = ReadWholeFile(path);
    std::memcpy(bytes.data() + element * 4, &value, 4);
    digest = WriteWholeFile(path, std::as_bytes(std::span(bytes.data(), bytes.size())));
  }
  DatasetMeta meta = Dataset::Open(dir).meta();
  meta.files[file] = digest;
  testing::WriteTextFile(dir + "/meta.json", meta.ToJson());
}

std::string VerifyError(const std::string& dir) {
  MemoryBudget budget(uint64_t{64} << 20);
  try {
    Dataset::Open(dir).Verify(budget);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::kInput);
    return e.what();
  }
  return "";
}

class DatasetContents : public ::testing::Test {
 protected:
  void SetUp() override { GenerateDataset(testing::SmallGraph(dir(), 300, 4, 3)); }
  std::string dir() const { return scratch_ / "ds"; }
  testing::ScratchDir scratch_;
};

TEST_F(DatasetContents, AcceptsWhatGenerateWrote) { EXPECT_EQ(VerifyError(dir()), ""); }

TEST_F(DatasetContents, RefusesANodeInTwoSplits) {
  const uint32_t train0 = static_cast<uint32_t>(Dataset::Open(dir()).ReadSplit(Split::kTrain)[0]);
  Overwrite(dir(), "split/test.bin", 7, train0);
  EXPECT_EQ(VerifyError(dir()),
            "node " + std::to_string(train0) +
                " is in this split twice or in an earlier one too (train, val, test) (" + dir() +
                "/split/test.bin:element [7])");
}

TEST_F(DatasetContents, RefusesInDegreesThatDifferFromMetaJson) {
  DatasetMeta meta = Dataset::Open(dir()).meta();
  ++meta.in_degree.max;
  testing::WriteTextFile(dir() + "/meta.json", meta.ToJson());
  EXPECT_NE(VerifyError(dir()).find("in-degrees run from"), std::string::npos);
}

TEST_F(DatasetContents, RefusesALabelBeyondTheClasses) {
  Overwrite(dir(), "labels.bin", 12, 3);
  EXPECT_EQ(VerifyError(dir()),
            "label 3 is outside [-1, num_classes 3) (" + dir() + "/labels.bin:element [12])");
}

}  // namespace
}  // namespace strata
