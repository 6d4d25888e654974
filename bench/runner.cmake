# runner.cmake - the benchmark runner mox_bench (bench/runner*.c and
# bench/cpu_*.c), the hand-written CUDA references (kernels_ref/*.cu, one
# fatbin each, built by nvcc with moxc's numeric flags) and the runner's
# tests (label bench). Included by bench/CMakeLists.txt; see
# docs/performance.md. Everything is skipped until its dependencies exist.
if(NOT TARGET mox OR NOT TARGET moxc OR NOT TARGET mox_artifact OR NOT COMMAND mox_add_kernels)
  message(STATUS "bench: mox_bench skipped until libmox and moxc are built")
  return()
endif()
set(MOX_BENCH_EXAMPLES ${PROJECT_SOURCE_DIR}/examples)
foreach(f vec-add/kernels/vec_add.c reduction/kernels/reduce.c reduction/reference.c
          cooperation/kernels/histogram.c cooperation/kernels/scan.c cooperation/reference.c
          particle-update/kernels/particle.c particle-update/reference.c
          matmul/kernels/matmul.c matmul/kernels/matmul_f16.c matmul/reference.c
          pipeline/kernels/stages.c pipeline/kernels/affine.h cooperation/kernels/compact.c
          matmul/kernels/dot.c)
  if(NOT EXISTS ${MOX_BENCH_EXAMPLES}/${f})
    message(STATUS "bench: mox_bench skipped: examples/${f} is missing")
    return()
  endif()
endforeach()

# ---- hand-written CUDA references ----
set(MOX_BENCH_REF_DIR ${CMAKE_CURRENT_BINARY_DIR}/kernels_ref)
set(MOX_BENCH_REF_FLAGS -fatbin -x cu -std=c++17 -O3 -fmad=false -prec-div=true -prec-sqrt=true
                        -ftz=false ${MOX_BENCH_GENCODE})
set(MOX_BENCH_NVCC_VERSION "none")
if(MOX_NVCC)
  set(ref_outputs "")
  foreach(k vec_add reduce histogram scan particle matmul)
    set(src ${CMAKE_CURRENT_SOURCE_DIR}/kernels_ref/${k}.cu)
    set(out ${MOX_BENCH_REF_DIR}/${k}.fatbin)
    add_custom_command(OUTPUT ${out}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${MOX_BENCH_REF_DIR}
      COMMAND ${MOX_NVCC} ${MOX_BENCH_REF_FLAGS} -I${MOX_BENCH_EXAMPLES}/particle-update/kernels
              -o ${out} ${src}
      DEPENDS ${src} ${MOX_BENCH_EXAMPLES}/particle-update/kernels/particle.h
      COMMENT "nvcc: reference kernels ${k}.cu"
      VERBATIM)
    list(APPEND ref_outputs ${out})
  endforeach()
  add_custom_target(mox_bench_ref_kernels ALL DEPENDS ${ref_outputs})
  execute_process(COMMAND ${MOX_NVCC} --version OUTPUT_VARIABLE nvcc_out ERROR_QUIET)
  string(REGEX MATCH "release [0-9.]+, V[0-9.]+" MOX_BENCH_NVCC_VERSION "${nvcc_out}")
endif()

# ---- the examples' CPU references (the kernels' exact arithmetic) ----
add_library(mox_bench_refs STATIC
  ${MOX_BENCH_EXAMPLES}/reduction/reference.c ${MOX_BENCH_EXAMPLES}/cooperation/reference.c
  ${MOX_BENCH_EXAMPLES}/particle-update/reference.c ${MOX_BENCH_EXAMPLES}/matmul/reference.c)
target_include_directories(mox_bench_refs PUBLIC ${PROJECT_SOURCE_DIR}
                                                 ${MOX_BENCH_EXAMPLES}/particle-update/kernels)
target_compile_options(mox_bench_refs PRIVATE -ffp-contract=off)
target_link_libraries(mox_bench_refs PUBLIC m)

# OpenMP for the plain-C baselines and the CPU results; not under the
# sanitizers (libgomp is not instrumented, TSan would report its internals).
set(MOX_BENCH_OPENMP FALSE)
if(NOT MOX_SANITIZE)
  find_package(OpenMP COMPONENTS C)
  if(OpenMP_C_FOUND)
    set(MOX_BENCH_OPENMP TRUE)
  endif()
endif()

