# front.cmake - moxc's libclang front end (parse*.c, check*.c, front_*.c)
# and where libclang 14 lives. Included by tools/moxc/CMakeLists.txt and by
# tests/moxc/front/CMakeLists.txt. Sets:
#   MOXC_FRONT_SOURCES          absolute paths of the front end's sources
#   MOXC_LIBCLANG_INCLUDE_DIRS  directory holding clang-c/Index.h
#   MOXC_LIBCLANG_LIBRARIES     the libclang shared library
set(MOXC_FRONT_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/front_util.c
  ${CMAKE_CURRENT_LIST_DIR}/front_cursors.c
  ${CMAKE_CURRENT_LIST_DIR}/front_types.c
  ${CMAKE_CURRENT_LIST_DIR}/line_set.c
  ${CMAKE_CURRENT_LIST_DIR}/diag_order.c
  ${CMAKE_CURRENT_LIST_DIR}/parse.c
  ${CMAKE_CURRENT_LIST_DIR}/parse_source.c
  ${CMAKE_CURRENT_LIST_DIR}/parse_module.c
  ${CMAKE_CURRENT_LIST_DIR}/parse_params.c
  ${CMAKE_CURRENT_LIST_DIR}/parse_block.c
  ${CMAKE_CURRENT_LIST_DIR}/parse_record.c
  ${CMAKE_CURRENT_LIST_DIR}/parse_scalar.c
  ${CMAKE_CURRENT_LIST_DIR}/parse_files.c
  ${CMAKE_CURRENT_LIST_DIR}/check_body.c
  ${CMAKE_CURRENT_LIST_DIR}/check_calls.c
  ${CMAKE_CURRENT_LIST_DIR}/check_cxx.c
  ${CMAKE_CURRENT_LIST_DIR}/check_cxx_types.c
  ${CMAKE_CURRENT_LIST_DIR}/check_cxx_c11.c
  ${CMAKE_CURRENT_LIST_DIR}/check_spin.c
  ${CMAKE_CURRENT_LIST_DIR}/check_uniform.c
  ${CMAKE_CURRENT_LIST_DIR}/check_uniform_stmt.c
  ${CMAKE_CURRENT_LIST_DIR}/check_uniform_expr.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_lower.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_lower_ir.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_lower_warp_calls.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_lower_jumps.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_lower_expr.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_lower_operators.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_lower_vars.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_lower_regions.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_lower_loops.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_lower_stride.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_lower_bound.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_lower_text.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_lower_code.c
  ${CMAKE_CURRENT_LIST_DIR}/cpu_lower_emit.c

  ${CMAKE_CURRENT_LIST_DIR}/check_uniform_why.c
  ${CMAKE_CURRENT_LIST_DIR}/check_uniform_shared.c
  ${CMAKE_CURRENT_LIST_DIR}/cuda_hints.c
  ${CMAKE_CURRENT_LIST_DIR}/gate_defer.c
  ${CMAKE_CURRENT_LIST_DIR}/gate_defer_expr.c
  ${CMAKE_CURRENT_LIST_DIR}/gate_defer_guard.c
  ${CMAKE_CURRENT_LIST_DIR}/gate_defer_stmt.c
  ${CMAKE_CURRENT_LIST_DIR}/gate_defer_helper.c
  ${CMAKE_CURRENT_LIST_DIR}/gate_defer_one.c
  ${CMAKE_CURRENT_LIST_DIR}/gate_defer_calls.c
  ${CMAKE_CURRENT_LIST_DIR}/gate_defer_text.c)

# find_package(Clang) pulls in all of LLVM's CMake; the C API needs only this.
find_path(MOXC_LIBCLANG_INCLUDE_DIR clang-c/Index.h
  HINTS /usr/lib/llvm-14/include /usr/lib/llvm/include)
find_library(MOXC_LIBCLANG_LIBRARY NAMES clang-14 clang
  HINTS /usr/lib/llvm-14/lib /usr/lib/llvm/lib)
if(NOT MOXC_LIBCLANG_INCLUDE_DIR OR NOT MOXC_LIBCLANG_LIBRARY)
  message(FATAL_ERROR "moxc needs libclang (Debian: libclang-14-dev)")
endif()
set(MOXC_LIBCLANG_INCLUDE_DIRS ${MOXC_LIBCLANG_INCLUDE_DIR})
set(MOXC_LIBCLANG_LIBRARIES ${MOXC_LIBCLANG_LIBRARY})
