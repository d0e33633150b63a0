// SplitWriter writes one split file (split/train.bin, ...): node ids in the dataset's id
// width, in the order given. It rejects ids out of range and ids already met in `seen`, the
// bits that the writers of a dataset's splits share, so that no node is in two splits.
#pragma once

#include <cstdint>
#include <string>

#include "dataset/node_bits.h"
#include "storage/file.h"

namespace strata {

class SplitWriter {
 public:
  enum class AddResult { kAdded, kOutOfRange, kRepeated };

  SplitWriter(const std::string& path, uint32_t node_id_bytes, NodeBits& seen);

  AddResult Add(uint64_t id);
  uint64_t size() const { return size_; }
  FileDigest Finish() { return file_.Finish(); }

 private:
  FileWriter file_;
  uint32_t node_id_bytes_;
  NodeBits& seen_;
  uint64_t size_ = 0;
};

}  // namespace strata