add_executable(mox_bench
  runner.c runner_stats.c runner_report.c runner_work.c runner_rt.c runner_overhead.c
  runner_overhead_mem.c runner_pipeline.c
  runner_gpu.c runner_gpu_calls.c runner_gpu_artifacts.c runner_gpu_cases.c runner_gpu_workload_state.c
  cpu_suite.c cpu_suite_work.c cpu_suite_mox.c cpu_baseline.c
  runner_workloads.c runner_workloads_raw.c runner_workloads_raw_runs.c runner_workloads_rawgraph.c
  runner_workloads_examples.c runner_workloads_more.c runner_workloads_summary.c
  ${PROJECT_SOURCE_DIR}/src/cuda/cuda_api.c)
mox_add_kernels(mox_bench NAME benchq
  SOURCES ${MOX_BENCH_EXAMPLES}/vec-add/kernels/vec_add.c
          ${MOX_BENCH_EXAMPLES}/reduction/kernels/reduce.c
          ${MOX_BENCH_EXAMPLES}/cooperation/kernels/histogram.c
          ${MOX_BENCH_EXAMPLES}/cooperation/kernels/scan.c
          ${MOX_BENCH_EXAMPLES}/particle-update/kernels/particle.c
          ${MOX_BENCH_EXAMPLES}/matmul/kernels/matmul.c
          ${MOX_BENCH_EXAMPLES}/matmul/kernels/matmul_f16.c
  INCLUDE_DIRS ${MOX_BENCH_EXAMPLES}/particle-update/kernels)
mox_add_kernels(mox_bench NAME benchrt SOURCES runner_kernels/overhead.c)
# The examples' kernels the quality suite does not time, for the workloads suite.
mox_add_kernels(mox_bench NAME benchwl
  SOURCES ${MOX_BENCH_EXAMPLES}/pipeline/kernels/stages.c
          ${MOX_BENCH_EXAMPLES}/cooperation/kernels/compact.c
          ${MOX_BENCH_EXAMPLES}/cooperation/kernels/scan.c
          ${MOX_BENCH_EXAMPLES}/matmul/kernels/dot.c
  INCLUDE_DIRS ${MOX_BENCH_EXAMPLES}/pipeline/kernels)
# The runtime's own driver table (src/cuda/cuda_api.c, compiled in as the
# CUDA engineer's cuda_overhead does) and its test hooks (src/core/testing.h).
set_source_files_properties(${PROJECT_SOURCE_DIR}/src/cuda/cuda_api.c PROPERTIES
  COMPILE_DEFINITIONS _GNU_SOURCE)
set_source_files_properties(cpu_baseline.c PROPERTIES COMPILE_OPTIONS "-O3")
# The baseline loops again for x86-64-v3, as the kernels' work-group
# functions are (cpu_baseline.h): the suite picks the build the CPU runs.
include(CheckCCompilerFlag)
check_c_compiler_flag(-march=x86-64-v3 MOX_BENCH_HAS_V3)
if(MOX_BENCH_HAS_V3 AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  add_library(mox_bench_baseline_v3 OBJECT cpu_baseline.c)
  target_compile_options(mox_bench_baseline_v3 PRIVATE -O3 -march=x86-64-v3 -ffp-contract=off)
  target_compile_definitions(mox_bench_baseline_v3 PRIVATE CPU_BASELINE_SECOND CPU_BASELINE_SUFFIX=_v3)
  target_include_directories(mox_bench_baseline_v3 PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}
                                                           ${MOX_BENCH_EXAMPLES}/particle-update/kernels)
  if(MOX_BENCH_OPENMP)
    target_link_libraries(mox_bench_baseline_v3 PRIVATE OpenMP::OpenMP_C)
  endif()
  mox_target_warnings(mox_bench_baseline_v3)
  target_sources(mox_bench PRIVATE $<TARGET_OBJECTS:mox_bench_baseline_v3>)
endif()
target_include_directories(mox_bench PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}
                                             ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/src/core)
target_compile_options(mox_bench PRIVATE -ffp-contract=off)
find_package(Threads REQUIRED)
target_link_libraries(mox_bench PRIVATE mox::mox mox_artifact mox_bench_refs mox_workloads
                                        Threads::Threads ${CMAKE_DL_LIBS} m)
# The original kernels' fatbins (bench/workloads); $MOX_WORKLOADS_ORIG_DIR
# overrides the folder on a machine the build was carried to.
target_compile_definitions(mox_bench PRIVATE
  MOX_WORKLOADS_ORIG_DIR_DEFAULT="${MOX_WORKLOADS_ORIG_DIR}")
if(MOX_BENCH_OPENMP)
  target_link_libraries(mox_bench PRIVATE OpenMP::OpenMP_C)
  target_link_libraries(mox_bench_refs PRIVATE OpenMP::OpenMP_C)
endif()
mox_target_warnings(mox_bench)

