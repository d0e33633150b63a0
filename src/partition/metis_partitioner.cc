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

// The weight METIS balances each label group by: the node count is constraint 0, then the
// training nodes (one more constraint) or each class that has any (one constraint each).
struct Constraints {
  idx_t count = 1;
  std::vector<int> of_group;  // -1: the group weighs in no constraint beside the node count
};

Constraints ConstraintsOf(MetisBalance balance, std::span<const uint32_t> groups,
                          uint32_t num_classes) {
  Constraints c;
  c.of_group.assign(num_classes + 1, -1);
  if (balance == MetisBalance::kTrain) {
    std::fill(c.of_group.begin(), c.of_group.end() - 1, c.count++);
  } else if (balance == MetisBalance::kClasses) {
    std::vector<bool> present(num_classes, false);
    for (uint32_t g : groups) {
      if (g < num_classes) present[g] = true;
    }
    for (uint32_t k = 0; k < num_classes; ++k) {
      if (present[k]) c.of_group[k] = c.count++;
    }
  }
  return c;
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
  Constraints constraints = ConstraintsOf(balance, groups, num_classes);
  const uint64_t estimate = MetisMemoryEstimate(graph, static_cast<uint64_t>(constraints.count));
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
  const uint64_t stride = static_cast<uint64_t>(constraints.count);
  std::vector<idx_t> weights;
  if (stride > 1) {
    weights.assign(n * stride, 0);
    for (uint64_t v = 0; v < n; ++v) {
      weights[v * stride] = 1;
      const int c = constraints.of_group[groups[v]];
      if (c > 0) weights[v * stride + c] = 1;
    }
  }
  idx_t nodes = static_cast<idx_t>(n), k = static_cast<idx_t>(parts), cut = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = static_cast<idx_t>(seed & 0x7fffffff);
  std::vector<idx_t> part(n, 0);
  if (parts > 1) {
    const int status =
        METIS_PartGraphKway(&nodes, &constraints.count, xadj.data(), adjncy.data(),
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
