// NeighborSampler draws the mini-batches of GNN training: uniform neighbour sampling without
// replacement with one fanout per layer (GraphSAGE, DGL's NeighborSampler), or LABOR with
// set_labor (LaborOptions below), returning one Block per layer (strata/block.h).
//
// Fanouts are listed from the input layer to the output layer, as in DGL, so the last
// fanout is applied first, to the seeds; -1 takes every in-neighbour. A destination with
// in-degree <= fanout keeps all its in-edges; otherwise `fanout` distinct in-edges are
// chosen uniformly (Floyd's algorithm). A destination's sources are stored in ascending
// global id (the CSC's order); the block's new source nodes get local ids in order of first
// appearance (destination order, then edge order).
//
// Determinism: batch b of epoch e depends only on (seed, e, b) and the SeedOrder. The training
// ids are shuffled per epoch by a permutation drawn from (seed, e) alone, batch b takes
// positions [b * batch_size, (b + 1) * batch_size) of it (of the rank's share of it), and every
// destination draws from its own
// random stream, derived from (seed, e, b, layer, destination node id). Nothing depends on
// the thread count, on which batches were sampled before, or on timing, so a pipeline may
// sample batches ahead and out of order on several threads.
//
// Within a batch, each layer runs on `threads` threads in two steps: the picks, by ranges
// of destinations (first all draws as edge ids, then one gather of their sources, so that
// the cache misses on the graph overlap), then the local numbering (AssignLocalIds in
// sampling/local_ids.h). Neither step lets the split change the result.
//
// Thread safety: every const method may be called concurrently from several threads. Each
// Sample call borrows a scratch object from a pool (one per concurrent caller, kept for
// reuse); the per-epoch permutations are built once under a mutex and shared.
//
// Memory: the training ids and the cached permutations are charged to the budget. Scratch
// and the returned batches grow with the batch (batch size times the fanouts), not with the
// graph, and are not charged; a pooled scratch keeps the size of the largest batch it served.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "strata/block.h"
#include "strata/graph.h"
#include "strata/memory_budget.h"

namespace strata {

class LaborVariates;

// Which seeds an epoch's batches take, and in what order. By default every seed, reshuffled
// per epoch. `rank` of `world_size` takes positions rank, rank + world_size, ... of the
// epoch's order, wrapping around to the start so that every rank gets ceil(n / world_size)
// seeds (torch's DistributedSampler without drop_last); without `pad` it stops at the end,
// so that the ranks' batches b together are exactly one process's batch b (data-parallel
// training): every rank still has ceil(ceil(n / world_size) / batch_size) batches, and a
// rank's last one may be smaller than another's, or empty. With `drop_last` an epoch ends
// before a last, smaller batch. With `even_batches` the ceil(n / batch_size) batches differ in
// size by at most one, so that no batch is a small remainder: multistage training cuts each
// macro-batch's few seeds into batches, and a batch of three seeds would be a full-sized,
// noisy optimizer step. `drop_last` wins over `even_batches`. With `pieces` k > 1 each batch is
// sampled as k consecutive parts of its seeds (sizes differing by at most one), index b * k + j
// being part j of batch b: a part draws the neighbours and variates batch b draws for those
// seeds (LABOR-*'s importance weights aside), so the parts' blocks together are batch b's, less
// the rows two parts share: a batch trained in parts takes a fraction of its memory.
struct SeedOrder {
  bool shuffle = true;
  bool drop_last = false;
  bool even_batches = false;
  uint32_t rank = 0;
  uint32_t world_size = 1;
  bool pad = true;
  uint32_t pieces = 1;
};

// Layer-neighbour sampling (LABOR, sampling/labor_variates.h) instead of uniform neighbour
// sampling: a destination keeps each in-neighbour t with a probability p_t (LABOR-0: min(1,
// fanout / in-degree)) decided by a variate per source shared by the layer's destinations, so
// a layer touches fewer distinct sources. `importance` fixed-point steps (LABOR-*,
// sampling/labor_importance.h; < 0 until convergence) skew each destination's p_t towards the
// sources others take anyway. Every kept edge carries the weight 1 / p_t (Block::edge_weights)
// for the layers' unbiased estimators. `batch_dependency` K > 1 makes consecutive batches'
// variates overlap (K batches to drift from one set to the next). Needs the topology in memory.
struct LaborOptions {
  bool enabled = false;
  uint32_t batch_dependency = 1;
  int importance = 0;
};
// From --sampler neighbor|labor, --batch-dependency K (>= 1, and 1 unless labor) and
// --labor-importance 0|N|star (0 unless labor); anything else is one input error naming the
// option.
LaborOptions ParseLaborOptions(std::string_view sampler, uint32_t batch_dependency,
                               std::string_view importance = "0");

class NeighborSampler {
 public:
  // `train_ids` are the seeds of an epoch (distinct node ids). `threads` sample within one
  // batch (0 means 1).
  NeighborSampler(const CscGraph& graph, std::vector<uint64_t> train_ids, std::vector<int> fanouts,
                  uint64_t batch_size, uint64_t seed, MemoryBudget& budget, unsigned threads,
                  SeedOrder order = {});
  // Layer l (input layer first) draws from layer_graphs[l]: graphs over the same nodes, e.g.
  // the edges each layer of a larger first-stage sample drew (multistage training's
  // large-batch sampling), so that a batch inside it is a slice of that sample.
  NeighborSampler(std::vector<const CscGraph*> layer_graphs, std::vector<uint64_t> train_ids,
                  std::vector<int> fanouts, uint64_t batch_size, uint64_t seed,
                  MemoryBudget& budget, unsigned threads, SeedOrder order = {});
  ~NeighborSampler();
  NeighborSampler(const NeighborSampler&) = delete;
  NeighborSampler& operator=(const NeighborSampler&) = delete;

