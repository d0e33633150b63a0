// PlanFullGraph on hand-made shapes: exact placements of the adjacency, the features and the
// intermediates for budgets around each threshold, the MaxMemory baseline's shares, and the
// refusal naming the smallest budget that works.
#include "fullgraph/full_graph_plan.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <fstream>
#include <set>
#include <string>

#include "fullgraph/row_blocks.h"
#include "storage/file.h"
#include "strata/dataset.h"
#include "strata/error.h"
#include "strata/generate.h"
#include "strata/memory_budget.h"
#include "test_util.h"

namespace strata {
namespace {

// 10,000 nodes of 64 float32 features, 100,000 edges of 4-byte ids and 4 classes; the longest
// in-neighbour list spans two 4 KiB units.
constexpr uint64_t kNodes = 10'000;
constexpr uint64_t kMiB = uint64_t{1} << 20;  // the plan's slack, too

DatasetMeta DenseMeta(uint64_t edges = 100'000) {
  DatasetMeta meta;
  meta.num_nodes = kNodes;
  meta.num_edges = edges;
  meta.feature_dim = 64;
  meta.row_stride_bytes = 64 * 4;
  meta.num_classes = 4;
  meta.node_id_bytes = 4;
  return meta;
}

constexpr StreamExtents kDenseExtents = {.adjacency_row_span = 8192, .symmetric = true};

// A two-layer GCN of 16 hidden units without bias, in chunks of 1024 rows.
TrainOptions Options() {
  TrainOptions o;
  o.full_graph = true;
  o.model.kind = ModelKind::kGcn;
  o.model.hidden = 16;
  o.model.bias = false;
  o.full_graph_chunk_rows = 1024;
  return o;
}

// The graph's row offsets: each row's length in 4 bytes (the extents name no longest row), a
// group of 128 rows' first offset in 8, and a piece of a chunk's rows expanded.
constexpr uint64_t kAdjacencyOffsets = 4 * kNodes + 8 * ((kNodes + 127) / 128 + 1) + 8 * (1024 + 1);
// Charged whatever the plan: the graph's row offsets, the GCN normalisation, the labels (16 bits),
// a split byte per node and one chunk's labels, the propagation input (16 wide, 4 KiB aligned), one
// input row group of 128 rows and 1024 rows of the first layer's dP (the graph is undirected).
constexpr uint64_t kCharged = kAdjacencyOffsets + 7 * kNodes + 4 * 1024 +
                              4 * (kNodes * 16 + kGatheredAlignFloats) + 4 * 128 * 64 +
                              4 * 1024 * 16;
constexpr uint64_t kParameterFloats = 64 * 16 + 16 * 4;
// Plus the parameters five times over (values, gradients, Adam's moments, a snapshot) and slack.
constexpr uint64_t kFixed = kCharged + 5 * 4 * kParameterFloats + kMiB;
// The two layers' outputs and the gradient (on an undirected graph dP of the second layer
// only: the first's goes straight into dW): whole, or two chunk buffers each, with a bit per
// value (zero_elision.h), in whole 4 KiB units.
constexpr uint64_t kInMemory = 4 * kNodes * (16 + 4 + 4);
constexpr uint64_t kOnDisk = 2 * 1024 * 4 * (16 + 4 + 4) + 3 * 4096;
// 400,000 bytes of ids and 2,560,000 of features, in 4 KiB units; at their smallest two buffers
// of the longest list and of one row group (128 rows of 256 bytes).
constexpr uint64_t kAdjacencyBytes = 98 * 4096;
constexpr uint64_t kFeatureBytes = 625 * 4096;
constexpr uint64_t kStreamsMin = 2 * 8192 + 2 * 128 * 256;
// With the intermediates in memory the streams get the budget less this: what is charged, the
// slack and the best-epoch snapshot.
constexpr uint64_t kHeld = kCharged + kInMemory + kMiB + 4 * kParameterFloats;

TEST(FullGraphPlan, EverythingResidentWhenTheBudgetHoldsIt) {
  const FullGraphPlan plan = PlanFullGraph(DenseMeta(), Options(), kDenseExtents, 64 * kMiB);
  EXPECT_TRUE(plan.adjacency_resident);
  EXPECT_TRUE(plan.features_resident);
  EXPECT_FALSE(plan.intermediates_on_disk);
  EXPECT_EQ(plan.adjacency_buffer_bytes, 0u);
  EXPECT_EQ(plan.feature_buffer_bytes, 0u);
  EXPECT_EQ(plan.input_group_floats, 128u * 64);
}

TEST(FullGraphPlan, FeaturesStreamWhenOnlyTheAdjacencyFits) {
  // 1 MiB for the streams: the adjacency and one feature block fit, all the features do not.
  const FullGraphPlan plan = PlanFullGraph(DenseMeta(), Options(), kDenseExtents, kHeld + kMiB);
  EXPECT_TRUE(plan.adjacency_resident);
  EXPECT_FALSE(plan.features_resident);
  EXPECT_FALSE(plan.intermediates_on_disk);
  // The room the adjacency leaves, as two buffers.
  EXPECT_EQ(plan.feature_buffer_bytes, (kMiB - kAdjacencyBytes) / 2);
  EXPECT_EQ(plan.feature_prefix_bytes, 0u);
}

TEST(FullGraphPlan, BothStreamAndShareTheRoom) {
  const uint64_t left = 256 << 10;  // less than the adjacency
  const FullGraphPlan plan = PlanFullGraph(DenseMeta(), Options(), kDenseExtents, kHeld + left);
  EXPECT_FALSE(plan.adjacency_resident);
  EXPECT_FALSE(plan.features_resident);
  // Half of the room each, as two buffers.
  EXPECT_EQ(plan.adjacency_buffer_bytes, left / 4);
  EXPECT_EQ(plan.feature_buffer_bytes, left / 4);
}

TEST(FullGraphPlan, TheAdjacencyStreamsBesideResidentFeaturesWhenItIsTheLarger) {
  // 4,000,000 bytes of ids: the features fit beside one adjacency block, the adjacency does not
  // fit beside one feature block; the adjacency's buffers get all the room the features leave.
  const uint64_t left = 3 * kMiB;
  const FullGraphPlan plan =
      PlanFullGraph(DenseMeta(1'000'000), Options(), kDenseExtents, kHeld + left);
  EXPECT_FALSE(plan.adjacency_resident);
  EXPECT_TRUE(plan.features_resident);
  EXPECT_EQ(plan.adjacency_buffer_bytes, (left - kFeatureBytes) / 2);
}

TEST(FullGraphPlan, IntermediatesGoToDiskWhenMemoryCannotHoldThem) {
  // The smallest budget that works: the intermediates as chunk buffers, and the streams sharing
  // what is left, the features at their smallest buffers.
  const uint64_t budget = kFixed + kOnDisk + kStreamsMin;
  const FullGraphPlan plan = PlanFullGraph(DenseMeta(), Options(), kDenseExtents, budget);
  EXPECT_TRUE(plan.intermediates_on_disk);
  EXPECT_FALSE(plan.adjacency_resident);
  EXPECT_FALSE(plan.features_resident);
  const uint64_t left = budget - (kCharged + kOnDisk + kMiB + 4 * kParameterFloats);
  EXPECT_EQ(plan.adjacency_buffer_bytes, left / 4);
  EXPECT_EQ(plan.feature_buffer_bytes, 128u * 256);  // one row group, more than left / 4

  // In memory from the budget that holds them there.
  EXPECT_TRUE(
      PlanFullGraph(DenseMeta(), Options(), kDenseExtents, kFixed + kInMemory + kStreamsMin - 1)
          .intermediates_on_disk);
  EXPECT_FALSE(
      PlanFullGraph(DenseMeta(), Options(), kDenseExtents, kFixed + kInMemory + kStreamsMin)
          .intermediates_on_disk);
}

TEST(FullGraphPlan, RefusalNamesTheSmallestBudgetThatWorks) {
  // Unsliced (one slice asked for): the whole propagation input is the floor.
  TrainOptions o = Options();
  o.full_graph_slices = 1;
  const uint64_t smallest = kFixed + kOnDisk + kStreamsMin;
  try {
    PlanFullGraph(DenseMeta(), o, kDenseExtents, smallest - 1);
    FAIL() << "a budget one byte short was planned";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::kInput);
    EXPECT_EQ(std::string(e.what()),
              fmt::format("--memory-budget {} cannot hold the full graph's propagation input and "
                          "model ({}), its other intermediates as row blocks ({}) and one block of "
                          "the adjacency and of the features ({}); the smallest budget that works "
                          "is {}",
                          FormatBytes(smallest - 1), FormatBytes(kFixed), FormatBytes(kOnDisk),
                          FormatBytes(kStreamsMin), FormatBytesRoundedUp(smallest)));
    EXPECT_NE(std::string(e.what()).find("the smallest budget that works is 2.13 MiB"),
              std::string::npos)
        << e.what();
  }
}

// Sliced, the propagation input is one resident slice of ceil(16 / S) columns, two chunk
// buffers per slice (8,192 bytes per column and a 4 KiB unit of zero bits) and one chunk of
// full rows; the gradient holds the first layer's slices before its last (at least the logits'
// 4 columns); the intermediates with more than one slice (the hidden layer's output, the
// gradient, and the logits when slices are narrower than 4 columns) one chunk of full rows
// each, and zero bits per slice.
constexpr uint64_t SlicedBudget(uint64_t slice_width) {
  const uint64_t hidden_slices = (16 + slice_width - 1) / slice_width;
  const uint64_t logit_slices = (4 + slice_width - 1) / slice_width;
  const uint64_t gradient = std::max<uint64_t>(15 / slice_width * slice_width, 4);
  const uint64_t gradient_slices = (gradient + slice_width - 1) / slice_width;
  return kFixed - 4 * kNodes * 16 + 4 * kNodes * slice_width + 8192 * 16 + 1024 * 16 * 4 +
         2 * 1024 * 4 * (16 + 4 + gradient) +
         4096 * (2 * hidden_slices + logit_slices + gradient_slices) + 1024 * 16 * 4 +
         (gradient_slices > 1 ? 1024 * gradient * 4 : 0) + (slice_width < 4 ? 1024 * 4 * 4 : 0) +
         kStreamsMin;
}

TEST(FullGraphPlan, ThePropagationInputIsSlicedWhenItCannotBeWhole) {
  // Slices of 8 columns need less than the whole input here: they save 320,000 bytes of it, more
  // than their buffers, staged rows and the gradient's 4 more columns cost.
  static_assert(SlicedBudget(8) < kFixed + kOnDisk + kStreamsMin);
  // One byte short of the unsliced floor: two slices of 8, intermediates on disk.
  FullGraphPlan plan =
      PlanFullGraph(DenseMeta(), Options(), kDenseExtents, kFixed + kOnDisk + kStreamsMin - 1);
  EXPECT_EQ(plan.slices, 2u);
  EXPECT_EQ(plan.slice_width, 8u);
  EXPECT_EQ(plan.gradient_width, 8u);
  EXPECT_TRUE(plan.intermediates_on_disk);
  // One byte short of that: slices of 4.
  plan = PlanFullGraph(DenseMeta(), Options(), kDenseExtents, SlicedBudget(8) - 1);
  EXPECT_EQ(plan.slices, 4u);
  EXPECT_EQ(plan.slice_width, 4u);
  EXPECT_EQ(plan.gradient_width, 12u);
  // A budget that holds the input whole does not slice it, and keeps only the logits' dP.
  plan = PlanFullGraph(DenseMeta(), Options(), kDenseExtents, kFixed + kOnDisk + kStreamsMin);
  EXPECT_EQ(plan.slices, 1u);
  EXPECT_EQ(plan.slice_width, 16u);
  EXPECT_EQ(plan.gradient_width, 4u);
  // On so small a graph slices of 2 cost more than slices of 4 (each slice's buffers and zero
  // bits, and the gradient keeps 14 of the first layer's 16 columns), so the floor is slices of
  // 4; below it the refusal names it.
  static_assert(SlicedBudget(2) > SlicedBudget(4) && SlicedBudget(1) > SlicedBudget(4));
  plan = PlanFullGraph(DenseMeta(), Options(), kDenseExtents, SlicedBudget(2));
  EXPECT_EQ(plan.slice_width, 4u);
  plan = PlanFullGraph(DenseMeta(), Options(), kDenseExtents, SlicedBudget(4));
  EXPECT_EQ(plan.slices, 4u);
  try {
    PlanFullGraph(DenseMeta(), Options(), kDenseExtents, SlicedBudget(4) - 1);
    FAIL() << "a budget below four-column slices was planned";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the smallest budget that works is " +
                                         FormatBytesRoundedUp(SlicedBudget(4))),
              std::string::npos)
        << e.what();
  }
}

