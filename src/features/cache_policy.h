// CachePolicy decides which resident key a fixed-capacity cache gives up when it needs room. The
// cache owner maps keys (node ids) to row slots and moves the bytes; the policy only keeps the
// keys in an eviction order. Each policy lives in its own file: clock_policy.h, sieve_policy.h,
// s3fifo_policy.h; they share the key -> position bookkeeping of position_table.h.
//
// The owner's loop, per access of key k:
//   hit:   policy.Touch(k)
//   miss:  if (policy.size() == policy.capacity()) victim = policy.Evict(is_pinned);
//          policy.Insert(k)
//
// Pinning is how the look-ahead window (GIDS §3.4, "window buffering") reaches the policy: rows
// that the next W sampled batches will read are pinned by the owner, and Evict must pass over
// them. The policy does not store pins; it asks the owner through a PinPredicate, and only about
// a key it is about to return, so a pin costs nothing on the hit path and the pin state (a
// counter per slot, updated by the sampler) stays in one place.
//
// Invariants every policy keeps: size() <= capacity(); the resident set is exactly the keys
// Insert-ed and not yet returned by Evict, each once; Evict never returns a key for which
// is_pinned is true, and returns std::nullopt only when every resident key is pinned (or none
// is resident), leaving the policy consistent. Every operation is O(1) amortised when few keys
// are pinned; an Evict pays for each pinned key it passes over, and each policy moves past (or
// requeues) what it passed so the next Evict does not pay for the same keys again at once.
// No operation allocates after construction.
//
// Misuse (Touch of a key that is not resident, Insert of a resident key or into a full policy)
// is a bug in the owner and throws Error (internal) rather than corrupting the order.
//
// Thread safety: none; the owner serialises calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "strata/error.h"
#include "strata/feature_store.h"

namespace strata {

class PinPredicate;

// What PinPredicate can refer to: anything callable as bool(uint64_t), other than itself (so
// that copying a PinPredicate copies the reference instead of referring to the reference).
template <typename F>
concept PinCallable = !std::is_same_v<std::remove_cvref_t<F>, PinPredicate> &&
                      std::is_invocable_r_v<bool, F&, uint64_t>;

// PinPredicate is a non-owning reference to a callable bool(uint64_t key) that says whether a
// resident key is pinned. It is chosen over std::function because Evict is on the miss path:
// a lambda converts to it without allocating and without copying its captures, and a call is a
// single indirect call. Like std::string_view, it must not outlive the callable it refers to;
// passing a lambda straight into Evict is always safe.
class PinPredicate {
 public:
  template <PinCallable F>
  PinPredicate(F&& f)  // NOLINT(google-explicit-constructor): implicit, like function_ref.
      : callable_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* callable, uint64_t key) -> bool {
          return (*static_cast<std::remove_reference_t<F>*>(callable))(key);
        }) {}

  bool operator()(uint64_t key) const { return call_(callable_, key); }

 private:
  void* callable_;
  bool (*call_)(void*, uint64_t);
};

// For owners (and tests) that pin nothing: Evict(kNothingPinned).
inline constexpr auto kNothingPinned = [](uint64_t) { return false; };

class CachePolicy {
 public:
  virtual ~CachePolicy() = default;

  // key is resident and was just accessed (a hit).
  virtual void Touch(uint64_t key) = 0;
  // key was just admitted: it was not resident, and size() < capacity().
  virtual void Insert(uint64_t key) = 0;
  // Removes and returns a resident key for which is_pinned is false; std::nullopt if there is
  // none. is_pinned is called only on resident keys, and must answer the same for a key
  // throughout one call.
  virtual std::optional<uint64_t> Evict(PinPredicate is_pinned) = 0;

  virtual bool Contains(uint64_t key) const = 0;
  virtual size_t size() const = 0;
  virtual size_t capacity() const = 0;
  // Memory of the policy's own structures (its key map, queues and bits), counted at capacity.
  virtual size_t bytes() const = 0;
  virtual std::string_view name() const = 0;
};

// Each policy's file defines its factory; MakeCachePolicy only dispatches, so this header does
// not need to include them. Capacity must be in [1, 2^32 - 2] (positions are 32-bit);
// otherwise they throw Error (input).
std::unique_ptr<CachePolicy> MakeClockPolicy(size_t capacity);
std::unique_ptr<CachePolicy> MakeSievePolicy(size_t capacity);
std::unique_ptr<CachePolicy> MakeS3FifoPolicy(size_t capacity);

inline std::unique_ptr<CachePolicy> MakeCachePolicy(CachePolicyKind kind, size_t capacity) {
  switch (kind) {
    case CachePolicyKind::kClock:
      return MakeClockPolicy(capacity);
    case CachePolicyKind::kSieve:
      return MakeSievePolicy(capacity);
    case CachePolicyKind::kS3Fifo:
      return MakeS3FifoPolicy(capacity);
  }
  throw Error::Internal("MakeCachePolicy: unknown CachePolicyKind");
}

}  // namespace strata
