// strata partition DATASET OUT --parts K [--method gap|random] [--hubs FRACTION] [--json]

#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/dataset_summary.h"
#include "storage/file.h"
#include "strata/memory_budget.h"
#include "strata/partition.h"

namespace strata::cli {

Runner AddPartitionCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "partition", "Renumber a dataset so that each partition's nodes are contiguous");
  struct Args {
    PartitionOptions options;
    std::string method = "gap";
    std::string balance = "nodes";
    std::string budget;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  PartitionOptions& o = args->options;
  // Multistage training keeps the hubs in every macro-batch, which wins back much of what the
  // partitions' cut edges cost it (docs/training.md, "Accuracy"), for a section of 1% of the rows.
  o.hub_fraction = 0.01;
  cmd->add_option("DATASET", o.input, "dataset to partition")->required();
  cmd->add_option("OUT", o.out, "partitioned dataset directory to create")->required();
  cmd->add_option("--parts", o.parts, "number of partitions")->required();
  cmd->add_option("--method", args->method,
                  "gap (label-balanced Fennel), random, or metis (in memory)")
      ->capture_default_str();
  cmd->add_option("--hubs", o.hub_fraction,
                  "share of nodes kept in memory as hubs, in every macro-batch (0: none)")
      ->capture_default_str();
  cmd->add_option("--hub-walk-steps", o.hub_walk_steps, "steps of the hub-scoring random walk")
      ->capture_default_str();
  cmd->add_option("--passes", o.passes,
                  "GAP: streaming passes over the graph (after clustering, 1 does)")
      ->capture_default_str();
  cmd->add_option("--cluster-rounds", o.cluster_rounds,
                  "GAP: label-propagation rounds that cluster the nodes first (0: none)")
      ->capture_default_str();
  cmd->add_option("--imbalance", o.imbalance, "GAP: most nodes of a label per partition, × share")
      ->capture_default_str();
  cmd->add_option("--balance", args->balance,
                  "metis: balance the nodes, also the training nodes (train), or also each "
                  "class's training nodes (classes)")
      ->check(CLI::IsMember({"nodes", "train", "classes"}))
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "random seed (random method)");
  cmd->add_option("--memory-budget", args->budget, "memory budget, e.g. 1G (default: RAM/4)");
  cmd->add_flag("--force", o.replace_existing, "replace OUT if it exists");
  cmd->add_flag("--json", args->json, "print the result as JSON");
  return [args] {
    auto start = std::chrono::steady_clock::now();
    PartitionOptions o = args->options;
    o.method = ParsePartitionMethod(args->method);
    o.balance = ParseMetisBalance(args->balance);
    o.memory_budget_bytes = MemoryBudgetFromOption(args->budget);
    o.progress = true;
    const DatasetMeta meta = PartitionDataset(o);
    const PartitionMeta& p = *meta.partition;
    if (args->json) {
      // The partition object exactly as meta.json records it.
      const Dataset out = Dataset::Open(o.out);
      nlohmann::ordered_json j = {{"out", o.out}};
      j.update(nlohmann::ordered_json::parse(ReadWholeFile(out.PathOf(kMetaFile)))["partition"]);
      std::printf("%s\n", j.dump().c_str());
      return;
    }
    PrintWritten(o.out, meta, start);
    std::printf(
        "%s, %u parts of %llu to %llu nodes, edge cut %.3f, label balance %.3f, %llu hubs\n",
        p.method.c_str(), p.parts, static_cast<unsigned long long>(p.min_part_nodes),
        static_cast<unsigned long long>(p.max_part_nodes), p.edge_cut_ratio, p.label_balance,
        static_cast<unsigned long long>(p.hubs));
  };
}

}  // namespace strata::cli
