#include "sampling/local_ids.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "common/parallel.h"
#include "strata/error.h"

namespace strata {
namespace {

// Below this many positions a layer is numbered on the calling thread: starting threads
// costs more than the work.
constexpr uint64_t kMinParallelPositions = 16384;

// The ranges cost about twice the serial scan in all (more distinct nodes to insert, one
// more lookup per distinct node, one more pass over the positions), so two threads gain
// nothing: measured on a layer of 530k positions, 5 ms serially, 10 ms of work in ranges.
constexpr unsigned kMinRanges = 3;

// Hash-table probes are prefetched this many keys ahead: enough misses in flight to cover
// the latency of memory, few enough that the prefetched lines are still in L1 when used.
constexpr uint64_t kPrefetchDistance = 16;

constexpr unsigned kMaxRanges = 64;

[[noreturn]] void ThrowRepeatedSeed(uint64_t v) {
  throw Error::Input(fmt::format("node {} is given twice as a seed", v));
}

// Room for the distinct nodes among `positions`, judged by the share seen last time, with
// slack so that a slightly larger batch does not make the table grow.
uint64_t ExpectedDistinct(const LocalIdScratch& scratch, uint64_t positions) {
  return static_cast<uint64_t>(scratch.distinct_share * 1.25 * static_cast<double>(positions)) + 64;
}

void AssignSerially(std::span<const uint64_t> dst, std::span<const uint64_t> picked,
                    LocalIdScratch& scratch, std::vector<uint64_t>& src_nodes,
                    std::vector<uint32_t>& indices) {
  const uint64_t num_dst = dst.size();
  NodeNumberTable& table = scratch.ranges[0].table;
  table.Reset(ExpectedDistinct(scratch, num_dst + picked.size()));
  src_nodes.assign(dst.begin(), dst.end());
  indices.resize(picked.size());
  bool inserted = false;
  for (uint64_t p = 0; p < num_dst; ++p) {
    table.FindOrInsert(dst[p], NodeNumberTable::Hash(dst[p]), static_cast<uint32_t>(p), inserted);
    if (!inserted) ThrowRepeatedSeed(dst[p]);
  }
  for (uint64_t e = 0; e < picked.size(); ++e) {
    if (e + kPrefetchDistance < picked.size()) {
      table.Prefetch(NodeNumberTable::Hash(picked[e + kPrefetchDistance]));
    }
    const uint64_t v = picked[e];
    indices[e] = table.FindOrInsert(v, NodeNumberTable::Hash(v),
                                    static_cast<uint32_t>(src_nodes.size()), inserted);
    if (inserted) src_nodes.push_back(v);
  }
  scratch.distinct_share =
      static_cast<double>(src_nodes.size()) / std::max<uint64_t>(1, num_dst + picked.size());
}

}  // namespace

void NodeNumberTable::Reset(uint64_t expected) {
  const uint64_t capacity = std::bit_ceil(std::max<uint64_t>(16, 2 * expected));
  slots_.assign(capacity, Slot{kEmpty, 0});
  mask_ = capacity - 1;
  size_ = 0;
}

void NodeNumberTable::Grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.size() * 2, Slot{kEmpty, 0});
  mask_ = slots_.size() - 1;
  for (const Slot& s : old) {
    if (s.key == kEmpty) continue;
    uint64_t i = Hash(s.key) & mask_;
    while (slots_[i].key != kEmpty) i = (i + 1) & mask_;
    slots_[i] = s;
  }
}