# Build identity, refreshed on every build (the commit changes without a
# reconfigure); the header is rewritten only when its text changes.
string(TOUPPER "${CMAKE_BUILD_TYPE}" build_type_upper)
set(MOX_BENCH_BASELINE_FLAGS "${CMAKE_C_FLAGS} ${CMAKE_C_FLAGS_${build_type_upper}} -O3 -ffp-contract=off")
if(TARGET mox_bench_baseline_v3)
  string(APPEND MOX_BENCH_BASELINE_FLAGS " (and -march=x86-64-v3, used where the CPU has it)")
endif()
if(MOX_BENCH_OPENMP)
  string(APPEND MOX_BENCH_BASELINE_FLAGS " ${OpenMP_C_FLAGS}")
endif()
string(REPLACE ";" " " ref_flags_text "${MOX_BENCH_REF_FLAGS}")
add_custom_target(mox_bench_build_info
  COMMAND ${CMAKE_COMMAND}
          -DSRC=${PROJECT_SOURCE_DIR}
          -DOUT=${CMAKE_CURRENT_BINARY_DIR}/runner_build_info.h
          "-DC_COMPILER=${CMAKE_C_COMPILER_ID} ${CMAKE_C_COMPILER_VERSION}"
          "-DC_FLAGS=${CMAKE_C_FLAGS} ${CMAKE_C_FLAGS_${build_type_upper}} -ffp-contract=off"
          -DBUILD_TYPE=${CMAKE_BUILD_TYPE}
          "-DBASELINE_FLAGS=${MOX_BENCH_BASELINE_FLAGS}"
          "-DREF_NVCC_FLAGS=${ref_flags_text}"
          "-DNVCC_VERSION=${MOX_BENCH_NVCC_VERSION}"
          -DREF_DIR=${MOX_BENCH_REF_DIR}
          -P ${CMAKE_CURRENT_SOURCE_DIR}/runner_build_info.cmake
  BYPRODUCTS ${CMAKE_CURRENT_BINARY_DIR}/runner_build_info.h
  COMMENT "bench: build identity"
  VERBATIM)
add_dependencies(mox_bench mox_bench_build_info)
if(TARGET mox_bench_ref_kernels)
  add_dependencies(mox_bench mox_bench_ref_kernels)
endif()