TEST(FullGraphPlan, SlicesOfAWideLayerAreWholeCacheLinesAndNarrowAsTheBudgetShrinks) {
  // The cuts of 40 hidden columns: slices of 32 (and 8), 16 (16, 16, 8), then powers of two.
  TrainOptions o = Options();
  o.model.hidden = 40;
  size_t previous = 40;
  std::set<size_t> widths;
  for (uint64_t budget = 8 * kMiB;; budget -= 16 << 10) {
    FullGraphPlan plan;
    try {
      plan = PlanFullGraph(DenseMeta(), o, kDenseExtents, budget);
    } catch (const Error&) {
      break;
    }
    EXPECT_LE(plan.slice_width, previous);
    EXPECT_EQ(plan.slices, (40 + plan.slice_width - 1) / plan.slice_width);
    if (plan.slices > 1) {
      EXPECT_TRUE(plan.slice_width % 16 == 0 || std::has_single_bit(plan.slice_width))
          << plan.slice_width;
      EXPECT_TRUE(plan.intermediates_on_disk);
    }
    widths.insert(plan.slice_width);
    previous = plan.slice_width;
  }
  // On so small a graph slices of 32 or 16 cost more than the whole: what they save of the
  // propagation input (10,000 rows) is less than the slices' chunk buffers and the gradient's
  // 28 more columns (the first layer's slices before its last) cost.
  EXPECT_TRUE(widths.contains(40) && widths.contains(8) && widths.contains(4))
      << ::testing::PrintToString(widths);
}

