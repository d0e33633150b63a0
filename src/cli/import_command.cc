// strata import OUT --npy DIR | --edge-list FILE [--features F.npy|F.npz --labels L.npy
//   --split DIR] | --ogb DIR [--ogb-split NAME]

#include "cli/command.h"
#include "cli/dataset_summary.h"
#include "strata/dataset.h"
#include "strata/error.h"
#include "strata/import.h"
#include "strata/memory_budget.h"

namespace strata::cli {

Runner AddImportCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "import", "Build a dataset from .npy arrays, an edge list or an OGB download");
  struct Args {
    ImportOptions options;
    std::string npy_dir;
    std::string ogb_dir;
    std::string ogb_split;
    EdgeListSources edge_list;
    std::string dtype = "float32";
    std::string budget;
  };
  auto args = std::make_shared<Args>();
  ImportOptions& o = args->options;
  cmd->add_option("OUT", o.out, "dataset directory to create")->required();
  auto* npy = cmd->add_option("--npy", args->npy_dir,
                              "directory with edge_index.npy, features.npy (or a sparse "
                              "features.npz), labels.npy, {train,val,test}_idx.npy; or an .npz "
                              "archive of those arrays");
  auto* edges = cmd->add_option("--edge-list", args->edge_list.edge_list,
                                "text file, two node ids per line, '#' comments");
  auto* ogb = cmd->add_option("--ogb", args->ogb_dir,
                              "an OGB node-property-prediction directory as downloaded "
                              "(raw/*.csv.gz or raw/data.npz, split/NAME/)");
  auto* ogb_split = cmd->add_option("--ogb-split", args->ogb_split,
                                    "with --ogb: the split under split/ (default: the only one)");
  ogb_split->needs(ogb);
  npy->excludes(edges);
  ogb->excludes(npy)->excludes(edges);
  auto* features = cmd->add_option("--features", args->edge_list.features,
                                   "with --edge-list: [N, D] float .npy, or .npz of "
                                   "scipy.sparse.save_npz (CSR or CSC; stored sparse, float32)");
  auto* labels = cmd->add_option("--labels", args->edge_list.labels,
                                 "with --edge-list: [N] integer .npy, -1 = unlabeled");
  auto* split = cmd->add_option("--split", args->edge_list.split_dir,
                                "with --edge-list: directory with {train,val,test}_idx.npy");
  for (auto* option : {features, labels, split}) option->needs(edges);
  cmd->add_flag("--undirected", o.undirected, "also add the reverse of every edge");
  cmd->add_flag("--self-loops", o.self_loops, "give every node a self loop");
  cmd->add_flag("--keep-parallel-edges", o.keep_parallel_edges,
                "keep repeated edges (removed by default)");
  cmd->add_option("--feature-dtype", args->dtype, "stored feature type: float32 or float16")
      ->check(CLI::IsMember({"float32", "float16"}));
  cmd->add_option("--memory-budget", args->budget, "memory budget, e.g. 4G (default: RAM/4)");
  cmd->add_option("--node-id-bytes", o.node_id_bytes, "force 4- or 8-byte node ids");
  cmd->add_flag("--force", o.replace_existing, "replace OUT if it exists");
  return [args] {
    auto start = std::chrono::steady_clock::now();
    ImportOptions o = args->options;
    o.feature_dtype = ParseFeatureDtype(args->dtype, "--feature-dtype");
    o.memory_budget_bytes = MemoryBudgetFromOption(args->budget);
    o.progress = true;
    DatasetMeta meta;
    if (!args->npy_dir.empty()) {
      meta = ImportNpyDirectory(args->npy_dir, o);
    } else if (!args->edge_list.edge_list.empty()) {
      meta = ImportEdgeList(args->edge_list, o);
    } else if (!args->ogb_dir.empty()) {
      meta = ImportOgbDirectory(args->ogb_dir, args->ogb_split, o);
    } else {
      throw Error::Input("import needs --npy DIR, --edge-list FILE or --ogb DIR");
    }
    PrintWritten(o.out, meta, start);
  };
}

}  // namespace strata::cli
