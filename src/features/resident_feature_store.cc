#include "features/resident_feature_store.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

#include "common/interrupt.h"
#include "storage/file.h"
#include "strata/error.h"

namespace strata {

FeatureStore::Ticket ResidentFeatureStore::Submit(std::span<const uint64_t> ids,
                                                  std::span<float> out) {
  const uint64_t dim = layout_.dim;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] >= layout_.num_rows) {
      throw Error::Internal(
          fmt::format("feature row {} requested, the store has {} rows", ids[i], layout_.num_rows));
    }
    DecodeRow(base_ + layout_.offset(ids[i]), layout_.dtype, out.subspan(i * dim, dim));
    // Through mmap a row can cost a page fault and a disk read: stay interruptible.
    if ((i & 63) == 63) ThrowIfInterrupted();
  }
  stats_.rows_requested += ids.size();
  return 0;
}

MemoryFeatureStore::MemoryFeatureStore(const std::string& path, const RowLayout& layout,
                                       MemoryBudget& budget)
    : ResidentFeatureStore(layout) {
  const uint64_t bytes = layout.num_rows * layout.stride;
  rows_ = ChargedArray<std::byte>(budget, bytes, "the in-memory feature store");
  FileReader file(path);
  constexpr uint64_t kChunk = uint64_t{64} << 20;
  for (uint64_t done = 0; done < bytes; done += kChunk) {
    file.ReadExact(done, rows_.data() + done, std::min(kChunk, bytes - done));
  }
  base_ = rows_.data();
}

MmapFeatureStore::MmapFeatureStore(const std::string& path, const RowLayout& layout)
    : ResidentFeatureStore(layout) {
  map_bytes_ = layout.num_rows * layout.stride;
  if (map_bytes_ == 0) return;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error::System("cannot open", path, errno);
  map_ = ::mmap(nullptr, map_bytes_, PROT_READ, MAP_SHARED, fd, 0);
  int errnum = errno;
  ::close(fd);
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    throw Error::System("cannot mmap", path, errnum);
  }
  base_ = static_cast<const std::byte*>(map_);
}

MmapFeatureStore::~MmapFeatureStore() {
  if (map_ != nullptr) ::munmap(map_, map_bytes_);
}

}  // namespace strata
