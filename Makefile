# Two entry points (see README): `make run` builds and runs the pipeline
# demo, `make test` builds and runs every test (plain, ASan+UBSan, TSan).
JOBS ?= $(shell nproc)
BUILD ?= build

.PHONY: deps configure build run test test-plain test-asan test-tsan clean

deps:
	@bash scripts/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
	@bash scripts/run-demo.sh $(BUILD)

test-plain: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 600

test-asan: deps
	cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=Debug -DMOX_SANITIZE=address -DMOX_BUILD_BENCH=OFF
	cmake --build $(BUILD)-asan -j $(JOBS)
	cd $(BUILD)-asan && ctest --output-on-failure -j $(JOBS) -L sanitize --timeout 900

test-tsan: deps
	cmake -S . -B $(BUILD)-tsan -DCMAKE_BUILD_TYPE=Debug -DMOX_SANITIZE=thread -DMOX_BUILD_BENCH=OFF
	cmake --build $(BUILD)-tsan -j $(JOBS)
	cd $(BUILD)-tsan && ctest --output-on-failure -j $(JOBS) -L sanitize --timeout 900

test: test-plain test-asan test-tsan

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-tsan
