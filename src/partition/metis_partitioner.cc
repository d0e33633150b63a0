#include "partition/metis_partitioner.h"

#include <fmt/format.h>
#include <metis.h>

#include <algorithm>
#include <vector>

#include "strata/error.h"

namespace strata {

uint64_t MetisMemoryEstimate(const CscGraph& graph, uint64_t constraints) {
  const uint64_t csr = (graph.num_nodes() + 1) * sizeof(idx_t) +
                       2 * graph.num_edges() * sizeof(idx_t) +
                       (constraints > 1 ? graph.num_nodes() * constraints * sizeof(idx_t) : 0);
  return 10 * csr;
}

namespace {

// The constraint index of each group that METIS balances (-1: none), and how many constraints
// there are: the node count first, then the training nodes, or each class that has any.
std::vector<int> ConstraintOfGroup(MetisBalance balance, std::span<const uint32_t> groups,
                                   uint32_t num_classes, idx_t& constraints) {
  std::vector<int> of_group(num_classes + 1, -1);
  constraints = 1;
  if (balance == MetisBalance::kTrain) {
    for (uint32_t c = 0; c < num_classes; ++c) of_group[c] = 1;
    constraints = 2;
  } else if (balance == MetisBalance::kClasses) {
    std::vector<bool> present(num_classes, false);
    for (uint32_t g : groups) {
      if (g < num_classes) present[g] = true;
    }
    for (uint32_t c = 0; c < num_classes; ++c) {
      if (present[c]) of_group[c] = constraints++;
    }
  }
  return of_group;
}

}  // namespace

Partitioning MetisPartition(const CscGraph& graph, uint32_t parts, MetisBalance balance,
                            std::span<const uint32_t> groups, uint32_t num_classes, uint64_t seed,
                            MemoryBudget& budget) {
  const uint64_t n = graph.num_nodes();
  if (parts == 0 || parts > n) {
    throw Error::Input("--parts must be between 1 and the number of nodes");
  }
  if (n >= (uint64_t{1} << 31) || 2 * graph.num_edges() >= (uint64_t{1} << 31)) {
    throw Error::Input("--method metis: the graph is too large for 32-bit METIS ids");
  }
  idx_t constraints = 1;
  const std::vector<int> constraint_of_group =
      ConstraintOfGroup(balance, groups, num_classes, constraints);
  const uint64_t estimate = MetisMemoryEstimate(graph, static_cast<uint64_t>(constraints));
  if (estimate > budget.available()) {
    throw Error::Input(fmt::format(
        "--method metis keeps the whole graph in memory, about {:.0f} MiB, more than the {:.0f} "
        "MiB the budget leaves; use --method gap or raise --memory-budget",
        estimate / 1048576.0, budget.available() / 1048576.0));
  }
  TrackedCharge charge(budget, "METIS");
  charge.Update(estimate);

  // Symmetric adjacency: every stored edge in both directions, self loops dropped, repeats
  // merged (METIS wants a simple undirected graph).
  std::vector<idx_t> xadj(n + 1, 0);
  ForEachEdge(graph, [&](uint64_t src, uint64_t dst) {
    if (src == dst) return;
    ++xadj[src + 1];
    ++xadj[dst + 1];
  });
  for (uint64_t v = 0; v < n; ++v) xadj[v + 1] += xadj[v];
  std::vector<idx_t> adjncy(xadj[n]);
  std::vector<idx_t> fill(xadj.begin(), xadj.end() - 1);
  ForEachEdge(graph, [&](uint64_t src, uint64_t dst) {
    if (src == dst) return;
    adjncy[fill[src]++] = static_cast<idx_t>(dst);
    adjncy[fill[dst]++] = static_cast<idx_t>(src);
  });
  idx_t kept = 0;
  for (uint64_t v = 0; v < n; ++v) {
    auto first = adjncy.begin() + xadj[v], last = adjncy.begin() + xadj[v + 1];
    std::sort(first, last);
    // Compacts in place: the write position never passes the read position.
    const idx_t begin = kept;
    for (auto it = first; it != last; ++it) {
      const idx_t u = *it;
      if (kept == begin || adjncy[kept - 1] != u) adjncy[kept++] = u;
    }
    xadj[v] = begin;
  }
  xadj[n] = kept;
  adjncy.resize(kept);

  // Each node weighs 1 in the first constraint and, a training node, 1 in its group's.
  std::vector<idx_t> weights;
  if (constraints > 1) {
    weights.assign(n * constraints, 0);
    for (uint64_t v = 0; v < n; ++v) {
      weights[v * constraints] = 1;
      const int c = constraint_of_group[groups[v]];
      if (c > 0) weights[v * constraints + c] = 1;
    }
  }
  idx_t nodes = static_cast<idx_t>(n), k = static_cast<idx_t>(parts), cut = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = static_cast<idx_t>(seed & 0x7fffffff);
  std::vector<idx_t> part(n, 0);
  if (parts > 1) {
    const int status =
        METIS_PartGraphKway(&nodes, &constraints, xadj.data(), adjncy.data(),
                            weights.empty() ? nullptr : weights.data(), nullptr, nullptr, &k,
                            nullptr, nullptr, options, &cut, part.data());
    if (status != METIS_OK) {
      throw Error::Internal(fmt::format("METIS_PartGraphKway failed with status {}", status));
    }
  }
  Partitioning result;
  result.parts = parts;
  result.part_of = ChargedArray<uint32_t>(budget, n, "partition assignment");
  for (uint64_t v = 0; v < n; ++v) result.part_of[v] = static_cast<uint32_t>(part[v]);
  return result;
}

}  // namespace strata
