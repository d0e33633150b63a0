// strata bench gather DATASET --store direct|mmap|memory [--cold] [--cache-fraction F ...]
#include <cstdio>

#include "cli/command.h"
#include "cli/option_parsers.h"
#include "features/gather_bench.h"
#include "strata/memory_budget.h"

namespace strata::cli {

Runner AddBenchGatherCommand(CLI::App& bench) {
  auto* cmd = bench.add_subcommand("gather", "Measure feature-row gathers from a store");
  struct Args {
    GatherBenchOptions options;
    std::string store = "direct";
    std::string policy = "sieve";
    std::string hot_policy = "presample";
    std::string ids = "uniform";
    std::string fanouts = "15,10,5";
    std::string engine = "auto";
    std::string budget;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  GatherBenchOptions& o = args->options;
  cmd->add_option("DATASET", o.dataset, "dataset directory")->required();
  cmd->add_option("--store", args->store, "memory, mmap or direct")
      ->check(CLI::IsMember({"memory", "mmap", "direct"}));
  cmd->add_flag("--cold", o.cold, "drop features.bin from the page cache first");
  cmd->add_option("--cache-fraction", o.cache_fraction,
                  "direct: cache size as a share of the feature bytes")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--hot-share", o.hot_share, "share of the cache for the static hot tier")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--cache-policy", args->policy, "dynamic tier eviction: clock, sieve, s3fifo")
      ->check(CLI::IsMember({"clock", "sieve", "s3fifo"}));
  cmd->add_option("--window", o.window, "look-ahead batches pinned in the cache (0: off)");
  cmd->add_option("--hot-policy", args->hot_policy, "hot tier rows: presample, rpr or degree")
      ->check(CLI::IsMember({"presample", "rpr", "degree"}));
  cmd->add_option("--presample-batches", o.presample_batches, "batches sampled to rank hotness")
      ->capture_default_str();
  cmd->add_option("--ids", args->ids, "uniform random ids, or khop neighbourhoods")
      ->check(CLI::IsMember({"uniform", "khop"}));
  cmd->add_option("--batch-rows", o.batch_rows, "uniform: ids per batch")->capture_default_str();
  cmd->add_option("--batch-size", o.batch_size, "khop: seed nodes per batch")
      ->capture_default_str();
  cmd->add_option("--fanouts", args->fanouts, "khop: fanouts, input layer first");
  cmd->add_option("--seconds", o.seconds, "how long to measure")->capture_default_str();
  cmd->add_option("--io-depth", o.io_depth, "reads in flight")->capture_default_str();
  cmd->add_option("--io-engine", args->engine, "auto, uring or pread")
      ->check(CLI::IsMember({"auto", "uring", "pread"}));
  cmd->add_option("--max-read-bytes", o.max_read_bytes, "bound on a coalesced read")
      ->capture_default_str();
  cmd->add_flag("!--no-coalesce", o.coalesce, "one read per row instead of coalesced reads");
  cmd->add_option("--memory-budget", args->budget, "memory budget (default: RAM/4)");
  cmd->add_option("--seed", o.seed, "random seed");
  cmd->add_flag("--json", args->json, "print one JSON object");
  return [args] {
    GatherBenchOptions o = args->options;
    o.store = ParseFeatureStoreKind(args->store);
    o.policy = ParseCachePolicyKind(args->policy);
    o.hot_policy = ParseHotnessPolicy(args->hot_policy);
    o.khop_ids = args->ids == "khop";
    o.fanouts = ParseFanouts(args->fanouts, "--fanouts");
    o.engine = args->engine == "uring"   ? IoEngineOptions::Kind::kUring
               : args->engine == "pread" ? IoEngineOptions::Kind::kPread
                                         : IoEngineOptions::Kind::kAuto;
    o.memory_budget_bytes = MemoryBudgetFromOption(args->budget);
    nlohmann::ordered_json report = RunGatherBench(o);
    if (args->json) {
      std::printf("%s\n", report.dump().c_str());
      return;
    }
    std::printf(
        "%s store%s, %s ids: %.0f rows/s, %.1f MB/s useful, %.0f reads/s, hit rate %.3f "
        "(hot %.3f, dynamic %.3f), read amplification %.2f, %.2f CPU s per M rows\n",
        report["store"].get<std::string>().c_str(),
        report.contains("engine") ? (" (" + report["engine"].get<std::string>() + ")").c_str() : "",
        report["ids"].get<std::string>().c_str(), report["rows_per_s"].get<double>(),
        report["useful_bytes_per_s"].get<double>() / 1e6, report["reads_per_s"].get<double>(),
        report["hit_rate"].get<double>(), report["tier_hit_rates"]["hot"].get<double>(),
        report["tier_hit_rates"]["dynamic"].get<double>(),
        report["read_amplification"].get<double>(),
        report["cpu_seconds_per_million_rows"].get<double>());
  };
}

}  // namespace strata::cli
