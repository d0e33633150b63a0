// IdSlotMap maps 64-bit node ids to 32-bit slots (a row slot in a feature cache, a position in
// a cache policy's arrays). It sits on the hot path of every feature lookup, so it is an
// open-addressing table with linear probing: a lookup is one hash and, at load factor <= 0.5,
// usually one cache line.
//
// Invariants: the table has a power-of-two number of entries, at least twice max_entries, and is
// allocated once in the constructor, never resized; size() <= max_entries. An entry is empty iff
// its stored slot is 0 (slots are stored plus one), so the table needs no separate occupancy
// array. Deletion shifts later entries of the probe run back (no tombstones), so every stored id
// is reachable from its home bucket without crossing an empty entry, and lookups never slow down
// as entries come and go.
//
// Thread safety: none; the owner serialises calls.
#pragma once

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "strata/error.h"

namespace strata {

class IdSlotMap {
 public:
  // Find's answer for an id that is not present; also the one slot value Insert refuses.
  static constexpr uint32_t kNoSlot = UINT32_MAX;

  explicit IdSlotMap(size_t max_entries)
      : max_entries_(max_entries),
        mask_(std::bit_ceil(max_entries < 1 ? size_t{2} : 2 * max_entries) - 1) {
    // calloc hands back lazily zeroed pages, and zero means empty, so a map sized for a large
    // cache costs no time and no resident memory until entries land in it.
    table_.reset(static_cast<Entry*>(std::calloc(mask_ + 1, sizeof(Entry))));
    if (!table_) throw std::bad_alloc();
  }

  IdSlotMap(const IdSlotMap&) = delete;
  IdSlotMap& operator=(const IdSlotMap&) = delete;
  IdSlotMap(IdSlotMap&&) = default;
  IdSlotMap& operator=(IdSlotMap&&) = default;

  // The slot stored for id, or kNoSlot.
  uint32_t Find(uint64_t id) const {
    for (size_t i = Home(id);; i = (i + 1) & mask_) {
      const Entry& e = table_[i];
      if (e.slot_plus_one == 0) return kNoSlot;
      if (e.id == id) return e.slot_plus_one - 1;
    }
  }

  bool Contains(uint64_t id) const { return Find(id) != kNoSlot; }

  // Adds id -> slot. Throws Error (internal) if id is already present, the map already holds
  // max_entries ids, or slot is kNoSlot: each is a bug in the caller, and silently accepting it
  // would either corrupt the owner's view or push the load factor past what Find is tuned for.
  void Insert(uint64_t id, uint32_t slot) {
    if (size_ >= max_entries_ || slot == kNoSlot) [[unlikely]] {
      throw Error::Internal("IdSlotMap::Insert: map full (" + std::to_string(max_entries_) +
                            " entries) or slot is kNoSlot");
    }
    size_t i = Home(id);
    for (; table_[i].slot_plus_one != 0; i = (i + 1) & mask_) {
      if (table_[i].id == id) [[unlikely]] {
        throw Error::Internal("IdSlotMap::Insert: id " + std::to_string(id) + " already present");
      }
    }
    table_[i].id = id;
    table_[i].slot_plus_one = slot + 1;
    ++size_;
  }

  // Removes id; false if it was not present.
  bool Erase(uint64_t id) {
    size_t hole = Home(id);
    for (;; hole = (hole + 1) & mask_) {
      if (table_[hole].slot_plus_one == 0) return false;
      if (table_[hole].id == id) break;
    }
    // Backward-shift deletion: walk the rest of the probe run and move back every entry whose
    // home bucket is not inside (hole, j]; such an entry probed past the hole to reach j, so it
    // would become unreachable once the hole is empty. The run ends at the first empty entry.
    for (size_t j = (hole + 1) & mask_; table_[j].slot_plus_one != 0; j = (j + 1) & mask_) {
      size_t home = Home(table_[j].id);
      if (((j - home) & mask_) >= ((j - hole) & mask_)) {
        table_[hole] = table_[j];
        hole = j;
      }
    }
    table_[hole].slot_plus_one = 0;
    --size_;
    return true;
  }

  // Removes every entry; O(table size).
  void Clear() {
    std::memset(static_cast<void*>(table_.get()), 0, (mask_ + 1) * sizeof(Entry));
    size_ = 0;
  }

  size_t size() const { return size_; }
  size_t max_entries() const { return max_entries_; }
  // Memory of the table, counted in full although calloc may not have faulted all of it in:
  // budgets must hold once the cache is warm.
  size_t bytes() const { return (mask_ + 1) * sizeof(Entry); }

  // The 64-bit finaliser of MurmurHash3: every input bit affects every output bit, so node ids
  // that are sequential or share low bits (strided partitions) still spread over the table,
  // which linear probing needs to keep probe runs short.
  static uint64_t Mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
  }

 private:
  struct Entry {
    uint64_t id;
    uint32_t slot_plus_one;  // 0: empty
  };

  struct FreeDeleter {
    void operator()(Entry* p) const { std::free(p); }
  };

  size_t Home(uint64_t id) const { return Mix(id) & mask_; }

  size_t max_entries_;
  size_t mask_;  // table size - 1
  size_t size_ = 0;
  std::unique_ptr<Entry[], FreeDeleter> table_;
};

}  // namespace strata
