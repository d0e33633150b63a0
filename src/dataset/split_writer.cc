#include "dataset/split_writer.h"

#include <algorithm>

namespace strata {

SplitWriter::SplitWriter(const std::string& path, uint64_t num_nodes, uint32_t node_id_bytes,
                         MemoryBudget& budget)
    : file_(path, size_t{1} << 20),
      num_nodes_(num_nodes),
      node_id_bytes_(node_id_bytes),
      seen_(budget, (num_nodes + 63) / 64, "the split bitmap") {
  std::fill(seen_.data(), seen_.data() + seen_.size(), 0);
}

SplitWriter::AddResult SplitWriter::Add(uint64_t id) {
  if (id >= num_nodes_) return AddResult::kOutOfRange;
  uint64_t bit = uint64_t{1} << (id % 64);
  if (seen_[id / 64] & bit) return AddResult::kRepeated;
  seen_[id / 64] |= bit;
  if (node_id_bytes_ == 4) {
    file_.AppendValue(static_cast<uint32_t>(id));
  } else {
    file_.AppendValue(id);
  }
  ++size_;
  return AddResult::kAdded;
}

}  // namespace strata
