# Finds nvcc (optional). Without it moxc builds CPU-only artifacts and the
# CUDA tests skip; the runtime's CUDA backend needs no CUDA at build time
# (it loads libcuda.so.1 when it runs). Searched, in order, exactly where
# docs/install.md says: /usr/local/cuda/bin, $CUDA_HOME/bin, then PATH -
# not CMake's other places (/usr/local/bin and the like when not on PATH,
# CMAKE_PREFIX_PATH), so that what a user's shell finds is what mox finds.
# -DMOX_NVCC=PATH picks one; -DMOX_NVCC= (empty) turns nvcc off.
if(DEFINED CACHE{MOX_NVCC} AND "$CACHE{MOX_NVCC}" STREQUAL "")
  message(STATUS "mox: nvcc disabled (MOX_NVCC is empty); kernels build for the CPU only")
else()
  find_program(MOX_NVCC nvcc HINTS /usr/local/cuda/bin $ENV{CUDA_HOME}/bin PATHS ENV PATH NO_DEFAULT_PATH)
  # A path given with -DMOX_NVCC=... is taken as it is by find_program: it
  # must name an executable file, or the build would fail later in moxc.
  if(MOX_NVCC AND (IS_DIRECTORY "${MOX_NVCC}" OR NOT EXISTS "${MOX_NVCC}"))
    message(FATAL_ERROR "mox: MOX_NVCC is '${MOX_NVCC}', which is not a file; give nvcc's path, "
                        "or -DMOX_NVCC= (empty) to build kernels for the CPU only")
  endif()
  if(MOX_NVCC)
    message(STATUS "mox: nvcc found at ${MOX_NVCC}")
  else()
    message(STATUS "mox: nvcc not found (in /usr/local/cuda/bin, $CUDA_HOME/bin, PATH); kernels build for the CPU only")
  endif()
endif()
set(MOX_CUDA_ARCHS "sm_90" CACHE STRING "CUDA architectures moxc builds SASS for (PTX of the first is embedded)")

# NVTX 3 (header-only, part of the CUDA toolkit): when its headers are
# here, the trace also emits NVTX ranges and marks for Nsight Systems
# (src/core/trace_nvtx.c, docs/trace.md). Nothing is linked.
if(MOX_NVCC)
  get_filename_component(mox_nvcc_root "${MOX_NVCC}" DIRECTORY)
  get_filename_component(mox_nvcc_root "${mox_nvcc_root}" DIRECTORY)
endif()
find_path(MOX_NVTX3_INCLUDE_DIR nvtx3/nvToolsExt.h
  HINTS ${mox_nvcc_root}/include /usr/local/cuda/include $ENV{CUDA_HOME}/include)

# Adds the NVTX side of the trace to a target built from src/core's sources.
function(mox__add_nvtx target)
  if(MOX_NVTX3_INCLUDE_DIR)
    target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/src/core/trace_nvtx.c)
    target_include_directories(${target} SYSTEM PRIVATE ${MOX_NVTX3_INCLUDE_DIR})
    target_compile_definitions(${target} PRIVATE MOX_HAVE_NVTX3=1)
  endif()
endfunction()
