#include "dataset/csc_builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "common/interrupt.h"
#include "common/progress.h"
#include "dataset/csc_writer.h"
#include "dataset/radix_sort.h"
#include "storage/file.h"
#include "strata/error.h"

namespace strata {

uint32_t IdBitsFor(uint64_t num_nodes) {
  uint32_t bits = 1;
  while (bits < 64 && (uint64_t{1} << bits) < num_nodes) ++bits;
  return bits;
}

struct CscBuilder::Impl {
  virtual ~Impl() = default;
  virtual void Add(std::span<const uint64_t> src, std::span<const uint64_t> dst) = 0;
  virtual CscBuildResult Finish(uint64_t num_nodes, uint32_t node_id_bytes, bool add_self_loops,
                                const std::string& indptr_path, const std::string& indices_path,
                                ProgressBar* progress) = 0;
  uint64_t edges_added = 0;
  uint32_t id_bits = 0;
};

namespace {

// A run file's minimum read buffer: below this, merging many runs degenerates into seeks.
constexpr size_t kMinMergeBufferBytes = size_t{1} << 20;

template <typename Key>
class KeyedCscBuilder final : public CscBuilder::Impl {
 public:
  KeyedCscBuilder(MemoryBudget& budget, uint64_t buffer_bytes, std::string spill_dir, uint32_t bits,
                  bool deduplicate)
      : spill_dir_(std::move(spill_dir)), deduplicate_(deduplicate) {
    id_bits = bits;
    size_t capacity = std::max<uint64_t>(buffer_bytes / (2 * sizeof(Key)), 4096);
    keys_ = ChargedArray<Key>(budget, capacity, "the edge sort buffer");
    scratch_ = ChargedArray<Key>(budget, capacity, "the edge sort scratch");
  }

  ~KeyedCscBuilder() override {
    for (const auto& run : runs_) {
      std::error_code ec;
      std::filesystem::remove(run.path, ec);
    }
  }

  void Add(std::span<const uint64_t> src, std::span<const uint64_t> dst) override {
    for (size_t i = 0; i < src.size(); ++i) {
      if (used_ == keys_.size()) SpillRun();
      keys_[used_++] = (static_cast<Key>(dst[i]) << id_bits) | src[i];
    }
    edges_added += src.size();
  }

  CscBuildResult Finish(uint64_t num_nodes, uint32_t node_id_bytes, bool add_self_loops,
                        const std::string& indptr_path, const std::string& indices_path,
                        ProgressBar* progress) override {
    SortBuffer();
    size_t max_fan_in = std::max<size_t>(2, scratch_.size() * sizeof(Key) / kMinMergeBufferBytes);
    while (runs_.size() > max_fan_in) MergeOldestRuns(max_fan_in);

    CscWriter writer(indptr_path, indices_path, node_id_bytes, add_self_loops);
    uint64_t total = used_;
    for (const auto& run : runs_) total += run.keys;
    if (progress) progress->Restart("merging edges", total);
    uint64_t mask = (id_bits == 64) ? ~uint64_t{0} : (uint64_t{1} << id_bits) - 1;
    uint64_t done = 0;
    Merge(runs_, std::span<const Key>(keys_.data(), used_), [&](Key key) {
      writer.Add(static_cast<uint64_t>(key >> id_bits), static_cast<uint64_t>(key) & mask);
      if ((++done & 0xFFFFF) == 0) {
        ThrowIfInterrupted();
        if (progress) progress->Update(done);
      }
    });
    RemoveRuns(runs_.size());
    return writer.Finish(num_nodes);
  }

 private:
  struct Run {
    std::string path;
    uint64_t keys = 0;
  };

  // One sorted input of a merge: a window onto a run file, or an in-memory span.
  struct Cursor {
    const Key* next = nullptr;
    const Key* end = nullptr;
    const FileReader* file = nullptr;
    uint64_t file_offset = 0;
    Key* buffer = nullptr;
    size_t buffer_keys = 0;

    bool Refill() {
      if (file == nullptr || file_offset >= file->size()) return false;
      size_t bytes = static_cast<size_t>(
          std::min<uint64_t>(buffer_keys * sizeof(Key), file->size() - file_offset));
      file->ReadExact(file_offset, buffer, bytes);
      file_offset += bytes;
      next = buffer;
      end = buffer + bytes / sizeof(Key);
      return next != end;
    }
  };

  void SortBuffer() {
    int key_bits = static_cast<int>(2 * id_bits);
    RadixSort(std::span<Key>(keys_.data(), used_), std::span<Key>(scratch_.data(), used_),
              key_bits);
    if (deduplicate_) used_ = std::unique(keys_.data(), keys_.data() + used_) - keys_.data();
  }

