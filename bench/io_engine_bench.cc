// The IoEngine's own cost per read, without the disk: 4 KiB random reads of a file that sits
// in the page cache (read buffered), at depth 64. What is left is submission, completion and
// the engine's bookkeeping; compare with the disk's IOPS from `strata bench disk` to see how
// much of a core the engine needs to keep the disk busy.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "common/random.h"
#include "storage/aligned_buffer.h"
#include "strata/io_engine.h"
#include "strata/memory_budget.h"

namespace strata {
namespace {

constexpr uint64_t kFileBytes = uint64_t{64} << 20;
constexpr uint32_t kReadBytes = 4096;

// A 64 MiB file under $TMPDIR (or /tmp), written once and removed at exit. The path lives
// on the heap so that the exit handler never sees it destroyed.
const std::string& CachedFile() {
  static const std::string* path = [] {
    const char* base = std::getenv("TMPDIR");
    auto* p =
        new std::string(std::string(base && *base ? base : "/tmp") + "/strata-io-bench-XXXXXX");
    int fd = ::mkstemp(p->data());
    if (fd < 0) std::abort();
    std::vector<char> block(1 << 20, 'x');
    for (uint64_t done = 0; done < kFileBytes; done += block.size()) {
      if (::write(fd, block.data(), block.size()) != static_cast<ssize_t>(block.size())) {
        std::abort();
      }
    }
    ::close(fd);
    std::atexit([] { ::unlink(CachedFile().c_str()); });
    return p;
  }();
  return *path;
}

void BM_CachedRandomReads(benchmark::State& state) {
  IoEngineOptions options;
  options.kind =
      state.range(0) == 0 ? IoEngineOptions::Kind::kUring : IoEngineOptions::Kind::kPread;
  options.depth = static_cast<uint32_t>(state.range(1));
  options.direct_io = false;
  MemoryBudget budget(uint64_t{1} << 30);
  AlignedBuffer buffers(budget, size_t{options.depth} * kReadBytes, "bench buffers");
  auto engine = MakeIoEngine(options);
  int file = engine->OpenFile(CachedFile());
  engine->RegisterBuffer(buffers.span());
  Rng rng(1);
  auto request = [&](uint64_t slot) {
    return ReadRequest{file, rng.Below(kFileBytes / kReadBytes) * kReadBytes, kReadBytes,
                       buffers.data() + slot * kReadBytes, slot};
  };
  std::vector<ReadRequest> batch;
  for (uint32_t slot = 0; slot < options.depth; ++slot) batch.push_back(request(slot));
  engine->Submit(batch);
  std::vector<ReadCompletion> done(options.depth);
  uint64_t reads = 0;
  for (auto _ : state) {
    size_t n = engine->Reap(done, 1);
    batch.clear();
    for (size_t i = 0; i < n; ++i) batch.push_back(request(done[i].tag));
    engine->Submit(batch);
    reads += n;
  }
  state.SetItemsProcessed(static_cast<int64_t>(reads));
  state.SetLabel(std::string(engine->name()));
}
// Real time: the pread pool's work happens on its threads, which CPU time would not count.
BENCHMARK(BM_CachedRandomReads)
    ->Args({0, 1})
    ->Args({0, 64})
    ->Args({1, 1})
    ->Args({1, 64})
    ->UseRealTime();

}  // namespace
}  // namespace strata
