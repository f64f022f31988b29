# Entry points. Each target installs what it needs (Debian bookworm packages) before building.
BUILD ?= build
JOBS  ?= $(shell nproc)

FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZERS      ?=

.PHONY: deps build test demo clean fuzz fuzz-build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/Makefile: CMakeLists.txt
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release

build: deps $(BUILD)/Makefile
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# libFuzzer harnesses (clang, ASan + UBSan) in their own build directory; each runs FUZZ_SECONDS.
fuzz-build: deps
	CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=Release -DBOSCH_FUZZ=ON
	cmake --build $(FUZZ_BUILD) --target fuzzers -j $(JOBS)

fuzz: fuzz-build
	bash scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZERS)

demo: build
	bash scripts/demo.sh $(BUILD)/bosch

clean:
	rm -rf $(BUILD) $(FUZZ_BUILD)