void AssignLocalIds(std::span<const uint64_t> dst, std::span<const uint64_t> picked,
                    unsigned threads, LocalIdScratch& scratch, std::vector<uint64_t>& src_nodes,
                    std::vector<uint32_t>& indices) {
  const uint64_t num_dst = dst.size();
  const uint64_t num_picked = picked.size();
  const uint64_t num_positions = num_dst + num_picked;
  if (num_positions >= NodeNumberTable::kAbsent) {
    throw Error::Input(fmt::format(
        "a sampled layer has {} destinations and {} edges, more than 32-bit local ids can "
        "number; lower the batch size or the fanouts",
        num_dst, num_picked));
  }
  const unsigned num_ranges = num_positions < kMinParallelPositions || threads < kMinRanges
                                  ? 1u
                                  : std::min(threads, kMaxRanges);
  scratch.ranges.resize(std::max<size_t>(scratch.ranges.size(), num_ranges));
  if (num_ranges == 1) {
    AssignSerially(dst, picked, scratch, src_nodes, indices);
    return;
  }
  std::span<LocalIdScratch::Range> ranges(scratch.ranges.data(), num_ranges);
  scratch.number_at.resize(num_positions);
  auto range_begin = [&](uint64_t r) { return num_positions * r / num_ranges; };
  // The range's first positions up to num_dst are destinations, and, destinations being
  // distinct, its first range-local numbers.
  auto dst_in_range = [&](uint64_t r) {
    return std::min(range_begin(r + 1), std::max(range_begin(r), num_dst)) - range_begin(r);
  };

  // A: each range numbers its nodes by first appearance within the range.
  ParallelFor(num_ranges, num_ranges, [&](uint64_t begin, uint64_t end) {
    for (uint64_t r = begin; r < end; ++r) {
      LocalIdScratch::Range& range = ranges[r];
      const uint64_t first = range_begin(r);
      const uint64_t last = range_begin(r + 1);
      NodeNumberTable& table = range.table;
      std::vector<uint64_t>& distinct = range.distinct;
      uint32_t* number_at = scratch.number_at.data();
      table.Reset(ExpectedDistinct(scratch, last - first));
      distinct.clear();
      bool inserted = false;
      for (uint64_t p = first; p < std::min(last, num_dst); ++p) {
        number_at[p] = table.FindOrInsert(dst[p], NodeNumberTable::Hash(dst[p]),
                                          static_cast<uint32_t>(distinct.size()), inserted);
        if (!inserted) ThrowRepeatedSeed(dst[p]);
        distinct.push_back(dst[p]);
      }
      // The range's edges: positions num_dst + e.
      const uint64_t edge_end = std::max(last, num_dst) - num_dst;
      for (uint64_t e = std::max(first, num_dst) - num_dst; e < edge_end; ++e) {
        if (e + kPrefetchDistance < edge_end) {
          table.Prefetch(NodeNumberTable::Hash(picked[e + kPrefetchDistance]));
        }
        const uint64_t v = picked[e];
        number_at[num_dst + e] = table.FindOrInsert(
            v, NodeNumberTable::Hash(v), static_cast<uint32_t>(distinct.size()), inserted);
        if (inserted) distinct.push_back(v);
      }
    }
  });

  // B: where each distinct node of ranges 1.. first appears, split evenly over the threads.
  std::vector<uint64_t> item_begin(num_ranges + 1, 0);  // flat index of (range r, number 0)
  uint64_t distinct_total = ranges[0].distinct.size();
  for (unsigned r = 1; r < num_ranges; ++r) {
    item_begin[r + 1] = item_begin[r] + ranges[r].distinct.size();
    ranges[r].seen_in.resize(ranges[r].distinct.size());
    ranges[r].number_there.resize(ranges[r].distinct.size());
    distinct_total += ranges[r].distinct.size();
  }
  scratch.distinct_share = static_cast<double>(distinct_total) / num_positions;
  ParallelFor(num_ranges, item_begin[num_ranges], [&](uint64_t begin, uint64_t end) {
    unsigned r = 1;
    while (item_begin[r + 1] <= begin) ++r;
    for (uint64_t item = begin; item < end; ++item) {
      while (item_begin[r + 1] <= item) ++r;
      LocalIdScratch::Range& range = ranges[r];
      const uint64_t j = item - item_begin[r];
      if (j + kPrefetchDistance < range.distinct.size()) {
        ranges[0].table.Prefetch(NodeNumberTable::Hash(range.distinct[j + kPrefetchDistance]));
      }
      const uint64_t v = range.distinct[j];
      const uint64_t h = NodeNumberTable::Hash(v);
      range.seen_in[j] = r;
      range.number_there[j] = static_cast<uint32_t>(j);
      for (unsigned q = 0; q < r; ++q) {
        const uint32_t n = ranges[q].table.Find(v, h);
        if (n != NodeNumberTable::kAbsent) {
          if (j < dst_in_range(r)) ThrowRepeatedSeed(v);
          range.seen_in[j] = q;
          range.number_there[j] = n;
          break;
        }
      }
    }
  });

  // C: each range ranks the nodes it sees first; a prefix over the ranges places them.
  ParallelFor(num_ranges, num_ranges, [&](uint64_t begin, uint64_t end) {
    for (uint64_t r = begin; r < end; ++r) {
      LocalIdScratch::Range& range = ranges[r];
      const size_t num_distinct = range.distinct.size();
      range.new_rank.resize(num_distinct);
      uint32_t* new_rank = range.new_rank.data();
      const uint32_t* seen_in = range.seen_in.data();
      uint32_t count = 0;
      for (size_t j = 0; j < num_distinct; ++j) {
        const bool is_new = r == 0 || seen_in[j] == r;
        new_rank[j] = is_new ? count++ : NodeNumberTable::kAbsent;
      }
      range.num_new = count;
    }
  });
  uint64_t num_nodes = 0;
  for (LocalIdScratch::Range& range : ranges) {
    range.first_local = num_nodes;
    num_nodes += range.num_new;
  }
  src_nodes.resize(num_nodes);
  indices.resize(num_picked);

  // D: local ids by range-local number, then every position's.
  ParallelFor(num_ranges, num_ranges, [&](uint64_t begin, uint64_t end) {
    for (uint64_t r = begin; r < end; ++r) {
      LocalIdScratch::Range& range = ranges[r];
      const size_t num_distinct = range.distinct.size();
      range.local_of.resize(num_distinct);
      uint32_t* local_of = range.local_of.data();
      for (size_t j = 0; j < num_distinct; ++j) {
        uint64_t local;
        if (range.new_rank[j] != NodeNumberTable::kAbsent) {
          local = range.first_local + range.new_rank[j];
          src_nodes[local] = range.distinct[j];
        } else {
          const LocalIdScratch::Range& there = ranges[range.seen_in[j]];
          local = there.first_local + there.new_rank[range.number_there[j]];
        }
        local_of[j] = static_cast<uint32_t>(local);
      }
      const uint32_t* number_at = scratch.number_at.data();
      const uint64_t edge_end = std::max(range_begin(r + 1), num_dst) - num_dst;
      for (uint64_t e = std::max(range_begin(r), num_dst) - num_dst; e < edge_end; ++e) {
        indices[e] = local_of[number_at[num_dst + e]];
      }
    }
  });
}

}  // namespace strata
