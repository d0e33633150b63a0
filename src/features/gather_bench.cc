#include "features/gather_bench.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <deque>
#include <memory>

#include "common/random.h"
#include "features/direct_feature_store.h"
#include "graph/hotness.h"
#include "sampling/khop_sampler.h"
#include "strata/error.h"
#include "strata/graph.h"

namespace strata {
namespace {

// Presampling draws from batches far away from the measured ones: same process, other draws.
constexpr uint64_t kPresampleFirstBatch = uint64_t{1} << 40;

double CpuSeconds() {
  rusage usage;
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

void DropFromPageCache(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error::System("cannot open", path, errno);
  ::fdatasync(fd);
  int rc = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  if (rc != 0) throw Error::System("cannot drop from the page cache", path, rc);
}

}  // namespace

nlohmann::ordered_json RunGatherBench(const GatherBenchOptions& o) {
  MemoryBudget budget(o.memory_budget_bytes);
  const Dataset dataset = Dataset::Open(o.dataset);
  const DatasetMeta& meta = dataset.meta();
  if (meta.feature_dim == 0) throw Error::Input("dataset has no features", o.dataset);
  const RowLayout layout = RowLayout::Of(meta);

  std::unique_ptr<CscGraph> graph;
  std::unique_ptr<KHopSampler> sampler;
  const bool want_hot =
      o.store == FeatureStoreKind::kDirect && o.cache_fraction > 0 && o.hot_share > 0;
  if (o.khop_ids || want_hot) graph = std::make_unique<CscGraph>(dataset, budget);
  const std::vector<uint64_t> train = dataset.ReadSplit(Split::kTrain);
  if (o.khop_ids || (want_hot && o.hot_policy == HotnessPolicy::kPresample)) {
    sampler = std::make_unique<KHopSampler>(*graph, train, o.fanouts, o.batch_size, o.seed, budget);
  }
  auto make_batch = [&](uint64_t index) {
    if (o.khop_ids) return sampler->Batch(index);
    Rng rng(MixSeed(o.seed, index));
    std::vector<uint64_t> ids(o.batch_rows);
    for (auto& id : ids) id = rng.Below(meta.num_nodes);
    return ids;
  };

  // Cache sizing: a share of the feature bytes, split between the two tiers.
  const uint64_t cache_rows = static_cast<uint64_t>(o.cache_fraction * meta.num_nodes);
  const uint64_t hot_rows = want_hot ? static_cast<uint64_t>(cache_rows * o.hot_share) : 0;
  DirectStoreOptions direct;
  direct.io.kind = o.engine;
  direct.io.depth = o.io_depth;
  direct.max_read_bytes = o.max_read_bytes;
  direct.coalesce = o.coalesce;
  direct.policy = o.policy;
  direct.dynamic_rows = cache_rows - hot_rows;
  if (hot_rows > 0) {
    ChargedArray<float> scores = HotnessScores(
        o.hot_policy, *graph, train,
        [&](uint64_t b) { return sampler->Batch(kPresampleFirstBatch + b); }, o.presample_batches,
        budget);
    direct.hot_ids = TopScored(scores, hot_rows, budget);
  }
  std::deque<std::vector<uint64_t>> upcoming;
  for (uint32_t w = 0; w <= o.window; ++w) upcoming.push_back(make_batch(w));
  uint64_t widest = 0;
  for (const auto& b : upcoming) widest = std::max<uint64_t>(widest, b.size());
  direct.max_pinned_ids =
      o.window == 0 ? 0 : std::min<uint64_t>(meta.num_nodes, 2 * (o.window + 1) * widest);

  if (o.cold) DropFromPageCache(dataset.PathOf(kFeaturesFile));
  auto store = OpenFeatureStore(dataset, o.store, direct, budget);
  for (uint32_t w = 1; w <= o.window; ++w) store->Pin(upcoming[w]);

  std::vector<float> out;
  uint64_t batches = 0;
  uint64_t next_batch = o.window + 1;
  const double cpu_start = CpuSeconds();
  const auto start = std::chrono::steady_clock::now();
  double elapsed = 0;
  while (elapsed < o.seconds) {
    std::vector<uint64_t> ids = std::move(upcoming.front());
    upcoming.pop_front();
    out.resize(ids.size() * layout.dim);
    store->Gather(ids, out);
    if (o.window > 0) store->Unpin(ids);
    upcoming.push_back(make_batch(next_batch++));
    if (o.window > 0) store->Pin(upcoming.back());
    ++batches;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  const double cpu = CpuSeconds() - cpu_start;
  const FeatureStoreStats s = store->stats();

  nlohmann::ordered_json report;
  report["dataset"] = o.dataset;
  report["store"] = store->name();
  if (auto* d = dynamic_cast<DirectFeatureStore*>(store.get())) {
    report["engine"] = d->engine().name();
    report["io_depth"] = d->engine().depth();
  }
  report["ids"] = o.khop_ids ? "khop" : "uniform";
  report["batches"] = batches;
  report["seconds"] = elapsed;
  report["rows"] = s.rows_requested;
  report["rows_per_s"] = s.rows_requested / elapsed;
  report["useful_bytes_per_s"] = s.rows_requested * layout.row_bytes() / elapsed;
  report["reads_per_s"] = s.reads / elapsed;
  report["disk_bytes_per_s"] = s.bytes_read / elapsed;
  const double unique = std::max<double>(1, s.rows_unique);
  report["hit_rate"] = s.hit_rate();
  report["tier_hit_rates"] = {{"hot", s.hot_hits / unique}, {"dynamic", s.dynamic_hits / unique}};
  report["read_amplification"] = s.read_amplification();
  report["cpu_seconds_per_million_rows"] = cpu / std::max<double>(1, s.rows_requested) * 1e6;
  report["cpu_cores_busy"] = cpu / elapsed;
  report["cache"] = {{"fraction", o.cache_fraction},
                     {"hot_rows", hot_rows},
                     {"dynamic_rows", direct.dynamic_rows},
                     {"policy", CachePolicyKindName(o.policy)},
                     {"window", o.window}};
  report["memory_budget_bytes"] = budget.limit();
  report["memory_charged_peak_bytes"] = budget.peak();
  report["peak_rss_bytes"] = PeakRssBytes();
  return report;
}

}  // namespace strata