TEST(FullGraphPlan, SlicesAskedForCutTheColumnsEvenlyAndCannotExceedThem) {
  TrainOptions o = Options();
  o.full_graph_slices = 3;
  const FullGraphPlan plan = PlanFullGraph(DenseMeta(), o, kDenseExtents, 64 * kMiB);
  EXPECT_EQ(plan.slices, 3u);
  EXPECT_EQ(plan.slice_width, 6u);
  EXPECT_TRUE(plan.intermediates_on_disk);
  EXPECT_TRUE(plan.adjacency_resident && plan.features_resident);
  o.full_graph_slices = 17;
  try {
    PlanFullGraph(DenseMeta(), o, kDenseExtents, 64 * kMiB);
    FAIL() << "17 slices of 16 columns were planned";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "--full-graph-slices 17 exceeds the widest layer's 16 columns");
  }
}

TEST(FullGraphPlan, MaxMemoryGivesEachStreamHalfAsAPrefixAndOneSmallBuffer) {
  TrainOptions o = Options();
  o.full_graph_max_memory = true;
  const uint64_t left = kMiB;
  const FullGraphPlan plan = PlanFullGraph(DenseMeta(), o, kDenseExtents, kHeld + left);
  EXPECT_FALSE(plan.adjacency_resident);
  EXPECT_FALSE(plan.features_resident);
  EXPECT_FALSE(plan.intermediates_on_disk);
  // An eighth of each half is the buffer, the rest the resident prefix.
  EXPECT_EQ(plan.adjacency_buffer_bytes, left / 16);
  EXPECT_EQ(plan.adjacency_prefix_bytes, left / 2 - left / 16);
  EXPECT_EQ(plan.feature_buffer_bytes, left / 16);
  EXPECT_EQ(plan.feature_prefix_bytes, left / 2 - left / 16);
}

