# Front door: `make run` and `make test` set the machine up, build and run. See README.md.
JOBS ?= $(shell nproc)
BUILD ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
DATA ?= data

.PHONY: all setup build python run run-dataset run-multistage test test-asan test-tsan fuzz bench reference-fixtures parity format clean

all: build

setup:
	@bash scripts/setup.sh

build: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# The main job: a papers100M-like graph (4M nodes, 117M edges, 2 GiB of features; 2.4 GiB in
# all against a 1 GiB memory budget), GraphSAGE out of core for 3 epochs with the direct-I/O
# store, then an MLP on the features alone, so that the run shows what the graph adds.
RUN_DATASET ?= $(DATA)/papers-like-4m
RUN_BUDGET ?= 1G
RUN_MODEL = --model sage --layers 2 --hidden 128 --fanouts 10,5 --batch-size 1000 --epochs 3 \
    --lr 0.003 --eval-fanouts 10,5 --memory-budget $(RUN_BUDGET)
RUN_MLP = --model mlp --layers 3 --hidden 256 --batch-size 4096 --epochs 15 --lr 0.01 \
    --eval-point best --memory-budget $(RUN_BUDGET)
run: build run-dataset
	$(BUILD)/strata info $(RUN_DATASET)
	$(BUILD)/strata train $(RUN_DATASET) $(RUN_MODEL) --feature-store direct \
	    --metrics-out $(DATA)/run-metrics.jsonl
	@echo "The features alone (OGB's MLP), against GraphSAGE's test accuracy above:"
	$(BUILD)/strata train $(RUN_DATASET) $(RUN_MLP) --feature-store direct

run-dataset: build
	@mkdir -p $(DATA)
	@test -f $(RUN_DATASET)/meta.json || $(BUILD)/strata generate $(RUN_DATASET) \
	    --like papers100M --nodes 4000000 --seed 1 --memory-budget $(RUN_BUDGET)

# The same training, multistage (docs/training.md): the graph partitioned once (GAP, 256
# parts, 1% hubs), then each epoch reads it sequentially in double-buffered macro-batches,
# repeating one while the next loads (--reuse auto: faster, but the losses depend on the disk).
run-multistage: build run-dataset
	@test -f $(RUN_DATASET)-p256/meta.json || $(BUILD)/strata partition $(RUN_DATASET) \
	    $(RUN_DATASET)-p256 --parts 256 --hubs 0.01 --memory-budget $(RUN_BUDGET)
	$(BUILD)/strata train $(RUN_DATASET)-p256 $(RUN_MODEL) --multistage partition --reuse auto \
	    --metrics-out $(DATA)/run-multistage-metrics.jsonl

# The Python package: .venv/bin/python, a venv over Debian's python3 that sees its packages
# (numpy, torch) and imports strata from the build tree.
python: build
	@test -x .venv/bin/python || /usr/bin/python3 -m venv --system-site-packages .venv
	@echo "$(abspath $(BUILD))/python" > "$$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/strata-build.pth"
	@.venv/bin/python -c 'import strata; print("strata imports from", strata.__path__[0])'

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The same tests under AddressSanitizer and UndefinedBehaviorSanitizer.
test-asan: setup
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DSTRATA_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS) --target strata_tests
	@cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS)

# The suites whose code starts threads (I/O engines, stores and caches, samplers, the batch
# pipeline, the macro-batch loaders, the trainers, the full graph's scratch transfers, the
# kernels' thread splits, and the CLI runs of a ThreadSanitizer-built strata) under
# ThreadSanitizer. OpenBLAS is not instrumented, so it runs one thread here: TSan cannot see
# its own synchronisation.
TSAN_SUITES = ThreadPool TaskThread DirectFeatureStore Stores/FeatureStoreTest Policies/WindowedCacheTest IoEngine \
    HostArena NeighborSampler Labor LaborImportance BatchPipelineTest NeighborBatchSourceTest BoundedQueue LargeBatchTest \
    MacroBatchTest AheadOfTimeTest HistoryTable NeighborLoaderTest Trainer Features/FullGraphTest IdWidths/ InputProducts \
    SpGemm SpMM TrainCli MultistageCli Placement/IntermediateRowsTest IntermediateRows ColumnSlices \
    GraphAttention
empty :=
space := $(empty) $(empty)
TSAN_REGEX = ^($(subst $(space),|,$(strip $(TSAN_SUITES))))
test-tsan: setup
	@cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DSTRATA_TSAN=ON >/dev/null
	@cmake --build $(TSAN_BUILD) -j $(JOBS) --target strata_tests
	@cd $(TSAN_BUILD) && OPENBLAS_NUM_THREADS=1 TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
	    ctest --output-on-failure -j $(JOBS) -R '$(TSAN_REGEX)'

# Every parser of untrusted input under libFuzzer, ASan and UBSan, FUZZ_SECONDS each, one after
# another (docs/reliability.md); built with clang in $(FUZZ_BUILD). Fails on any crash.
fuzz: setup
	@CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=Release -DSTRATA_FUZZ=ON >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target strata_fuzzers
	@bash scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

bench: build
	@$(BUILD)/bench/strata_micro_bench

# The PyTorch reference recipes (tools/reference/): re-record the checked-in fixtures, or print
# Strata's parity table against them.
reference-fixtures: build
	@/usr/bin/python3 tools/reference/record_fixtures.py --strata $(BUILD)/strata \
	    --out tests/fixtures/recipes
parity: build
	@python3 tools/reference/compare_strata.py --strata $(BUILD)/strata

format:
	@find src include tests bench fuzz -name '*.h' -o -name '*.cc' | xargs clang-format -i

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD)
