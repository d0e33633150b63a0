// SplitWriter writes one split file (split/train.bin, ...): node ids in the dataset's id
// width, in the order given. It rejects ids out of range and ids given twice, using a bitmap
// of num_nodes bits charged to the budget.
#pragma once

#include <cstdint>
#include <string>

#include "storage/file.h"
#include "strata/memory_budget.h"

namespace strata {

class SplitWriter {
 public:
  enum class AddResult { kAdded, kOutOfRange, kRepeated };

  SplitWriter(const std::string& path, uint64_t num_nodes, uint32_t node_id_bytes,
              MemoryBudget& budget);

  AddResult Add(uint64_t id);
  uint64_t size() const { return size_; }
  FileDigest Finish() { return file_.Finish(); }

 private:
  FileWriter file_;
  uint64_t num_nodes_;
  uint32_t node_id_bytes_;
  ChargedArray<uint64_t> seen_;
  uint64_t size_ = 0;
};

}  // namespace strata