# ---- tests (label bench): they check that the runner runs and verifies
# every result; nothing about time is asserted. ----
add_executable(mox_bench_stats_test runner_test.c runner_stats.c)
target_include_directories(mox_bench_stats_test PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(MOX_BENCH_CMOCKA QUIET IMPORTED_TARGET cmocka)
endif()
if(TARGET PkgConfig::MOX_BENCH_CMOCKA)
  target_link_libraries(mox_bench_stats_test PRIVATE PkgConfig::MOX_BENCH_CMOCKA)
else()
  target_link_libraries(mox_bench_stats_test PRIVATE cmocka)
endif()
mox_target_warnings(mox_bench_stats_test)
add_test(NAME bench-stats COMMAND mox_bench_stats_test)
set_tests_properties(bench-stats PROPERTIES LABELS bench TIMEOUT 30)

add_test(NAME bench-cpu-smoke
  COMMAND mox_bench --smoke --suite cpu,overhead,pipeline --max-threads 2
          --json ${CMAKE_CURRENT_BINARY_DIR}/bench-cpu-smoke.json
          --md ${CMAKE_CURRENT_BINARY_DIR}/bench-cpu-smoke.md)
set_tests_properties(bench-cpu-smoke PROPERTIES
  LABELS bench ENVIRONMENT MOX_BACKEND=cpu TIMEOUT 120 FIXTURES_SETUP bench_smoke_json)

find_program(MOX_BENCH_PYTHON NAMES python3)
if(MOX_BENCH_PYTHON)
  add_test(NAME bench-plot-smoke
    COMMAND ${MOX_BENCH_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/plot.py --check
            --out ${CMAKE_CURRENT_BINARY_DIR}/bench-smoke-plots
            ${CMAKE_CURRENT_BINARY_DIR}/bench-cpu-smoke.json)
  set_tests_properties(bench-plot-smoke PROPERTIES
    LABELS bench TIMEOUT 60 FIXTURES_REQUIRED bench_smoke_json SKIP_RETURN_CODE 77)
  # The peers' CPU side (inputs, chained float32 results, summaries).
  add_test(NAME bench-peers-selftest
    COMMAND ${MOX_BENCH_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/peers/common.py --self-test)
  set_tests_properties(bench-peers-selftest PROPERTIES LABELS bench TIMEOUT 60 SKIP_RETURN_CODE 77)
endif()

# The workloads suite at test sizes: every port and example through mox on
# the CPU backend (the raw CUDA side needs a GPU), its JSON drawn.
add_test(NAME bench-workloads-smoke
  COMMAND mox_bench --smoke --suite workloads
          --json ${CMAKE_CURRENT_BINARY_DIR}/bench-workloads-smoke.json
          --md ${CMAKE_CURRENT_BINARY_DIR}/bench-workloads-smoke.md)
set_tests_properties(bench-workloads-smoke PROPERTIES
  LABELS bench ENVIRONMENT MOX_BACKEND=cpu TIMEOUT 300 FIXTURES_SETUP bench_workloads_json)
if(MOX_BENCH_PYTHON)
  add_test(NAME bench-workloads-plot-smoke
    COMMAND ${MOX_BENCH_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/plot.py --check
            --out ${CMAKE_CURRENT_BINARY_DIR}/bench-workloads-smoke-plots
            ${CMAKE_CURRENT_BINARY_DIR}/bench-workloads-smoke.json)
  set_tests_properties(bench-workloads-plot-smoke PROPERTIES
    LABELS bench TIMEOUT 60 FIXTURES_REQUIRED bench_workloads_json SKIP_RETURN_CODE 77)
endif()
add_test(NAME bench-workloads-cuda-smoke
  COMMAND mox_bench --smoke --suite workloads --json ${CMAKE_CURRENT_BINARY_DIR}/bench-workloads-cuda.json)
set_tests_properties(bench-workloads-cuda-smoke PROPERTIES
  LABELS "bench;cuda" ENVIRONMENT MOX_BACKEND=cuda TIMEOUT 300 SKIP_RETURN_CODE 77)

add_test(NAME bench-cuda-smoke
  COMMAND mox_bench --smoke --suite quality --json ${CMAKE_CURRENT_BINARY_DIR}/bench-cuda-smoke.json)
set_tests_properties(bench-cuda-smoke PROPERTIES
  LABELS "bench;cuda" ENVIRONMENT MOX_BACKEND=cuda TIMEOUT 300 SKIP_RETURN_CODE 77)

# The quality suite's host side on a machine without a GPU: a stand-in
# driver (runner_fakecuda*.c) computes the kernels in C. Needs the fatbins
# (nvcc) since the suite loads and verifies them exactly as on a GPU.
if(MOX_NVCC)
  add_library(mox_bench_fakecuda SHARED runner_fakecuda.c runner_fakecuda_kernels.c runner_fakecuda_ports.c)
  target_include_directories(mox_bench_fakecuda PRIVATE ${PROJECT_SOURCE_DIR}/src
    ${PROJECT_SOURCE_DIR}/include ${MOX_BENCH_EXAMPLES}/particle-update/kernels)
  target_compile_options(mox_bench_fakecuda PRIVATE -ffp-contract=off)
  target_link_libraries(mox_bench_fakecuda PRIVATE m)
  mox_target_warnings(mox_bench_fakecuda)
  add_test(NAME bench-quality-fake
    COMMAND mox_bench --smoke --suite quality --json ${CMAKE_CURRENT_BINARY_DIR}/bench-quality-fake.json)
  set_tests_properties(bench-quality-fake PROPERTIES
    LABELS bench TIMEOUT 120
    ENVIRONMENT "MOX_CUDA_LIBRARY=$<TARGET_FILE:mox_bench_fakecuda>")
endif()
if(TARGET mox_bench_fakecuda)
  # The workloads suite's raw side on the stand-in driver, which computes
  # the examples' kernels and FDTD3d's (generated and original): launch
  # geometry, parameters, offsets, module variables, resets, read-backs,
  # the comparisons of raw-gen with mox and the kernel-time cases.
  add_test(NAME bench-workloads-fake
    COMMAND mox_bench --smoke --suite workloads
            --filter workloads/vec-add,workloads/histogram,workloads/scan,workloads/particle,workloads/matmul-f16,fdtd3d
            --json ${CMAKE_CURRENT_BINARY_DIR}/bench-workloads-fake.json)
  set_tests_properties(bench-workloads-fake PROPERTIES
    LABELS bench TIMEOUT 120
    ENVIRONMENT "MOX_BACKEND=cpu;MOX_BENCH_WORKLOADS_RAW=1;MOX_CUDA_LIBRARY=$<TARGET_FILE:mox_bench_fakecuda>")
  # The same run with the generated vec_add broken must report the mismatch.
  add_test(NAME bench-quality-fake-detects
    COMMAND mox_bench --smoke --suite quality --filter quality/vec-add)
  set_tests_properties(bench-quality-fake-detects PROPERTIES
    LABELS bench TIMEOUT 60
    ENVIRONMENT "MOX_CUDA_LIBRARY=$<TARGET_FILE:mox_bench_fakecuda>;MOX_FAKECUDA_BREAK=vec_add"
    PASS_REGULAR_EXPRESSION "quality/vec-add/gen: verification \\(round 0")
endif()
