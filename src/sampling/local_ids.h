// AssignLocalIds turns one layer's sampled edges, named by global ids, into a block's local
// ids the way DGL numbers a message-flow graph: the destinations keep ids 0 .. D-1 in their
// order, and every other node gets the next id the first time it appears among the picked
// sources (destination order, then edge order). The result depends only on the input, not on
// the number of threads.
//
// Serially this is a single scan through a hash table. With T >= 3 threads the positions
// (destinations, then picked sources) are cut into T contiguous ranges, and the numbering by
// first appearance is rebuilt from the ranges' own numberings (the rebuilding doubles the
// work, so two threads would gain nothing and run the serial scan):
//   A. each range numbers its distinct nodes by first appearance within the range, in a hash
//      table of its own, and writes each position's range-local number;
//   B. each distinct node of range r > 0 is looked up in the tables of ranges 0 .. r-1 (now
//      read-only); the earliest range holding it is where it first appears overall;
//   C. each range counts the nodes it sees first ("new" in B), and a prefix over the ranges
//      gives the local id where each range's new nodes start: ranges are in position order,
//      so that numbers all nodes by first appearance;
//   D. each range maps its positions' range-local numbers to local ids and writes indices,
//      and the global ids of the nodes it sees first.
// Only A and B probe hash tables; A's work is the serial scan's, split T ways, and B's grows
// with the distinct nodes per range, not with the edges.
//
// Invariants on return: src_nodes starts with dst and holds distinct ids; indices.size() ==
// picked.size() and src_nodes[indices[e]] == picked[e] for every e.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace strata {

// A hash table from global ids to numbers: open addressing with linear probing. Probes miss
// the cache whenever the table outgrows L2, so callers issue Prefetch(hash) for keys a few
// steps ahead of the one they look up.
class NodeNumberTable {
 public:
  struct Slot {
    uint64_t key;  // kEmpty when unused
    uint32_t number;
  };
  static constexpr uint64_t kEmpty = ~uint64_t{0};  // never an id: ids are below 2^48
  static constexpr uint32_t kAbsent = ~uint32_t{0};

  // MurmurHash3's finalizer: the ids of one neighbourhood are often close together.
  static uint64_t Hash(uint64_t v) {
    v ^= v >> 33;
    v *= 0xFF51AFD7ED558CCDull;
    v ^= v >> 33;
    v *= 0xC4CEB9FE1A85EC53ull;
    return v ^ (v >> 33);
  }

  // Empties the table, sized for about `expected` keys.
  void Reset(uint64_t expected);
  uint64_t size() const { return size_; }

  void Prefetch(uint64_t hash) const { __builtin_prefetch(&slots_[hash & mask_]); }

  // The number of `key`, inserting it with `new_number` when absent; `inserted` says which.
  // `hash` is Hash(key).
  uint32_t FindOrInsert(uint64_t key, uint64_t hash, uint32_t new_number, bool& inserted) {
    // Load stays at most 1/2, so probes stay short (measured faster than 3/4, the smaller
    // table missing the cache about as often once it outgrows L2).
    if (2 * (size_ + 1) > slots_.size()) Grow();
    for (uint64_t i = hash & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.key == key) {
        inserted = false;
        return s.number;
      }
      if (s.key == kEmpty) {
        s = Slot{key, new_number};
        ++size_;
        inserted = true;
        return new_number;
      }
    }
  }

  // The number of `key`, or kAbsent.
  uint32_t Find(uint64_t key, uint64_t hash) const {
    for (uint64_t i = hash & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.key == key) return s.number;
      if (s.key == kEmpty) return kAbsent;
    }
  }

 private:
  void Grow();
  std::vector<Slot> slots_;
  uint64_t mask_ = 0;
  uint64_t size_ = 0;
};

// Memory reused from one call to the next; one per concurrent caller and per layer, so that
// the tables start at the size the same layer needed last time.
struct LocalIdScratch {
  // What one range's thread writes, on cache lines of its own: the writers update sizes and
  // end pointers at every insertion, and a line shared between two cores would miss at each.
  struct alignas(64) Range {
    NodeNumberTable table;
    std::vector<uint64_t> distinct;      // A: the range's nodes by range-local number
    std::vector<uint32_t> seen_in;       // B: per distinct node, the earliest range holding it
    std::vector<uint32_t> number_there;  // B: ... and its range-local number in that range
    std::vector<uint32_t> new_rank;      // C: rank among the nodes this range sees first
    uint64_t num_new = 0;                // C: how many nodes this range sees first
    uint64_t first_local = 0;            // C: the local id of the first of them
    std::vector<uint32_t> local_of;      // D: local id by range-local number
  };
  std::vector<Range> ranges;
  std::vector<uint32_t> number_at;  // step A: range-local number of every position
  double distinct_share = 0.5;      // distinct nodes per position, seen last time
};

// Writes src_nodes (dst first, then new sources by first appearance) and indices (the local
// id of each picked source). `dst` must hold distinct ids; a repeated destination is an input
// error. dst.size() + picked.size() must be below 2^32 - 1.
void AssignLocalIds(std::span<const uint64_t> dst, std::span<const uint64_t> picked,
                    unsigned threads, LocalIdScratch& scratch, std::vector<uint64_t>& src_nodes,
                    std::vector<uint32_t>& indices);

}  // namespace strata
