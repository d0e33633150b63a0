#include "storage/read_plan.h"

#include "strata/dataset.h"

namespace strata {

void PlanReads(std::span<const uint64_t> ids, std::span<const uint32_t> keys,
               const RecordLayout& layout, const ReadShape& shape, ReadPlan& plan) {
  const uint64_t align = shape.alignment;
  const uint64_t row_bytes = layout.bytes;
  PlannedRead* open = nullptr;  // the read the next row may join
  for (size_t i = 0; i < ids.size(); ++i) {
    const uint64_t start = ids[i] * layout.stride;
    const uint64_t begin = start / align * align;
    const uint64_t end = (start + row_bytes + align - 1) / align * align;
    const uint64_t open_end = open ? open->offset + open->length : 0;
    if (shape.coalesce && open != nullptr && begin < open_end + kBlockBytes &&
        end - open->offset <= shape.max_read_bytes) {
      if (end > open_end) open->length = static_cast<uint32_t>(end - open->offset);
      ++open->row_count;
    } else {
      plan.reads.push_back(
          {begin, static_cast<uint32_t>(end - begin), static_cast<uint32_t>(plan.rows.size()), 1});
      open = &plan.reads.back();
    }
    plan.rows.push_back({keys[i], static_cast<uint32_t>(start - open->offset)});
  }
}

}  // namespace strata
