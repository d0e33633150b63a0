// strata bench sample DATASET --fanouts 15,10,5 --batch-size 1000 [--batches N] [--threads T]
//     [--sampler neighbor|labor] [--batch-dependency K] [--labor-importance 0|N|star]
//                             [--seed S] [--memory-budget B] [--json]
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>

#include "cli/command.h"
#include "cli/option_parsers.h"
#include "common/parallel.h"
#include "sampling/sample_bench.h"
#include "strata/memory_budget.h"

namespace strata::cli {

Runner AddBenchSampleCommand(CLI::App& bench) {
  auto* cmd = bench.add_subcommand("sample", "Measure neighbour sampling of training batches");
  struct Args {
    SampleBenchOptions options;
    std::string fanouts = "15,10,5";
    std::string budget;
    std::string sampler = "neighbor";
    uint32_t batch_dependency = 1;
    std::string labor_importance = "0";
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  SampleBenchOptions& o = args->options;
  o.threads = DefaultThreads();
  cmd->add_option("DATASET", o.dataset, "dataset directory")->required();
  cmd->add_option("--fanouts", args->fanouts, "fanouts, input layer first; -1 = all")
      ->capture_default_str();
  cmd->add_option("--batch-size", o.batch_size, "seed nodes per batch")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--batches", o.batches, "batches to sample")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--threads", o.threads, "threads sampling each batch")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "random seed")->capture_default_str();
  cmd->add_option("--sampler", args->sampler, "neighbor or labor")->capture_default_str();
  cmd->add_option("--labor-importance", args->labor_importance,
                  "labor: 0 (LABOR-0), N importance steps, or star (until convergence)")
      ->capture_default_str();
  cmd->add_option("--batch-dependency", args->batch_dependency,
                  "labor: batches whose variates drift from one set to the next (1: independent)")
      ->capture_default_str();
  cmd->add_option("--memory-budget", args->budget, "memory budget (default: RAM/4)");
  cmd->add_flag("--json", args->json, "print one JSON object");
  return [args] {
    SampleBenchOptions o = args->options;
    o.fanouts = ParseFanouts(args->fanouts, "--fanouts");
    o.labor = ParseLaborOptions(args->sampler, args->batch_dependency, args->labor_importance);
    o.memory_budget_bytes = MemoryBudgetFromOption(args->budget);
    nlohmann::ordered_json report = RunSampleBench(o);
    if (args->json) {
      std::printf("%s\n", report.dump().c_str());
      return;
    }
    std::string per_block;
    for (const auto& e : report["edges_per_block_mean"]) {
      per_block += fmt::format("{}{:.0f}", per_block.empty() ? "" : ", ", e.get<double>());
    }
    std::string sources;
    for (const auto& n : report["sources_per_block_mean"]) {
      sources += fmt::format("{}{:.0f}", sources.empty() ? "" : ", ", n.get<double>());
    }
    std::printf(
        "%llu batches of %llu seeds, fanouts %s, %s sampler (importance %s, dependency %u), %u "
        "threads: %.1f "
        "batches/s, %.2f M sampled edges/s, %.2f ms per batch; per batch %.0f distinct input "
        "rows, distinct sources per block (input layer first) %s, edges per block %s; "
        "consecutive batches share %.1f%% of their input rows\n",
        static_cast<unsigned long long>(o.batches), static_cast<unsigned long long>(o.batch_size),
        args->fanouts.c_str(), args->sampler.c_str(), args->labor_importance.c_str(),
        o.labor.batch_dependency, o.threads, report["batches_per_s"].get<double>(),
        report["sampled_edges_per_s"].get<double>() / 1e6, report["sample_ms_mean"].get<double>(),
        report["input_nodes_per_batch_mean"].get<double>(), sources.c_str(), per_block.c_str(),
        100 * report["consecutive_input_overlap"].get<double>());
  };
}

}  // namespace strata::cli