  void SpillRun() {
    ThrowIfInterrupted();
    SortBuffer();
    Run run{fmt::format("{}/run-{:06}.bin", spill_dir_, next_run_id_++), used_};
    FileWriter out(run.path);
    out.Append(keys_.data(), used_ * sizeof(Key));
    out.Finish(/*scratch=*/true);
    runs_.push_back(run);
    used_ = 0;
  }

  // Merges `runs` and the sorted in-memory `keys` into `sink`, deduplicating when asked. The
  // run files are read through slices of the sort scratch, which is free once sorting is done.
  template <typename Sink>
  void Merge(const std::vector<Run>& runs, std::span<const Key> keys, Sink&& sink) {
    std::vector<FileReader> files;
    files.reserve(runs.size());
    for (const auto& run : runs) files.emplace_back(run.path);
    std::vector<Cursor> cursors(runs.size() + 1);
    size_t slice = runs.empty() ? 0 : scratch_.size() / runs.size();
    for (size_t i = 0; i < runs.size(); ++i) {
      cursors[i].file = &files[i];
      cursors[i].buffer = scratch_.data() + i * slice;
      cursors[i].buffer_keys = slice;
      cursors[i].Refill();
    }
    cursors.back().next = keys.data();
    cursors.back().end = keys.data() + keys.size();

    // A binary min-heap of cursor indices ordered by their next key.
    std::vector<size_t> heap;
    for (size_t i = 0; i < cursors.size(); ++i) {
      if (cursors[i].next != cursors[i].end) heap.push_back(i);
    }
    auto greater = [&](size_t a, size_t b) { return *cursors[a].next > *cursors[b].next; };
    std::make_heap(heap.begin(), heap.end(), greater);
    bool have_last = false;
    Key last = 0;
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end(), greater);
      size_t top = heap.back();
      Cursor& c = cursors[top];
      // Drain this cursor while it stays below every other cursor's head: with few runs and
      // clustered keys most keys leave without touching the heap.
      const Key* limit_key = heap.size() > 1 ? cursors[heap.front()].next : nullptr;
      do {
        Key key = *c.next++;
        if (!deduplicate_ || !have_last || key != last) {
          sink(key);
          last = key;
          have_last = true;
        }
        if (c.next == c.end && !c.Refill()) break;
      } while (limit_key == nullptr || *c.next <= *limit_key);
      if (c.next != c.end) {
        std::push_heap(heap.begin(), heap.end(), greater);
      } else {
        heap.pop_back();
      }
    }
  }

  // Replaces the `count` oldest runs by one merged run.
  void MergeOldestRuns(size_t count) {
    std::vector<Run> group(runs_.begin(), runs_.begin() + count);
    Run merged{fmt::format("{}/run-{:06}.bin", spill_dir_, next_run_id_++), 0};
    {
      FileWriter out(merged.path);
      Merge(group, {}, [&](Key key) {
        out.AppendValue(key);
        ++merged.keys;
      });
      out.Finish(/*scratch=*/true);
    }
    RemoveRuns(count);
    runs_.push_back(merged);
    ThrowIfInterrupted();
  }

  void RemoveRuns(size_t count) {
    for (size_t i = 0; i < count; ++i) {
      std::error_code ec;
      std::filesystem::remove(runs_[i].path, ec);
    }
    runs_.erase(runs_.begin(), runs_.begin() + count);
  }

  std::string spill_dir_;
  bool deduplicate_;
  ChargedArray<Key> keys_;
  ChargedArray<Key> scratch_;
  size_t used_ = 0;
  std::vector<Run> runs_;
  int next_run_id_ = 0;
};

}  // namespace

CscBuilder::CscBuilder(MemoryBudget& budget, uint64_t buffer_bytes, std::string spill_dir,
                       uint32_t id_bits, bool deduplicate) {
  if (id_bits == 0 || id_bits > 64) throw Error::Internal("CscBuilder: id_bits out of range");
  if (2 * id_bits <= 64) {
    impl_ = std::make_unique<KeyedCscBuilder<uint64_t>>(budget, buffer_bytes, std::move(spill_dir),
                                                        id_bits, deduplicate);
  } else {
    impl_ = std::make_unique<KeyedCscBuilder<unsigned __int128>>(
        budget, buffer_bytes, std::move(spill_dir), id_bits, deduplicate);
  }
}

CscBuilder::~CscBuilder() = default;

void CscBuilder::Add(std::span<const uint64_t> src, std::span<const uint64_t> dst) {
  impl_->Add(src, dst);
}

uint64_t CscBuilder::edges_added() const { return impl_->edges_added; }
uint32_t CscBuilder::id_bits() const { return impl_->id_bits; }

CscBuildResult CscBuilder::Finish(uint64_t num_nodes, uint32_t node_id_bytes, bool add_self_loops,
                                  const std::string& indptr_path, const std::string& indices_path,
                                  ProgressBar* progress) {
  return impl_->Finish(num_nodes, node_id_bytes, add_self_loops, indptr_path, indices_path,
                       progress);
}

}  // namespace strata
