# Regenerates src/cuda/cuda_copy_ptx.c from src/cuda/cuda_copy_kernel.cu:
#   cmake -DNVCC=<nvcc> -DSOURCE_DIR=<repo> -P tests/cuda/copy_ptx.cmake
# (the target mox_cuda_copy_ptx runs it). The PTX (compute_75, JIT-compiled
# by the driver for the GPU at hand) is committed, so that libmox builds
# without nvcc; tests/cuda/test_copy_ptx.c checks that it was generated
# from the current source and that ptxas accepts it.
set(src ${SOURCE_DIR}/src/cuda/cuda_copy_kernel.cu)
set(out ${SOURCE_DIR}/src/cuda/cuda_copy_ptx.c)
set(tmp ${CMAKE_CURRENT_BINARY_DIR}/cuda_copy_kernel.ptx)
execute_process(
  COMMAND ${NVCC} -ptx -arch=compute_75 -fmad=false -I${SOURCE_DIR}/include -o ${tmp} ${src}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nvcc failed on ${src}")
endif()
file(SHA256 ${src} hash)
execute_process(COMMAND ${NVCC} --version OUTPUT_VARIABLE version)
string(REGEX MATCH "release [0-9.]+, V[0-9.]+" version "${version}")
file(STRINGS ${tmp} lines)
set(body "")
foreach(line IN LISTS lines)
  string(REPLACE "\\" "\\\\" line "${line}")
  string(REPLACE "\"" "\\\"" line "${line}")
  string(APPEND body "    \"${line}\\n\"\n")
endforeach()
file(WRITE ${out} "/* src/cuda/cuda_copy_ptx.c - GENERATED from cuda_copy_kernel.cu by
 * tests/cuda/copy_ptx.cmake (cmake --build <build> --target mox_cuda_copy_ptx),
 * nvcc ${version}, -arch=compute_75: do not edit. */
#include <stddef.h>

/* SHA-256 of cuda_copy_kernel.cu when this was generated. */
const char mox__cuda_copy_ptx_source_sha256[] = \"${hash}\";

const char mox__cuda_copy_ptx[] =
${body};
")