TEST(FullGraphPlan, SparseFeaturesStreamTwoFilesOrTheirIdsAloneAndDecodeTheirLargestGroup) {
  DatasetMeta meta = DenseMeta();
  meta.feature_dim = 400;
  meta.row_stride_bytes = 0;
  meta.sparse_features = true;
  meta.feature_nnz = 80'000;  // 320,000 bytes of ids and as many of values: 79 units each
  const StreamExtents extents = {
      .adjacency_row_span = 8192, .feature_group_span = 8192, .feature_group_nonzeros = 1200};
  // The features' row lengths (4 bytes a row) and group offsets (8 bytes a group of 128 rows,
  // and the end) beside the graph's, and the largest group's values as scratch. The
  // graph is directed: the gradient is as wide as the hidden layer.
  const uint64_t charged = kAdjacencyOffsets + 4 * kNodes + 8 * (79 + 1) + 7 * kNodes + 4 * 1024 +
                           4 * (kNodes * 16 + kGatheredAlignFloats) + 4 * 1200;
  const uint64_t held = charged + 4 * kNodes * (16 + 4 + 16) + kMiB + 4 * (400 * 16 + 16 * 4);
  const uint64_t left = 512 << 10;  // the adjacency and one block of both files, not all
  const FullGraphPlan plan = PlanFullGraph(meta, Options(), extents, held + left);
  EXPECT_EQ(plan.input_group_floats, 1200u);
  EXPECT_TRUE(plan.adjacency_resident);
  EXPECT_FALSE(plan.features_resident);
  // Two buffers for each of the two files.
  EXPECT_EQ(plan.feature_buffer_bytes, (left - kAdjacencyBytes) / 4);
  EXPECT_FALSE(plan.unit_values);

  // Values all 1: the ids alone, two buffers of twice the bytes, and resident in as much room
  // as the ids take (79 units) beside the adjacency.
  StreamExtents ones = extents;
  ones.unit_values = true;
  const FullGraphPlan binary = PlanFullGraph(meta, Options(), ones, held + left);
  EXPECT_TRUE(binary.unit_values);
  EXPECT_EQ(binary.input_group_floats, 1200u);
  EXPECT_FALSE(binary.features_resident);
  EXPECT_EQ(binary.feature_buffer_bytes, (left - kAdjacencyBytes) / 2);
  const uint64_t ids = 79 * 4096;
  EXPECT_TRUE(PlanFullGraph(meta, Options(), ones, held + kAdjacencyBytes + ids).features_resident);
  EXPECT_FALSE(
      PlanFullGraph(meta, Options(), ones, held + kAdjacencyBytes + ids - 1).features_resident);

  // Rows of at most 200 neighbours and 300 nonzeros: their lengths take 1 and 2 bytes, 3 and 2
  // bytes a row less charged, which the features' buffers get; the plan names the longest rows
  // for the runner's offsets.
  StreamExtents short_rows = extents;
  short_rows.adjacency_longest_row = 200;
  short_rows.feature_longest_row = 300;
  const FullGraphPlan narrow = PlanFullGraph(meta, Options(), short_rows, held + left);
  EXPECT_EQ(narrow.feature_buffer_bytes, (left + 5 * kNodes - kAdjacencyBytes) / 4);
  EXPECT_EQ(narrow.adjacency_longest_row, 200u);
  EXPECT_EQ(narrow.feature_longest_row, 300u);
}

