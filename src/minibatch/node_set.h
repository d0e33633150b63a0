// NodeSet is a set of node ids in [0, N) as a bitmap, with each member's rank (how many members
// have a smaller id) in O(1) once Finish has counted them. Layer-wise inference keeps one per
// hop of the evaluated nodes' in-neighbourhood closure, and a member's rank is its row in that
// layer's matrices, which hold the members only, in id order.
//
// Invariants: Rank and size are those of the members when Finish last ran; Insert after Finish
// needs another Finish before Rank. Memory: N / 4 bytes (the bits and a running count per 64
// ids), charged to the budget.
#pragma once

#include <bit>
#include <cstdint>
#include <span>
#include <string_view>

#include "strata/memory_budget.h"

namespace strata {

class NodeSet {
 public:
  NodeSet() = default;
  // The empty set of [0, num_nodes).
  NodeSet(uint64_t num_nodes, MemoryBudget& budget, std::string_view what);
  // A copy of `other`, charged to the same budget; Finish it before asking ranks.
  NodeSet(const NodeSet& other, MemoryBudget& budget, std::string_view what);
  NodeSet(NodeSet&&) noexcept = default;
  NodeSet& operator=(NodeSet&&) noexcept = default;

  void Insert(uint64_t v) { words_[v / 64] |= uint64_t{1} << (v % 64); }
  bool Contains(uint64_t v) const { return (words_[v / 64] >> (v % 64)) & 1; }
  // Counts the members, so that Rank and size answer for them.
  void Finish();
  uint64_t Rank(uint64_t v) const {
    return before_[v / 64] + std::popcount(words_[v / 64] & ((uint64_t{1} << (v % 64)) - 1));
  }
  uint64_t size() const { return size_; }
  uint64_t num_nodes() const { return num_nodes_; }

  // Calls fn(v) for the members in [begin, end), in increasing order.
  template <typename Fn>
  void ForEach(uint64_t begin, uint64_t end, Fn&& fn) const {
    for (uint64_t w = begin / 64; w * 64 < end; ++w) {
      uint64_t bits = words_[w];
      if (w == begin / 64) bits &= ~uint64_t{0} << (begin % 64);
      while (bits != 0) {
        const uint64_t v = w * 64 + std::countr_zero(bits);
        if (v >= end) return;
        fn(v);
        bits &= bits - 1;
      }
    }
  }

 private:
  uint64_t num_nodes_ = 0;
  uint64_t size_ = 0;
  ChargedArray<uint64_t> words_;
  ChargedArray<uint64_t> before_;  // members below each word's first id
};

// The set of `ids` (any order, repeats allowed), finished. Throws an input error for an id
// >= num_nodes.
NodeSet NodeSetOf(std::span<const uint64_t> ids, uint64_t num_nodes, MemoryBudget& budget,
                  std::string_view what);

}  // namespace strata
