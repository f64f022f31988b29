# Entry points. Each target installs what it needs (Debian bookworm packages) before building.
BUILD ?= build
JOBS  ?= $(shell nproc)

.PHONY: deps build test demo clean

deps:
	@bash scripts/install-deps.sh

$(BUILD)/Makefile: CMakeLists.txt
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release

build: deps $(BUILD)/Makefile
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

demo: build
	bash scripts/demo.sh $(BUILD)/bosch

clean:
	rm -rf $(BUILD)