// GAT, 2 heads of 8 and one head of the 4 logits: no normalisation array; what it gathers is
// its widest gradient rows (the 16 hidden columns and 4 statistics a head, 24); its
// intermediates are the outputs (16, 4), the transformed rows (16 + 2, 4 + 1), the gradient
// (16), the statistics (8) and the source gradients (16 + 2 × 2). Below that floor its hidden
// layer runs a head at a time (the averaged logits stay whole), gathering 8 + 4 columns.
TEST(FullGraphPlan, GatGathersItsGradientRowsWholeOrAGroupOfHeadsAtATime) {
  TrainOptions o = Options();
  o.model.kind = ModelKind::kGat;
  o.model.hidden = 8;
  o.model.heads = 2;
  o.model.out_heads = 1;
  const std::vector<FullGraphLayerShape> layers = FullGraphLayers(o.model, 64, 4);
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_EQ(layers[0].out, 16u);
  EXPECT_TRUE(layers[0].concat);
  EXPECT_EQ(layers[1].in, 16u);
  EXPECT_EQ(layers[1].heads, 1u);
  EXPECT_EQ(layers[1].out, 4u);
  EXPECT_FALSE(layers[1].concat);
  const FullGraphPlan whole = PlanFullGraph(DenseMeta(), o, kDenseExtents, 64 * kMiB);
  EXPECT_EQ(whole.slices, 1u);
  EXPECT_EQ(whole.slice_width, 24u);
  EXPECT_FALSE(whole.intermediates_on_disk);
  constexpr uint64_t kParameters = (64 + 2) * 16 + (16 + 2) * 4;
  constexpr uint64_t kWidths = 16 + 4 + 18 + 5 + 16 + 8 + 20;
  // The intermediates' zero bits: two 4 KiB units for those 18 and 20 wide, one for the others.
  constexpr uint64_t kZeroBits = 9 * 4096;
  const uint64_t smallest =
      kAdjacencyOffsets + 3 * kNodes + 4 * 1024 + 4 * (kNodes * 24 + kGatheredAlignFloats) +
      4 * 128 * 64 + 5 * 4 * kParameters + kMiB + 2 * 1024 * 4 * kWidths + kZeroBits + kStreamsMin;
  auto expect_refused = [&](const TrainOptions& options, const StreamExtents& extents,
                            uint64_t budget) {
    try {
      PlanFullGraph(DenseMeta(), options, extents, budget - 1);
      FAIL() << "a budget one byte short was planned";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("the smallest budget that works is " +
                                           FormatBytesRoundedUp(budget)),
                std::string::npos)
          << e.what();
    }
  };
  TrainOptions unsliced = o;
  unsliced.full_graph_slices = 1;
  const FullGraphPlan tight = PlanFullGraph(DenseMeta(), unsliced, kDenseExtents, smallest);
  EXPECT_EQ(tight.slices, 1u);
  EXPECT_EQ(tight.heads_per_slice, 2u);
  EXPECT_TRUE(tight.intermediates_on_disk);
  expect_refused(unsliced, kDenseExtents, smallest);
  // On a directed graph it gathers the transformed rows beside the scatter's sums, 2 × 18.
  StreamExtents directed = kDenseExtents;
  directed.symmetric = false;
  const FullGraphPlan scattered = PlanFullGraph(DenseMeta(), o, directed, 64 * kMiB);
  EXPECT_EQ(scattered.slice_width, 36u);
  EXPECT_FALSE(scattered.symmetric);
  const uint64_t wider = smallest + 4 * kNodes * (36 - 24);
  EXPECT_TRUE(PlanFullGraph(DenseMeta(), unsliced, directed, wider).intermediates_on_disk);
  expect_refused(unsliced, directed, wider);

  // A head at a time: the outputs of the hidden layer as two slices of 8 columns (and a chunk
  // of their full rows), each head's transformed rows (9) and source gradients (10), the
  // statistics of one head (4), and a chunk of full transformed rows staged (18); all on disk,
  // each under one 4 KiB unit of zero bits.
  constexpr uint64_t kGroupWidths = 8 + 8 + 4 + 9 + 9 + 5 + 16 + 4 + 10 + 10;
  const uint64_t grouped = kAdjacencyOffsets + 3 * kNodes + 4 * 1024 +
                           4 * (kNodes * 12 + kGatheredAlignFloats) + 4 * 1024 * 18 + 4 * 128 * 64 +
                           5 * 4 * kParameters + kMiB + 2 * 1024 * 4 * kGroupWidths + 10 * 4096 +
                           1024 * 16 * 4 + kStreamsMin;
  ASSERT_LT(grouped, smallest);
  const FullGraphPlan heads = PlanFullGraph(DenseMeta(), o, kDenseExtents, grouped);
  EXPECT_EQ(heads.slices, 2u);
  EXPECT_EQ(heads.heads_per_slice, 1u);
  EXPECT_EQ(heads.slice_width, 12u);
  EXPECT_TRUE(heads.intermediates_on_disk);
  expect_refused(o, kDenseExtents, grouped);
  // Forced, the same; and directed, a head gathers 2 × 9.
  TrainOptions two = o;
  two.full_graph_slices = 2;
  EXPECT_EQ(PlanFullGraph(DenseMeta(), two, kDenseExtents, 64 * kMiB).heads_per_slice, 1u);
  EXPECT_EQ(PlanFullGraph(DenseMeta(), two, directed, 64 * kMiB).slice_width, 18u);
  two.full_graph_slices = 3;
  EXPECT_THROW(PlanFullGraph(DenseMeta(), two, kDenseExtents, 64 * kMiB), Error);
}