  // Samples with LABOR from now on (before any Sample call); throws an input error when the
  // topology is not in memory.
  void set_labor(LaborOptions labor);

  // Seeds this rank samples per epoch: ceil(seeds / world_size), or without padding the
  // positions below the seed count that are this rank's.
  uint64_t seeds_per_epoch() const;
  // Batches an epoch samples; with SeedOrder::pieces, the parts of its batches.
  uint64_t batches_per_epoch() const;
  uint32_t pieces_per_batch() const { return order_.pieces; }

  // The seeds of batch `batch` of `epoch` (with pieces, of that part), in the order the batch
  // lists them.
  std::vector<uint64_t> BatchSeeds(uint64_t epoch, uint64_t batch) const;

  // Samples batch `batch` (< batches_per_epoch()) of `epoch`; its index is `batch`.
  SampledBatch Sample(uint64_t epoch, uint64_t batch) const;

  // Samples the neighbourhood of given seeds (distinct ids) with the sampler's fanouts, for
  // sampled evaluation; `stream` picks an independent random stream (e.g. the chunk number).
  // The batch's epoch is 0 and its index is `stream`.
  SampledBatch SampleSeeds(std::span<const uint64_t> seeds, uint64_t stream) const;

  // The full neighbourhood of given seeds (distinct ids): one block per fanout, every fanout -1,
  // for evaluation with exact aggregation. Involves no randomness.
  SampledBatch SampleFullNeighborhood(std::span<const uint64_t> seeds) const;

 private:
  struct EdgeRange {
    uint64_t first_edge;
    uint64_t degree;
  };
  struct Scratch;
  class ScratchLease;
  using Permutation = ChargedArray<uint64_t>;

  // Builds the blocks of `seeds`, layer by layer from the output layer down. `stream_seed`
  // seeds every random choice of the batch.
  // With LABOR, `epoch` and `batch` name the batch's variates.
  SampledBatch SampleFrom(std::span<const uint64_t> seeds, std::span<const int> fanouts,
                          uint64_t stream_seed, uint64_t epoch = 0, uint64_t batch = 0,
                          bool labor = false) const;
  // Fills block.indptr and scratch.picked (the chosen sources' global ids, by destination) for
  // layer `layer`; with `labor`, LABOR's picks under those variates.
  void PickNeighbors(const CscGraph& graph, std::span<const uint64_t> dst, int fanout, size_t layer,
                     uint64_t layer_seed, const LaborVariates* labor, Scratch& scratch,
                     Block& block) const;
  // LABOR-*: numbers the sources of dst's in-edges as candidates and computes their
  // importance, the destinations' scales and the candidates' variates into `scratch`.
  void WeighCandidates(const CscGraph& graph, std::span<const uint64_t> dst, uint32_t fanout,
                       size_t layer, const LaborVariates& labor, Scratch& scratch) const;
  std::shared_ptr<const Permutation> EpochPermutation(uint64_t epoch) const;

  const CscGraph& graph_;                      // layer_graphs_[0]
  std::vector<const CscGraph*> layer_graphs_;  // one per layer
  MemoryBudget& budget_;
  ChargedArray<uint64_t> train_ids_;
  std::vector<int> fanouts_;
  uint64_t batch_size_;
  uint64_t seed_;
  unsigned threads_;
  SeedOrder order_;
  LaborOptions labor_;

  // The permutations of the most recently requested epochs; a pipeline running ahead across
  // an epoch boundary needs two.
  mutable std::mutex permutation_mutex_;
  mutable std::vector<std::pair<uint64_t, std::shared_ptr<const Permutation>>> permutations_;

  mutable std::mutex scratch_mutex_;
  mutable std::vector<std::unique_ptr<Scratch>> free_scratch_;
};

}  // namespace strata
