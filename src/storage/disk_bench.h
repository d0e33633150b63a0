// RunDiskBench measures the ceilings of the disk under a file, the numbers an out-of-core
// epoch is judged against: random 4 KiB O_DIRECT reads at several queue depths (IOPS and mean
// latency; feature rows are read this way) and large sequential reads (bandwidth; macro-batches
// and the CSC builder read this way). It reads through the same IoEngine that training uses,
// so the numbers include its overhead.
//
// The page cache is dropped for the file first (POSIX_FADV_DONTNEED). When the file system
// refuses O_DIRECT the numbers measure the page cache, not the disk; DiskBenchResult::direct
// says which.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "strata/io_engine.h"
#include "strata/memory_budget.h"

namespace strata {

struct DiskBenchOptions {
  std::string path;
  double seconds_per_test = 3;
  std::vector<uint32_t> random_depths = {1, 32, 128};
  uint32_t random_read_bytes = 4096;
  uint32_t sequential_read_bytes = uint32_t{1} << 20;
  uint32_t sequential_depth = 8;
  // 0 picks a seed from the clock: a virtual disk's host may cache what the last run read, so
  // replaying the same offsets would measure that cache.
  uint64_t seed = 0;
  IoEngineOptions::Kind engine = IoEngineOptions::Kind::kAuto;
};

struct RandomReadResult {
  uint32_t depth = 0;
  uint64_t reads = 0;
  double seconds = 0;
  double iops = 0;
  double mb_per_s = 0;         // 10^6 bytes per second
  double mean_latency_us = 0;  // from Submit to the Reap that returned it
};

struct SequentialReadResult {
  uint32_t depth = 0;
  uint32_t read_bytes = 0;
  uint64_t bytes = 0;
  double seconds = 0;
  double mb_per_s = 0;
};

struct DiskBenchResult {
  std::string path;
  std::string engine;  // "io_uring" or "pread"
  bool direct = false;
  bool buffer_registered = false;
  uint64_t file_bytes = 0;
  std::vector<RandomReadResult> random;
  SequentialReadResult sequential;
};

// Runs every test in turn for options.seconds_per_test each; `on_progress`, when set, is called
// with the results so far after each test. The read buffers are charged to `budget`. Throws
// strata::Error when the file cannot be read or is smaller than one sequential read.
DiskBenchResult RunDiskBench(const DiskBenchOptions& options, MemoryBudget& budget,
                             const std::function<void(const DiskBenchResult&)>& on_progress = {});

}  // namespace strata
