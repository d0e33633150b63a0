// strata._strata, the compiled half of the Python package (python/strata/): datasets, import,
// generation and the NeighborLoader of include/strata/, with their arguments' defaults taken
// from the C++ option structs so that they are stated once. The pure-Python half adds the
// iterator protocol and the documentation users read (python/strata/loader.py).
//
// Errors: strata::Error becomes InputError (a ValueError too) for bad input, KeyboardInterrupt
// for an interrupt and StrataError otherwise, with the same one-line message the CLI prints.
// Arrays: a batch's arrays are views of the batch's own buffers (no copy); each array's base
// is the Batch object, which keeps the buffers, and the loader they are charged to, alive.
// Threads: the loader's pipeline runs on its own threads without the GIL; Next releases the
// GIL while it waits and takes it back every 100 ms to let Ctrl-C through.
#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "strata/blas_core.h"
#include "strata/dataset.h"
#include "strata/epoch_report.h"
#include "strata/error.h"
#include "strata/feature_store.h"
#include "strata/generate.h"
#include "strata/import.h"
#include "strata/neighbor_loader.h"

namespace py = pybind11;

namespace strata {
namespace {

PyObject* strata_error = nullptr;
PyObject* input_error = nullptr;

void TranslateError(std::exception_ptr error) {
  try {
    if (error) std::rethrow_exception(error);
  } catch (const Error& e) {
    switch (e.kind()) {
      case Error::Kind::kInput:
        PyErr_SetString(input_error, e.what());
        break;
      case Error::Kind::kInterrupted:
        PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
        break;
      case Error::Kind::kInternal:
        PyErr_SetString(strata_error, e.what());
        break;
    }
  }
}

// "1G", "512M", or a byte count; "" means a quarter of physical memory, as in the CLI.
uint64_t BudgetBytes(const py::object& budget) {
  if (py::isinstance<py::int_>(budget)) return budget.cast<uint64_t>();
  return MemoryBudgetFromOption(budget.cast<std::string>());
}

Split ParseSplit(const std::string& name) {
  for (Split split : kAllSplits) {
    if (SplitName(split) == name) return split;
  }
  throw Error::Input("split must be train, val or test, not '" + name + "'");
}

// A copy of node ids as int64 (ids are below 2^48).
py::array_t<int64_t> IdArray(const std::vector<uint64_t>& ids) {
  py::array_t<int64_t> out(static_cast<py::ssize_t>(ids.size()));
  std::copy(ids.begin(), ids.end(), out.mutable_data());
  return out;
}

py::object MetaDict(const DatasetMeta& meta) {
  return py::module_::import("json").attr("loads")(meta.ToJson());
}

// A view of `count` elements at `data` whose base is `owner`. Unsigned ids and offsets are
// shown as the signed type of their width: node ids are below 2^48 and a block's offsets below
// 2^31, and torch.from_numpy takes signed integers only.
template <typename Shown, typename Stored>
py::array View(const Stored* data, std::vector<py::ssize_t> shape, py::handle owner) {
  static_assert(sizeof(Shown) == sizeof(Stored));
  return py::array_t<Shown>(shape, reinterpret_cast<const Shown*>(data), owner);
}

using BatchPtr = std::shared_ptr<LoaderBatch>;

// Runs `build` (an import or a generation, minutes on a large graph) without the GIL, then
// opens the dataset it published at `out`.
template <typename Build>
Dataset BuildAndOpen(const Build& build, const std::string& out) {
  {
    py::gil_scoped_release release;
    build();
  }
  return Dataset::Open(out);
}

void BindDataset(py::module_& m) {
  py::class_<Dataset>(m, "Dataset")
      .def(py::init(&Dataset::Open), py::arg("path"))
      .def_property_readonly("path", &Dataset::dir)
      .def_property_readonly("meta", [](const Dataset& d) { return MetaDict(d.meta()); })
      .def_property_readonly("num_nodes", [](const Dataset& d) { return d.meta().num_nodes; })
      .def_property_readonly("num_edges", [](const Dataset& d) { return d.meta().num_edges; })
      .def_property_readonly("feature_dim", [](const Dataset& d) { return d.meta().feature_dim; })
      .def_property_readonly("num_classes", [](const Dataset& d) { return d.meta().num_classes; })
      .def(
          "split",
          [](const Dataset& d, const std::string& name) {
            return IdArray(d.ReadSplit(ParseSplit(name)));
          },
          py::arg("name"))
      .def_property_readonly("labels",
                             [](const Dataset& d) {
                               MemoryBudget budget(~uint64_t{0});
                               ChargedArray<int32_t> labels = d.ReadLabels(budget);
                               py::array_t<int32_t> out(static_cast<py::ssize_t>(labels.size()));
                               std::copy(labels.data(), labels.data() + labels.size(),
                                         out.mutable_data());
                               return out;
                             })
      .def(
          "verify",
          [](const Dataset& d) {
            MemoryBudget budget(~uint64_t{0});
            d.Verify(budget);
          },
          py::call_guard<py::gil_scoped_release>())
      .def("__repr__", [](const Dataset& d) {
        const DatasetMeta& meta = d.meta();
        return "strata.Dataset('" + d.dir() + "', nodes=" + std::to_string(meta.num_nodes) +
               ", edges=" + std::to_string(meta.num_edges) +
               ", feature_dim=" + std::to_string(meta.feature_dim) +
               ", classes=" + std::to_string(meta.num_classes) + ")";
      });
}

void BindBuilders(py::module_& m) {
  const GenerateOptions g;
  m.def(
      "generate",
      [](const std::string& out, uint64_t nodes, double avg_degree, uint64_t feature_dim,
         uint32_t classes, const std::string& graph, uint64_t seed, double homophily,
         double degree_exponent, double isolated, double noise, uint64_t binary_ones,
         double train_ratio, double val_ratio, double test_ratio, const std::string& feature_dtype,
         const py::object& memory_budget, unsigned threads, bool replace) {
        GenerateOptions o;
        o.out = out;
        o.nodes = nodes;
        o.avg_degree = avg_degree;
        o.feature_dim = feature_dim;
        o.classes = classes;
        o.graph = ParseGraphModel(graph);
        o.seed = seed;
        o.homophily = homophily;
        o.degree_exponent = degree_exponent;
        o.isolated = isolated;
        o.noise = noise;
        o.binary_ones = binary_ones;
        o.train_ratio = train_ratio;
        o.val_ratio = val_ratio;
        o.test_ratio = test_ratio;
        o.feature_dtype = ParseFeatureDtype(feature_dtype, "feature_dtype");
        o.memory_budget_bytes = BudgetBytes(memory_budget);
        o.threads = threads;
        o.replace_existing = replace;
        return BuildAndOpen([&] { GenerateDataset(o); }, out);
      },
      py::arg("out"), py::arg("nodes"), py::arg("avg_degree") = g.avg_degree,
      py::arg("feature_dim") = g.feature_dim, py::arg("classes") = g.classes,
      py::arg("graph") = "sbm", py::arg("seed") = g.seed, py::arg("homophily") = g.homophily,
      py::arg("degree_exponent") = g.degree_exponent, py::arg("isolated") = g.isolated,
      py::arg("noise") = g.noise, py::arg("binary_ones") = g.binary_ones,
      py::arg("train_ratio") = g.train_ratio, py::arg("val_ratio") = g.val_ratio,
      py::arg("test_ratio") = g.test_ratio, py::arg("feature_dtype") = "float32",
      py::arg("memory_budget") = "", py::arg("threads") = g.threads, py::arg("replace") = false,
      "Generates a synthetic dataset at OUT (as `strata generate`) and opens it.");

  const ImportOptions i;
  m.def(
      "import_npy",
      [](const std::string& npy_dir, const std::string& out, bool undirected, bool self_loops,
         bool keep_parallel_edges, const std::string& feature_dtype,
         const py::object& memory_budget, bool replace) {
        ImportOptions o;
        o.out = out;
        o.undirected = undirected;
        o.self_loops = self_loops;
        o.keep_parallel_edges = keep_parallel_edges;
        o.feature_dtype = ParseFeatureDtype(feature_dtype, "feature_dtype");
        o.memory_budget_bytes = BudgetBytes(memory_budget);
        o.replace_existing = replace;
        return BuildAndOpen([&] { ImportNpyDirectory(npy_dir, o); }, out);
      },
      py::arg("npy_dir"), py::arg("out"), py::arg("undirected") = i.undirected,
      py::arg("self_loops") = i.self_loops, py::arg("keep_parallel_edges") = i.keep_parallel_edges,
      py::arg("feature_dtype") = "float32", py::arg("memory_budget") = "",
      py::arg("replace") = false,
      "Imports NPY_DIR/{edge_index,features,labels,*_idx}.npy into a dataset at OUT (as "
      "`strata import --npy`) and opens it.");
}

void BindBatch(py::module_& m) {
  py::class_<LoaderBatch, BatchPtr>(m, "Batch")
      .def_property_readonly("epoch", [](const LoaderBatch& b) { return b.batch.epoch; })
      .def_property_readonly("index", [](const LoaderBatch& b) { return b.batch.index; })
      .def_property_readonly("macro_batch", [](const LoaderBatch& b) { return b.macro_batch; })
      .def_property_readonly("num_layers",
                             [](const LoaderBatch& b) { return b.batch.blocks.size(); })
      .def_property_readonly("seeds",
                             [](py::object self) {
                               const Block& last =
                                   self.cast<const LoaderBatch&>().batch.blocks.back();
                               return View<int64_t>(last.src_nodes.data(), {last.num_dst()}, self);
                             })
      .def_property_readonly("labels",
                             [](py::object self) {
                               const auto& labels = self.cast<const LoaderBatch&>().labels;
                               return View<int64_t>(
                                   labels.data(), {static_cast<py::ssize_t>(labels.size())}, self);
                             })
      .def_property_readonly(
          "input_nodes",
          [](py::object self) {
            const auto& nodes = self.cast<const LoaderBatch&>().batch.input_nodes();
            return View<int64_t>(nodes.data(), {static_cast<py::ssize_t>(nodes.size())}, self);
          })
      .def_property_readonly("features",
                             [](py::object self) {
                               LoaderBatch& b = self.cast<LoaderBatch&>();
                               const auto dim = static_cast<py::ssize_t>(b.feature_dim);
                               const auto rows =
                                   dim == 0 ? 0 : static_cast<py::ssize_t>(b.features.size()) / dim;
                               return View<float>(b.features.data(), {rows, dim}, self);
                             })
      .def_property_readonly(
          "gathered",
          [](py::object self) -> py::object {
            const LoaderBatch& b = self.cast<const LoaderBatch&>();
            if (!b.partial) return py::none();
            return View<int32_t>(b.gathered.data(), {static_cast<py::ssize_t>(b.gathered.size())},
                                 self);
          },
          "With rows left out (a GPU cache): the positions in input_nodes of the rows in "
          "features; None when features has every input node's row.")
      .def_property_readonly(
          "features_address",
          [](const LoaderBatch& b) { return reinterpret_cast<uintptr_t>(b.features.data()); })
      .def(
          "block_arrays",
          [](py::object self, size_t layer) {
            const LoaderBatch& b = self.cast<const LoaderBatch&>();
            if (layer >= b.batch.blocks.size()) throw py::index_error("no such layer");
            const Block& block = b.batch.blocks[layer];
            return py::make_tuple(
                View<int32_t>(block.indptr.data(), {static_cast<py::ssize_t>(block.indptr.size())},
                              self),
                View<int32_t>(block.indices.data(),
                              {static_cast<py::ssize_t>(block.indices.size())}, self),
                View<int64_t>(block.src_nodes.data(),
                              {static_cast<py::ssize_t>(block.src_nodes.size())}, self),
                block.num_dst(),
                View<float>(block.edge_weights.data(),
                            {static_cast<py::ssize_t>(block.edge_weights.size())}, self));
          },
          py::arg("layer"),
          "(indptr, indices, src_nodes, num_dst, edge_weights) of layer `layer`, input layer "
          "first; edge_weights is empty unless the sampler weighs edges (LABOR).")
      .def_property_readonly(
          "history_layers", [](const LoaderBatch& b) { return HistoryLayers(b); },
          "method='pbs': the hidden layers whose inputs the batch exchanges with the "
          "historical embeddings (0 otherwise).")
      .def(
          "history",
          [](py::object self, size_t layer) {
            const LoaderBatch& b = self.cast<const LoaderBatch&>();
            if (layer >= HistoryLayers(b)) throw py::index_error("no such hidden layer");
            const HistoryView h = HistoryOf(b, layer);
            const auto stale = static_cast<py::ssize_t>(h.stale.size());
            const auto width = static_cast<py::ssize_t>(h.width);
            return py::make_tuple(
                View<int32_t>(h.stale.data(), {stale}, self),
                View<float>(h.stale_rows.data(), {stale, width}, self),
                View<int32_t>(h.fresh.data(), {static_cast<py::ssize_t>(h.fresh.size())}, self));
          },
          py::arg("layer"),
          "(stale, stale_rows, fresh) of hidden layer `layer` (the input of model layer "
          "layer + 1): the rows of that input to replace with stale_rows, after the "
          "activation and dropout, and those whose fresh values to commit.")
      .def(
          "commit_history",
          [](LoaderBatch& b,
             const std::vector<py::array_t<float, py::array::c_style | py::array::forcecast>>&
                 rows) {
            std::vector<std::span<const float>> spans;
            for (const auto& array : rows) spans.emplace_back(array.data(), array.size());
            CommitHistory(b, spans);
          },
          py::arg("rows"),
          "Hands back each hidden layer's fresh rows (the activation, without dropout, at "
          "history(l)'s fresh positions), to be written to the historical embeddings.");
}

// stats()["epoch"]: the fields EpochFields() marks as a loader's, each under the last part of
// its key ("stage_busy.sample_s" as "sample_s").
py::dict LoaderEpochDict(const EpochReport& report) {
  py::dict out;
  for (const EpochField& field : EpochFields()) {
    if (!field.loader || !HasField(report, field)) continue;
    const std::string_view key = field.key.substr(field.key.rfind('.') + 1);
    out[py::str(std::string(key))] = std::visit(
        [](const auto& value) -> py::object {
          using T = std::decay_t<decltype(value)>;
          if constexpr (std::is_same_v<T, std::nullptr_t>) {
            return py::none();
          } else if constexpr (std::is_same_v<T, std::string_view>) {
            return py::str(std::string(value));
          } else {
            return py::cast(value);
          }
        },
        field.value(report));
  }
  return out;
}

// NeighborLoader::OpenRowReader's store with the loader it reads for.
struct RowReader {
  const NeighborLoader* loader;
  std::unique_ptr<FeatureStore> store;
};

void BindLoader(py::module_& m) {
  py::class_<RowReader>(m, "_RowReader")
      .def(
          "gather",
          [](RowReader& reader, const py::array_t<int64_t, py::array::c_style>& ids) {
            const uint64_t dim = reader.loader->dataset().meta().feature_dim;
            const std::vector<uint64_t> nodes(ids.data(), ids.data() + ids.size());
            py::array_t<float> out(
                {static_cast<py::ssize_t>(nodes.size()), static_cast<py::ssize_t>(dim)});
            std::span<float> rows(out.mutable_data(), nodes.size() * dim);
            {
              py::gil_scoped_release release;
              reader.loader->GatherRows(*reader.store, nodes, rows);
            }
            return out;
          },
          py::arg("ids"), "The rows of `ids` as batches hand them out (float32, ids x dim).");
  const LoaderOptions d;
  py::class_<NeighborLoader>(m, "_NeighborLoader")
      .def(
          py::init([](const std::string& dataset, std::vector<int> fanouts, uint64_t batch_size,
                      const std::string& split, bool shuffle, bool drop_last, uint32_t rank,
                      uint32_t world_size, uint64_t seed, const std::string& feature_store,
                      const py::object& memory_budget, double cache_fraction, double hot_share,
                      const std::string& hot_policy, const std::string& cache_policy,
                      uint32_t io_depth, uint32_t run_ahead, unsigned threads, uint64_t hidden,
                      bool row_normalize, const std::string& multistage, uint32_t macro_batch,
                      const py::object& reuse, std::vector<int> macro_fanouts,
                      const py::object& output_arena, uint32_t output_arena_batches,
                      const std::string& sampler, uint32_t batch_dependency,
                      const py::object& labor_importance) {
            LoaderOptions o;
            o.dataset = dataset;
            o.fanouts = std::move(fanouts);
            o.batch_size = batch_size;
            o.split = ParseSplit(split);
            o.order = {
                .shuffle = shuffle, .drop_last = drop_last, .rank = rank, .world_size = world_size};
            o.seed = seed;
            o.features.store = ParseFeatureStoreKind(feature_store);
            o.memory_budget_bytes = BudgetBytes(memory_budget);
            o.features.cache_fraction = cache_fraction;
            o.features.hot_share = hot_share;
            o.features.hot_policy = ParseHotnessPolicy(hot_policy);
            o.features.cache_policy = ParseCachePolicyKind(cache_policy);
            o.features.row_normalize = row_normalize;
            o.io_depth = io_depth;
            o.max_run_ahead = run_ahead;
            o.threads = threads;
            o.hidden = hidden;
            o.output_arena_bytes = BudgetBytes(output_arena);
            o.output_arena_batches = output_arena_batches;
            o.labor = ParseLaborOptions(sampler, batch_dependency,
                                        py::str(labor_importance).cast<std::string>());
            if (!multistage.empty()) {
              o.multistage.method = ParseMultistageMethod(multistage);
              ParseAheadOfTime("", o.multistage);
              o.multistage.macro_batch = macro_batch;
              if (py::isinstance<py::str>(reuse)) {
                ParseReuse(reuse.cast<std::string>(), o.multistage);
              } else {
                o.multistage.reuse = reuse.cast<uint32_t>();
              }
              o.multistage.fanouts = std::move(macro_fanouts);
            }
            py::gil_scoped_release release;
            return std::make_unique<NeighborLoader>(o);
          }),
          py::arg("dataset"), py::arg("fanouts"), py::arg("batch_size"), py::arg("split"),
          py::arg("shuffle"), py::arg("drop_last"), py::arg("rank"), py::arg("world_size"),
          py::arg("seed"), py::arg("feature_store"), py::arg("memory_budget"),
          py::arg("cache_fraction") = d.features.cache_fraction,
          py::arg("hot_share") = d.features.hot_share,
          py::arg("hot_policy") = std::string(HotnessPolicyName(d.features.hot_policy)),
          py::arg("cache_policy") = std::string(CachePolicyKindName(d.features.cache_policy)),
          py::arg("io_depth") = d.io_depth, py::arg("run_ahead") = d.max_run_ahead,
          py::arg("threads") = d.threads, py::arg("hidden") = d.hidden,
          py::arg("row_normalize") = d.features.row_normalize, py::arg("multistage") = "",
          py::arg("macro_batch") = d.multistage.macro_batch,
          py::arg("reuse") = py::int_(d.multistage.reuse),
          py::arg("macro_fanouts") = std::vector<int>{}, py::arg("output_arena") = 0,
          py::arg("output_arena_batches") = d.output_arena_batches, py::arg("sampler") = "neighbor",
          py::arg("batch_dependency") = 1, py::arg("labor_importance") = py::int_(0))
      .def_property_readonly("batches_per_epoch", &NeighborLoader::batches_per_epoch)
      .def_property_readonly("seeds_per_epoch", &NeighborLoader::seeds_per_epoch)
      .def_property_readonly("dataset", &NeighborLoader::dataset)
      .def_property_readonly("macro_batch", &NeighborLoader::macro_batch)
      .def_property_readonly(
          "output_arena",
          [](const NeighborLoader& loader) {
            const auto [base, bytes] = loader.output_arena();
            return py::make_tuple(reinterpret_cast<uintptr_t>(base), bytes);
          },
          "(address, bytes) of the region every batch's features lie in; (0, 0) without one.")
      .def("start_epoch", &NeighborLoader::StartEpoch, py::arg("epoch"),
           py::call_guard<py::gil_scoped_release>())
      .def("stop_epoch", &NeighborLoader::StopEpoch, py::call_guard<py::gil_scoped_release>())
      .def(
          "next",
          [](NeighborLoader& loader) -> BatchPtr {
            std::optional<LoaderBatch> batch;
            {
              py::gil_scoped_release release;
              batch = loader.Next([] {
                py::gil_scoped_acquire acquire;
                if (PyErr_CheckSignals() != 0) throw py::error_already_set();
              });
            }
            if (!batch) return nullptr;
            return std::make_shared<LoaderBatch>(std::move(*batch));
          },
          py::keep_alive<0, 1>(), "The epoch's next batch, or None after its last.")
      .def(
          "hottest_nodes",
          [](const NeighborLoader& loader, const std::string& policy, uint64_t count) {
            std::vector<uint64_t> ids;
            {
              py::gil_scoped_release release;
              ids = loader.HottestNodes(ParseHotnessPolicy(policy), count);
            }
            return IdArray(ids);
          },
          py::arg("policy"), py::arg("count"),
          "The `count` nodes training reads most, hottest first, as `policy` (presample, rpr, "
          "degree) ranks them.")
      .def(
          "row_reader",
          [](const NeighborLoader& loader) {
            return RowReader{&loader, loader.OpenRowReader()};
          },
          py::keep_alive<0, 1>(),
          "A reader of rows outside the batches (its store charged to the budget while it "
          "lives): reader.gather(ids).")
      .def(
          "leave_out_rows",
          [](NeighborLoader& loader, const py::array_t<int64_t, py::array::c_style>& ids) {
            const std::vector<uint64_t> nodes(ids.data(), ids.data() + ids.size());
            py::gil_scoped_release release;
            loader.LeaveOutRows(nodes);
          },
          py::arg("ids"),
          "From the next epoch on, batches leave these rows out of their features (see "
          "Batch.gathered); empty: none. Stops the running epoch.")
      .def("stats", [](const NeighborLoader& loader) {
        const FeatureStoreStats s = loader.store_stats();
        py::dict out;
        out["rows_requested"] = s.rows_requested;
        out["rows_unique"] = s.rows_unique;
        out["rows_read"] = s.rows_read;
        out["reads"] = s.reads;
        out["bytes_read"] = s.bytes_read;
        out["hit_rate"] = s.hit_rate();
        out["memory_used_bytes"] = loader.budget().used();
        out["memory_peak_bytes"] = loader.budget().peak();
        out["epoch"] = LoaderEpochDict(loader.epoch_stats());
        return out;
      });
}

}  // namespace
}  // namespace strata

