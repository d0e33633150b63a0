// strata bench disk DATASET [--seconds S] [--json] [--file features.bin] [--engine E]
//                           [--depths 1,32,128]
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/command.h"
#include "storage/disk_bench.h"
#include "strata/dataset.h"
#include "strata/memory_budget.h"

namespace strata::cli {

namespace {

// DATASET/features.bin by default; --file names another file of the dataset (or any file,
// when absolute); DATASET may itself be a file, or any directory.
std::string BenchmarkedPath(const std::string& dataset, const std::string& file) {
  const std::filesystem::path dir(dataset);
  if (!file.empty()) return (dir / file).string();
  if (std::filesystem::is_regular_file(dir)) return dataset;
  return (dir / kFeaturesFile).string();
}

// "4 KiB", "1 MiB": the read sizes are whole units, FormatBytes would say "4.00 KiB".
std::string ReadSize(uint32_t bytes) {
  if (bytes % (1u << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes % (1u << 10) == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} B", bytes);
}

nlohmann::json ResultJson(const DiskBenchResult& r, double seconds_per_test) {
  nlohmann::json j;
  j["file"] = r.path;
  j["file_bytes"] = r.file_bytes;
  j["engine"] = r.engine;
  j["direct"] = r.direct;
  j["buffer_registered"] = r.buffer_registered;
  j["seconds_per_test"] = seconds_per_test;
  j["random_4k"] = nlohmann::json::array();
  for (const RandomReadResult& x : r.random) {
    j["random_4k"].push_back({{"depth", x.depth},
                              {"reads", x.reads},
                              {"seconds", x.seconds},
                              {"iops", x.iops},
                              {"mb_per_s", x.mb_per_s},
                              {"mean_latency_us", x.mean_latency_us}});
  }
  j["sequential_1m"] = {{"depth", r.sequential.depth},
                        {"read_bytes", r.sequential.read_bytes},
                        {"bytes", r.sequential.bytes},
                        {"seconds", r.sequential.seconds},
                        {"mb_per_s", r.sequential.mb_per_s}};
  return j;
}

// Prints the lines for the tests finished since the last call, so a terminal sees each test
// as it ends rather than all of them after a quarter of a minute.
class TextReport {
 public:
  explicit TextReport(const DiskBenchOptions& options) : options_(options) {}

  void Update(const DiskBenchResult& r) {
    if (!header_printed_) {
      header_printed_ = true;
      std::printf("file         %s (%s)\n", r.path.c_str(), FormatBytes(r.file_bytes).c_str());
      std::printf("engine       %s, %s, %s buffers\n", r.engine.c_str(),
                  r.direct ? "O_DIRECT" : "buffered",
                  r.buffer_registered ? "registered" : "unregistered");
      if (!r.direct) {
        std::printf(
            "note         the file system refuses O_DIRECT: these numbers measure the "
            "page cache, not the disk\n");
      }
      std::printf("random %s reads, %g s per depth\n", ReadSize(options_.random_read_bytes).c_str(),
                  options_.seconds_per_test);
      std::printf("  %6s %12s %10s %18s\n", "depth", "IOPS", "MB/s", "mean latency");
    }
    for (; random_printed_ < r.random.size(); ++random_printed_) {
      const RandomReadResult& x = r.random[random_printed_];
      std::printf("  %6u %12.0f %10.1f %15.1f us\n", x.depth, x.iops, x.mb_per_s,
                  x.mean_latency_us);
    }
    if (r.sequential.depth != 0) {
      std::printf("sequential %s reads, depth %u\n",
                  ReadSize(options_.sequential_read_bytes).c_str(), r.sequential.depth);
      std::printf("  %.1f MB/s\n", r.sequential.mb_per_s);
    }
    std::fflush(stdout);
  }

 private:
  const DiskBenchOptions& options_;
  bool header_printed_ = false;
  size_t random_printed_ = 0;
};

}  // namespace

Runner AddBenchDiskCommand(CLI::App& bench) {
  auto* cmd = bench.add_subcommand(
      "disk",
      "Measure the disk under a dataset: O_DIRECT random 4 KiB reads at several queue depths "
      "and 1 MiB sequential reads");
  struct Args {
    std::string dataset;
    std::string file;
    double seconds = 3;
    bool json = false;
    std::string engine = "auto";
    std::vector<uint32_t> depths = {1, 32, 128};
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("DATASET", args->dataset, "dataset directory (or the file to read)")->required();
  cmd->add_option("--file", args->file, "file to read, relative to DATASET (default features.bin)");
  cmd->add_option("--seconds", args->seconds, "seconds per test (default 3)")
      ->check(CLI::Range(0.01, 3600.0));
  cmd->add_option("--depths", args->depths, "queue depths of the random reads (default 1,32,128)")
      ->delimiter(',')
      ->check(CLI::Range(1, 32768));
  cmd->add_option("--engine", args->engine, "I/O engine: auto, io_uring or pread (default auto)")
      ->check(CLI::IsMember({"auto", "io_uring", "pread"}));
  cmd->add_flag("--json", args->json, "print one JSON object");
  return [args] {
    DiskBenchOptions options;
    options.path = BenchmarkedPath(args->dataset, args->file);
    options.seconds_per_test = args->seconds;
    options.random_depths = args->depths;
    options.engine = args->engine == "io_uring" ? IoEngineOptions::Kind::kUring
                     : args->engine == "pread"  ? IoEngineOptions::Kind::kPread
                                                : IoEngineOptions::Kind::kAuto;
    // The buffers are small (depth x 4 KiB, 8 x 1 MiB); the budget only keeps them honest.
    MemoryBudget budget(MemoryBudgetFromOption(""));
    if (args->json) {
      DiskBenchResult result = RunDiskBench(options, budget);
      std::printf("%s\n", ResultJson(result, options.seconds_per_test).dump(2).c_str());
    } else {
      TextReport report(options);
      RunDiskBench(options, budget, [&](const DiskBenchResult& r) { report.Update(r); });
    }
  };
}

}  // namespace strata::cli
