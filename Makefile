# Two entry points (see README): `make run` builds and runs the pipeline
# demo, `make test` builds and runs every test (plain, ASan+UBSan, TSan):
# every stage runs even when one fails, a summary lists each, and the
# command fails when any stage did. CI adds the no-nvcc stage
# (TEST_STAGES="plain asan tsan no-nvcc", see .ci/run).
JOBS ?= $(shell nproc)
BUILD ?= build
TEST_STAGES ?= plain asan tsan

.PHONY: deps configure build run test test-plain test-asan test-tsan test-no-nvcc clean

deps:
	@bash scripts/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMOX_BUILD_TESTS=ON -DMOX_BUILD_EXAMPLES=ON -DMOX_BUILD_BENCH=ON

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
	@bash scripts/run-demo.sh $(BUILD)

test-plain: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 600

test-asan: deps
	cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=Debug -DMOX_SANITIZE=address -DMOX_BUILD_BENCH=OFF
	cmake --build $(BUILD)-asan -j $(JOBS)
	cd $(BUILD)-asan && bash $(CURDIR)/scripts/ctest-sanitized.sh -j $(JOBS) -L sanitize --timeout 900

# TSan: dialect.test_dialect_stack_env is test_dialect again with another
# fiber stack size (MOX_CPU_FIBER_STACK); TSan sees no other interleaving.
test-tsan: deps
	cmake -S . -B $(BUILD)-tsan -DCMAKE_BUILD_TYPE=Debug -DMOX_SANITIZE=thread -DMOX_BUILD_BENCH=OFF
	cmake --build $(BUILD)-tsan -j $(JOBS)
	cd $(BUILD)-tsan && bash $(CURDIR)/scripts/ctest-sanitized.sh -j $(JOBS) -L sanitize --timeout 900 \
	  -E '^dialect\.test_dialect_stack_env$$'

test-no-nvcc: deps
	bash scripts/test-no-nvcc.sh $(BUILD)-no-nvcc $(JOBS)

test: deps
	@MAKE="$(MAKE)" bash scripts/test-stages.sh $(TEST_STAGES)

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-tsan $(BUILD)-no-nvcc
