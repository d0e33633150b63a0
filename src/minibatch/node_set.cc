#include "minibatch/node_set.h"

#include <fmt/format.h>

#include <algorithm>

#include "strata/error.h"

namespace strata {
namespace {

uint64_t Words(uint64_t num_nodes) { return (num_nodes + 63) / 64; }

}  // namespace

NodeSet::NodeSet(uint64_t num_nodes, MemoryBudget& budget, std::string_view what)
    : num_nodes_(num_nodes),
      words_(budget, Words(num_nodes), what),
      before_(budget, Words(num_nodes), what) {
  std::fill_n(words_.data(), words_.size(), 0);
  std::fill_n(before_.data(), before_.size(), 0);
}

NodeSet::NodeSet(const NodeSet& other, MemoryBudget& budget, std::string_view what)
    : NodeSet(other.num_nodes_, budget, what) {
  std::copy_n(other.words_.data(), words_.size(), words_.data());
}

void NodeSet::Finish() {
  uint64_t count = 0;
  for (uint64_t w = 0; w < words_.size(); ++w) {
    before_[w] = count;
    count += std::popcount(words_[w]);
  }
  size_ = count;
}

NodeSet NodeSetOf(std::span<const uint64_t> ids, uint64_t num_nodes, MemoryBudget& budget,
                  std::string_view what) {
  NodeSet set(num_nodes, budget, what);
  for (uint64_t v : ids) {
    if (v >= num_nodes) {
      throw Error::Input(fmt::format("node {} is >= num_nodes {}", v, num_nodes));
    }
    set.Insert(v);
  }
  set.Finish();
  return set;
}

}  // namespace strata
