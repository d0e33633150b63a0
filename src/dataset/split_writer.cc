#include "dataset/split_writer.h"

namespace strata {

SplitWriter::SplitWriter(const std::string& path, uint32_t node_id_bytes, NodeBits& seen)
    : file_(path, size_t{1} << 20), node_id_bytes_(node_id_bytes), seen_(seen) {}

SplitWriter::AddResult SplitWriter::Add(uint64_t id) {
  if (id >= seen_.num_nodes()) return AddResult::kOutOfRange;
  if (seen_.TestAndSet(id)) return AddResult::kRepeated;
  if (node_id_bytes_ == 4) {
    file_.AppendValue(static_cast<uint32_t>(id));
  } else {
    file_.AppendValue(id);
  }
  ++size_;
  return AddResult::kAdded;
}

}  // namespace strata
