# Finds nvcc (optional). Without it moxc builds CPU-only artifacts and the
# CUDA tests skip; the runtime's CUDA backend needs no CUDA at build time
# (it loads libcuda.so.1 when it runs).
find_program(MOX_NVCC nvcc HINTS /usr/local/cuda/bin $ENV{CUDA_HOME}/bin)
if(MOX_NVCC)
  message(STATUS "mox: nvcc found at ${MOX_NVCC}")
else()
  message(STATUS "mox: nvcc not found; kernels build for the CPU only")
endif()
set(MOX_CUDA_ARCHS "sm_90" CACHE STRING "CUDA architectures moxc builds SASS for (PTX of the first is embedded)")
