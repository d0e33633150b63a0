// strata generate OUT --nodes N --avg-degree D --feature-dim F --classes C
//                 [--graph sbm|rmat|hsbm]

#include <fmt/format.h>

#include "cli/command.h"
#include "cli/dataset_summary.h"
#include "strata/dataset.h"
#include "strata/error.h"
#include "strata/generate.h"
#include "strata/memory_budget.h"

namespace strata::cli {

Runner AddGenerateCommand(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("generate", "Write a synthetic dataset (SBM, R-MAT or hierarchical SBM)");
  struct Args {
    GenerateOptions options;
    std::string graph = "sbm";
    std::string dtype = "float32";
    std::string budget;
    std::string like;
  };
  auto args = std::make_shared<Args>();
  GenerateOptions& o = args->options;
  cmd->add_option("OUT", o.out, "dataset directory to create")->required();
  cmd->add_option("--nodes", o.nodes, "number of nodes")->required();
  auto* avg_degree =
      cmd->add_option("--avg-degree", o.avg_degree, "average degree (edges per node)");
  auto* feature_dim = cmd->add_option("--feature-dim", o.feature_dim, "feature dimension");
  auto* classes = cmd->add_option("--classes", o.classes, "number of classes");
  cmd->add_option("--like", args->like,
                  "a hierarchical graph calibrated to a real one: products, papers100M or "
                  "arxiv (sets --graph hsbm and every option above but --nodes)")
      ->check(CLI::IsMember({"products", "papers100M", "arxiv"}));
  cmd->add_option("--graph", args->graph,
                  "sbm (degree-corrected SBM), rmat, or hsbm (hierarchical communities)")
      ->check(CLI::IsMember({"sbm", "rmat", "hsbm"}));
  cmd->add_option("--seed", o.seed, "random seed");
  cmd->add_option("--homophily", o.homophily,
                  "SBM: share of intra-class edges; HSBM: the edge homophily aimed at")
      ->capture_default_str();
  cmd->add_option("--cuts", o.cuts,
                  "HSBM: share of edges the planted blocks cut at 2, 4, 8, ... parts")
      ->delimiter(',');
  cmd->add_option("--degree-exponent", o.degree_exponent, "power-law degree exponent")
      ->capture_default_str();
  cmd->add_option("--class-skew", o.class_skew,
                  "HSBM: class k holds a share of the nodes proportional to (k + 1)^-skew")
      ->capture_default_str();
  cmd->add_option("--label-noise", o.label_noise,
                  "HSBM: share of each leaf community, its lightest nodes, labelled at random")
      ->capture_default_str();
  cmd->add_option("--isolated", o.isolated, "share of nodes without edges (at most 0.5)")
      ->capture_default_str();
  cmd->add_option("--noise", o.noise,
                  "feature noise std (class centroids have norm ~1); binary: topic words are "
                  "1 + 1/noise times as likely")
      ->capture_default_str();
  cmd->add_option("--community-offset", o.community_offset,
                  "HSBM: norm of the feature offset each community level below the class adds")
      ->capture_default_str();
  cmd->add_option("--binary-features", o.binary_ones,
                  "dense binary bag-of-words features with this many ones per row");
  cmd->add_option("--feature-density", o.feature_density,
                  "sparse bag-of-words features stored as CSR, this share of each row set "
                  "(e.g. 0.002); for --full-graph training");
  cmd->add_option("--train-ratio", o.train_ratio, "share of nodes in the train split")
      ->capture_default_str();
  cmd->add_option("--val-ratio", o.val_ratio, "share of nodes in the val split")
      ->capture_default_str();
  cmd->add_option("--test-ratio", o.test_ratio, "share of nodes in the test split")
      ->capture_default_str();
  cmd->add_option("--feature-dtype", args->dtype, "float32 or float16")
      ->check(CLI::IsMember({"float32", "float16"}));
  cmd->add_option("--memory-budget", args->budget, "memory budget, e.g. 1G (default: RAM/4)");
  cmd->add_option("--node-id-bytes", o.node_id_bytes, "force 4- or 8-byte node ids");
  cmd->add_option("--threads", o.threads, "worker threads (default: all cores)");
  cmd->add_flag("--force", o.replace_existing, "replace OUT if it exists");
  return [args, cmd, avg_degree, feature_dim, classes] {
    auto start = std::chrono::steady_clock::now();
    GenerateOptions o = args->options;
    o.graph = ParseGraphModel(args->graph);
    if (!args->like.empty()) {
      // The preset's values, except where an option was given.
      GenerateOptions given = o;
      ApplyGraphPreset(args->like, o);
      for (const char* name : {"--graph", "--homophily", "--cuts", "--noise", "--community-offset",
                               "--degree-exponent", "--class-skew", "--label-noise",
                               "--train-ratio", "--val-ratio", "--test-ratio"}) {
        if (cmd->count(name) > 0) {
          throw Error::Input(fmt::format("--like {} sets {}; leave it out", args->like, name));
        }
      }
      if (avg_degree->count() > 0) o.avg_degree = given.avg_degree;
      if (feature_dim->count() > 0) o.feature_dim = given.feature_dim;
      if (classes->count() > 0) o.classes = given.classes;
    } else if (avg_degree->count() == 0 || feature_dim->count() == 0 || classes->count() == 0) {
      throw Error::Input("--avg-degree, --feature-dim and --classes are required without --like");
    }
    o.feature_dtype = ParseFeatureDtype(args->dtype, "--feature-dtype");
    o.memory_budget_bytes = MemoryBudgetFromOption(args->budget);
    o.progress = true;
    DatasetMeta meta = GenerateDataset(o);
    PrintWritten(o.out, meta, start);
  };
}

}  // namespace strata::cli