TEST(FullGraphPlan, OptionsAFullGraphRunCannotHaveAreRefusedNamingTheOption) {
  auto refusal = [](const TrainOptions& o) {
    try {
      CheckFullGraphOptions(o);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), Error::Kind::kInput);
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refusal(Options()), "accepted");
  TrainOptions o = Options();
  o.full_graph_chunk_rows = 1000;
  EXPECT_EQ(refusal(o), "--full-graph-chunk-rows must be a positive multiple of 1024");
  o = Options();
  o.model.kind = ModelKind::kSage;
  EXPECT_EQ(refusal(o), "accepted");
  o.model.kind = ModelKind::kGat;
  EXPECT_EQ(refusal(o), "accepted");
  o.full_graph_slices = 1;
  EXPECT_EQ(refusal(o), "accepted");
  o.full_graph_slices = 2;
  EXPECT_EQ(refusal(o), "accepted");
  o = Options();
  o.max_batches = 3;
  EXPECT_EQ(refusal(o), "--max-batches needs mini-batches, not --full-graph");
}

// The scans read a graph in chunks of 65,536 offsets, ids or values: over several of each
// (70,000 nodes, ~420,000 edges) they still find it symmetric, the adjacency's widest row span,
// and whether every feature value is 1.
TEST(FullGraphPlan, ExtentsAreMeasuredAcrossTheScansChunks) {
  testing::ScratchDir dir;
  const std::string path = dir / "graph";
  GenerateOptions g = testing::SmallGraph(path, 70000, 64, 4, 6, 3);
  g.feature_density = 0.125;
  GenerateDataset(g);
  const Dataset dataset = Dataset::Open(path);
  ASSERT_GT(dataset.meta().num_edges, 4 * 65536u);
  const StreamExtents extents = MeasureStreamExtents(dataset);
  EXPECT_TRUE(extents.symmetric);
  const DatasetMeta& meta = dataset.meta();
  std::vector<uint64_t> indptr(meta.num_nodes + 1);
  FileReader(dataset.PathOf(kIndptrFile)).ReadExact(0, indptr.data(), indptr.size() * 8);
  const RowOffset offset_of = [&](uint64_t row) { return indptr[row] * meta.node_id_bytes; };
  EXPECT_EQ(extents.adjacency_row_span, LargestGroupSpan(meta.num_nodes, 1, offset_of));
  uint64_t longest = 0;
  for (uint64_t v = 0; v < meta.num_nodes; ++v)
    longest = std::max(longest, indptr[v + 1] - indptr[v]);
  EXPECT_EQ(extents.adjacency_longest_row, longest);
  std::vector<uint64_t> feature_indptr(meta.num_nodes + 1);
  FileReader(dataset.PathOf(kSparseIndptrFile))
      .ReadExact(0, feature_indptr.data(), feature_indptr.size() * 8);
  longest = 0;
  for (uint64_t v = 0; v < meta.num_nodes; ++v) {
    longest = std::max(longest, feature_indptr[v + 1] - feature_indptr[v]);
  }
  EXPECT_EQ(extents.feature_longest_row, longest);
  EXPECT_GT(extents.feature_group_nonzeros, 0u);
  // The generated bag-of-words's values are all 1, until the last one (past the first chunk) is
  // not.
  EXPECT_TRUE(extents.unit_values);
  ASSERT_GT(meta.feature_nnz, 65536u);
  {
    std::fstream values(dataset.PathOf(kSparseValuesFile),
                        std::ios::in | std::ios::out | std::ios::binary);
    const float two = 2.0f;
    values.seekp(static_cast<std::streamoff>((meta.feature_nnz - 1) * sizeof(float)));
    values.write(reinterpret_cast<const char*>(&two), sizeof two);
  }
  EXPECT_FALSE(MeasureStreamExtents(dataset).unit_values);
}

}  // namespace
}  // namespace strata