PYBIND11_MODULE(_strata, m) {
  using namespace strata;
  m.doc() = "The compiled core of the strata package; use the package, not this module.";
  strata_error = PyErr_NewException("strata.StrataError", PyExc_RuntimeError, nullptr);
  input_error = PyErr_NewException(
      "strata.InputError",
      py::make_tuple(py::handle(strata_error), py::handle(PyExc_ValueError)).release().ptr(),
      nullptr);
  m.attr("StrataError") = py::handle(strata_error);
  m.attr("InputError") = py::handle(input_error);
  py::register_exception_translator(&TranslateError);
  BindDataset(m);
  BindBuilders(m);
  BindBatch(m);
  BindLoader(m);
  // NumPy and PyTorch share Debian's OpenBLAS with this module, so matching its kernels to the
  // CPU speeds up the user's model too; at import no other thread is inside it yet.
  MatchBlasCoreToCpu();
  m.def("_byte_size", &BudgetBytes, py::arg("size"),
        "Bytes from 4096, '512M' or '4G', as memory_budget= takes them.");
  m.def(
      "blas_core",
      [] {
        const BlasCoreReport& r = MatchBlasCoreToCpu();
        py::dict report;
        report["core"] = r.core;
        report["replaced"] = r.replaced;
        report["note"] = r.note;
        return report;
      },
      "The OpenBLAS kernels in use ('core'), those they replaced at import ('replaced', empty "
      "when none) and the note printed about it ('note').");
}
