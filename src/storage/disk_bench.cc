#include "storage/disk_bench.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <vector>

#include "common/interrupt.h"
#include "common/random.h"
#include "storage/aligned_buffer.h"
#include "strata/error.h"

namespace strata {

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// O_DIRECT reads skip the page cache, but a buffered fallback would not, and pages cached by
// an earlier run of something else would flatter its numbers.
void DropPageCache(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

// An engine of `depth` with the file open and `depth` buffers of `read_bytes` registered.
struct BenchEngine {
  BenchEngine(const DiskBenchOptions& options, uint32_t depth, uint32_t read_bytes,
              MemoryBudget& budget)
      : buffers(budget, size_t{depth} * read_bytes, "disk benchmark read buffers") {
    IoEngineOptions engine_options;
    engine_options.kind = options.engine;
    engine_options.depth = depth;
    engine = MakeIoEngine(engine_options);
    file = engine->OpenFile(options.path);
    engine->RegisterBuffer(buffers.span());
  }

  // Declared first so that it is destroyed last: the engine drains into it.
  AlignedBuffer buffers;
  std::unique_ptr<IoEngine> engine;
  int file = 0;
};

// Keeps exactly `depth` reads in flight until the deadline, each refilled the moment its
// completion is reaped, then drains. `next_offset` picks where each read goes. Returns the
// number of reads, their summed latency and the elapsed time including the drain.
template <typename NextOffset>
void KeepQueueFull(BenchEngine& bench, uint32_t depth, uint32_t read_bytes, double seconds,
                   NextOffset next_offset, uint64_t* reads, double* latency_seconds,
                   double* elapsed_seconds) {
  IoEngine& engine = *bench.engine;
  std::vector<Clock::time_point> submitted(depth);
  std::vector<ReadRequest> batch;
  batch.reserve(depth);
  std::vector<ReadCompletion> done(depth);
  auto request = [&](uint32_t slot) {
    return ReadRequest{bench.file, next_offset(), read_bytes,
                       bench.buffers.data() + size_t{slot} * read_bytes, slot};
  };
  Clock::time_point start = Clock::now();
  Clock::time_point deadline =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  for (uint32_t slot = 0; slot < depth; ++slot) {
    batch.push_back(request(slot));
    submitted[slot] = start;
  }
  engine.Submit(batch);
  *reads = 0;
  Clock::duration latency{};
  bool refilling = true;
  while (engine.outstanding() > 0) {
    size_t n = engine.Reap(done, 1);
    Clock::time_point now = Clock::now();
    if (now >= deadline) refilling = false;
    batch.clear();
    for (size_t i = 0; i < n; ++i) {
      uint32_t slot = static_cast<uint32_t>(done[i].tag);
      latency += now - submitted[slot];
      ++*reads;
      if (refilling) {
        batch.push_back(request(slot));
        submitted[slot] = now;
      }
    }
    if (!batch.empty()) engine.Submit(batch);
    ThrowIfInterrupted();
  }
  *elapsed_seconds = Seconds(Clock::now() - start);
  *latency_seconds = Seconds(latency);
}

RandomReadResult RunRandomReads(const DiskBenchOptions& options, uint64_t seed, uint32_t depth,
                                uint64_t file_bytes, MemoryBudget& budget, DiskBenchResult* info) {
  DropPageCache(options.path);
  BenchEngine bench(options, depth, options.random_read_bytes, budget);
  info->engine = bench.engine->name();
  info->direct = bench.engine->direct(bench.file);
  info->buffer_registered = bench.engine->buffer_registered();
  // Whole blocks only, so that every read lies inside the file.
  uint64_t blocks = file_bytes / options.random_read_bytes;
  Rng rng(MixSeed(seed, depth));
  auto next_offset = [&] { return rng.Below(blocks) * options.random_read_bytes; };
  RandomReadResult r;
  r.depth = depth;
  double latency_seconds = 0;
  KeepQueueFull(bench, depth, options.random_read_bytes, options.seconds_per_test, next_offset,
                &r.reads, &latency_seconds, &r.seconds);
  r.iops = r.reads / r.seconds;
  r.mb_per_s = r.iops * options.random_read_bytes / 1e6;
  r.mean_latency_us = r.reads > 0 ? latency_seconds / r.reads * 1e6 : 0;
  return r;
}

SequentialReadResult RunSequentialReads(const DiskBenchOptions& options, uint64_t seed,
                                        uint64_t file_bytes, MemoryBudget& budget,
                                        DiskBenchResult* info) {
  DropPageCache(options.path);
  uint32_t depth = options.sequential_depth;
  uint32_t read_bytes = options.sequential_read_bytes;
  BenchEngine bench(options, depth, read_bytes, budget);
  info->engine = bench.engine->name();
  info->direct = bench.engine->direct(bench.file);
  // Starts anywhere (for the same reason as the random seed) and wraps around at the end: with
  // O_DIRECT a second pass reads the disk again.
  uint64_t end = file_bytes / read_bytes * read_bytes;
  uint64_t position = Rng(seed).Below(end / read_bytes) * read_bytes;
  auto next_offset = [&] {
    if (position + read_bytes > end) position = 0;
    uint64_t offset = position;
    position += read_bytes;
    return offset;
  };
  SequentialReadResult r;
  r.depth = depth;
  r.read_bytes = read_bytes;
  uint64_t reads = 0;
  double latency_seconds = 0;
  KeepQueueFull(bench, depth, read_bytes, options.seconds_per_test, next_offset, &reads,
                &latency_seconds, &r.seconds);
  r.bytes = reads * read_bytes;
  r.mb_per_s = r.bytes / r.seconds / 1e6;
  return r;
}

}  // namespace

DiskBenchResult RunDiskBench(const DiskBenchOptions& options, MemoryBudget& budget,
                             const std::function<void(const DiskBenchResult&)>& on_progress) {
  if (!(options.seconds_per_test > 0)) {
    throw Error::Input(
        fmt::format("seconds per test must be positive, not {}", options.seconds_per_test));
  }
  if (options.random_read_bytes == 0 || options.random_read_bytes % kDirectIoAlignment != 0 ||
      options.sequential_read_bytes == 0 ||
      options.sequential_read_bytes % kDirectIoAlignment != 0 || options.sequential_depth == 0) {
    throw Error::Internal("disk benchmark read sizes must be multiples of 4096");
  }
  DiskBenchResult result;
  result.path = options.path;
  {
    // Opening through an engine gives the same errors (missing file, not a regular file) and
    // the same size that the tests will see.
    IoEngineOptions probe;
    probe.kind = IoEngineOptions::Kind::kPread;
    probe.depth = 1;
    probe.pread_threads = 1;
    auto engine = MakeIoEngine(probe);
    result.file_bytes = engine->file_size(engine->OpenFile(options.path));
  }
  if (result.file_bytes < options.sequential_read_bytes) {
    throw Error::Input(fmt::format("file is too small for a disk benchmark: {} bytes, needs at "
                                   "least {}",
                                   result.file_bytes, options.sequential_read_bytes),
                       options.path);
  }
  uint64_t seed = options.seed;
  if (seed == 0) seed = static_cast<uint64_t>(Clock::now().time_since_epoch().count());
  for (uint32_t depth : options.random_depths) {
    result.random.push_back(
        RunRandomReads(options, seed, depth, result.file_bytes, budget, &result));
    if (on_progress) on_progress(result);
  }
  result.sequential = RunSequentialReads(options, seed, result.file_bytes, budget, &result);
  if (on_progress) on_progress(result);
  return result;
}

}  // namespace strata
