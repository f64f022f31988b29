# Entry points. Each target installs what it needs (Debian bookworm packages) before building.
BUILD ?= build
JOBS  ?= $(shell nproc)

FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZERS      ?=

.PHONY: deps deps-test deps-fuzz build test test-all demo clean fuzz fuzz-build

deps:
	@bash scripts/install-deps.sh build
deps-test:
	@bash scripts/install-deps.sh test
deps-fuzz:
	@bash scripts/install-deps.sh fuzz

$(BUILD)/Makefile: CMakeLists.txt
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release

build: deps $(BUILD)/Makefile
	cmake --build $(BUILD) -j $(JOBS)

# Tiers (ctest labels, CMakeLists.txt): `test` runs unit + e2e; `test-all` adds the slow tier
# (long end-to-end runs, MPI, npm consumers, PyTorch training tools).
test: build deps-test
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -LE slow

test-all: test
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -L slow

# libFuzzer harnesses (clang, ASan + UBSan) in their own build directory; each runs FUZZ_SECONDS.
fuzz-build: deps deps-fuzz
	CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=Release -DBOSCH_FUZZ=ON
	cmake --build $(FUZZ_BUILD) --target fuzzers -j $(JOBS)

fuzz: fuzz-build
	bash scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZERS)

demo: build
	bash scripts/demo.sh $(BUILD)/bosch

clean:
	rm -rf $(BUILD) $(FUZZ_BUILD)
