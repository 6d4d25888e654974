# mox_add_kernels(<target> NAME <name> SOURCES <files...> [INCLUDE_DIRS <dirs...>])
#
# Builds the kernel sources of module <name> with moxc at build time and
# adds its generated bindings to <target>: <name>.c is compiled into the
# target, ${CMAKE_CURRENT_BINARY_DIR}/mox/<name> (holding <name>.h) is on
# its include path, and it links mox::mox. The artifact (fatbin, CPU shared
# object, manifest) goes to the cache ${CMAKE_BINARY_DIR}/mox-artifacts and
# its directory is recorded in the bindings. Included by the top-level
# CMakeLists after tools/moxc; see docs/moxc.md.

# The moxc executable, for tests that run it (a generator expression).
if(TARGET moxc)
  set(MOXC_EXECUTABLE "$<TARGET_FILE:moxc>")
else()
  set(MOXC_EXECUTABLE "")
endif()
set(MOX_ARTIFACT_CACHE_DIR "${CMAKE_BINARY_DIR}/mox-artifacts")

# The C compiler of kernels_cpu.so: clang when it is there, because it
# vectorizes the work-group functions' thread loops, whose CUDA-style 32-bit
# indices (block * dim + thread) GCC 12 cannot prove free of wrap-around;
# under the sanitizers the project's own compiler, whose sanitizer runtime
# the program loads (docs/moxc.md).
if(NOT DEFINED MOX_KERNEL_C_COMPILER)
  set(mox__kernel_cc "${CMAKE_C_COMPILER}")
  if(NOT MOX_SANITIZE AND NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    find_program(MOX_KERNEL_CLANG NAMES clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14)
    if(MOX_KERNEL_CLANG)
      set(mox__kernel_cc "${MOX_KERNEL_CLANG}")
    endif()
  endif()
  set(MOX_KERNEL_C_COMPILER "${mox__kernel_cc}" CACHE FILEPATH
      "C compiler for kernels_cpu.so (default: clang when found, except under sanitizers)")
endif()

# The moxc options that follow the build configuration: nvcc and its archs,
# the kernels' C compiler, sanitizers (kernels_cpu.so is loaded into
# sanitized programs, so it is instrumented the same way).
function(mox__kernels_config_args out)
  set(args --cc "${MOX_KERNEL_C_COMPILER}")
  if(MOX_NVCC)
    list(APPEND args --nvcc "${MOX_NVCC}")
    foreach(arch IN LISTS MOX_CUDA_ARCHS)
      list(APPEND args --cuda-arch "${arch}")
    endforeach()
  else()
    list(APPEND args --no-cuda)
  endif()
  if(MOX_SANITIZE STREQUAL "address")
    list(APPEND args --cc-flag=-fsanitize=address,undefined
                     --cc-flag=-fno-sanitize-recover=undefined
                     --cc-flag=-fno-omit-frame-pointer)
  elseif(MOX_SANITIZE STREQUAL "thread")
    list(APPEND args --cc-flag=-fsanitize=thread --cc-flag=-fno-omit-frame-pointer)
  endif()
  set(${out} "${args}" PARENT_SCOPE)
endfunction()

function(mox_add_kernels target)
  cmake_parse_arguments(PARSE_ARGV 1 MOXK "" "NAME" "SOURCES;INCLUDE_DIRS")
  if(MOXK_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "mox_add_kernels(${target}): unexpected arguments: ${MOXK_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT MOXK_NAME)
    message(FATAL_ERROR "mox_add_kernels(${target}): NAME is required")
  endif()
  if(NOT MOXK_NAME MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "mox_add_kernels(${target}): NAME '${MOXK_NAME}' is not a C identifier")
  endif()
  if(NOT MOXK_SOURCES)
    message(FATAL_ERROR "mox_add_kernels(${target}): SOURCES is required")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "mox_add_kernels: ${target} is not a target")
  endif()
  if(NOT TARGET moxc)
    message(FATAL_ERROR "mox_add_kernels(${target}): moxc is not built (its front end is missing)")
  endif()

  set(name "${MOXK_NAME}")
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/mox/${name}")
  set(stamp "${dir}/${name}.stamp")
  set(depfile "${dir}/${name}.d")

  set(sources "")
  foreach(src IN LISTS MOXK_SOURCES)
    get_filename_component(abs "${src}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND sources "${abs}")
  endforeach()
  # Headers of the given include dirs: a fallback for the depfile, which
  # only exists after the first run.
  set(include_args "")
  set(headers "")
  foreach(inc IN LISTS MOXK_INCLUDE_DIRS)
    get_filename_component(abs "${inc}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND include_args -I "${abs}")
    file(GLOB_RECURSE found CONFIGURE_DEPENDS "${abs}/*.h")
    list(APPEND headers ${found})
  endforeach()
  mox__kernels_config_args(config_args)

  add_custom_command(
    OUTPUT "${stamp}"
    BYPRODUCTS "${dir}/${name}.h" "${dir}/${name}.c"
    COMMAND moxc build --name "${name}" --out-dir "${MOX_ARTIFACT_CACHE_DIR}"
            --bindings-dir "${dir}" --depfile "${depfile}" --depfile-target "${stamp}"
            ${include_args} ${config_args} -- ${sources}
    COMMAND "${CMAKE_COMMAND}" -E touch "${stamp}"
    DEPENDS moxc ${sources} ${headers}
    DEPFILE "${depfile}"
    COMMENT "moxc: building kernels of module ${name}"
    VERBATIM)
  # The stamp as a source makes the command run before the target compiles;
  # the bindings are rewritten only when their bytes change.
  target_sources(${target} PRIVATE "${stamp}" "${dir}/${name}.c")
  set_source_files_properties("${dir}/${name}.c" "${dir}/${name}.h" PROPERTIES GENERATED TRUE)
  target_include_directories(${target} PRIVATE "${dir}")
  target_link_libraries(${target} PRIVATE mox::mox)
endfunction()
