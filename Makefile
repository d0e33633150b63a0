# Front door: `make run` and `make test` set the machine up, build and run. See README.md.
JOBS ?= $(shell nproc)
BUILD ?= build
ASAN_BUILD ?= build-asan
DATA ?= data
RUN_NODES ?= 1000000

.PHONY: all setup build run test test-asan bench format clean

all: build

setup:
	@bash scripts/setup.sh

build: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	@mkdir -p $(DATA)
	$(BUILD)/strata generate $(DATA)/sbm-1m --nodes $(RUN_NODES) --avg-degree 20 --feature-dim 128 \
	    --classes 16 --seed 1 --force
	$(BUILD)/strata info $(DATA)/sbm-1m --verify

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The same tests under AddressSanitizer and UndefinedBehaviorSanitizer.
test-asan: setup
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DSTRATA_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	@cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	@$(BUILD)/bench/strata_micro_bench

format:
	@find src include tests bench -name '*.h' -o -name '*.cc' | xargs clang-format -i

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
