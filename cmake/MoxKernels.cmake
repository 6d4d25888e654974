# mox_add_kernels(<target> NAME <name> SOURCES <files...> [INCLUDE_DIRS <dirs...>]
#                 [DEFINES <X or X=Y...>])
#
# Builds the kernel sources of module <name> with moxc at build time and
# adds its generated bindings to <target>: <name>.c is compiled into the
# target, ${CMAKE_CURRENT_BINARY_DIR}/mox/<name> (holding <name>.h) is on
# its include path, and it links mox::mox. The artifact (fatbin, CPU shared
# object, manifest) goes to the cache ${MOX_ARTIFACT_CACHE_DIR} (default
# ${CMAKE_BINARY_DIR}/mox-artifacts, read when the function is called) and
# its directory is recorded in the bindings. DEFINES become moxc's -D, for
# parsing and both compilers (feature-test macros such as _GNU_SOURCE go
# here: moxc rejects defining them in a kernel source).
#
# Usable from mox's own tree, from a parent project that added mox with
# add_subdirectory(), and from an installed mox (find_package(mox)): it
# needs only the targets mox::mox and mox::moxc and the cache variables
# MOX_NVCC, MOX_CUDA_ARCHS (MoxCuda.cmake) and MOX_SANITIZE. See docs/moxc.md.
include_guard(GLOBAL)

# The moxc executable, for mox's tests that run it (a generator expression).
if(TARGET moxc)
  set(MOXC_EXECUTABLE "$<TARGET_FILE:moxc>")
endif()

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
  cmake_parse_arguments(PARSE_ARGV 1 MOXK "" "NAME" "SOURCES;INCLUDE_DIRS;DEFINES")
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
  if(NOT TARGET mox::moxc)
    message(FATAL_ERROR "mox_add_kernels(${target}): moxc is not built (its front end is missing)")
  endif()
  set(cache_dir "${MOX_ARTIFACT_CACHE_DIR}")
  if(cache_dir STREQUAL "")
    set(cache_dir "${CMAKE_BINARY_DIR}/mox-artifacts")
  endif()

  set(name "${MOXK_NAME}")
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/mox/${name}")
  set(stamp "${dir}/${name}.stamp")
  set(depfile "${dir}/${name}.d")

  set(sources "")
  foreach(src IN LISTS MOXK_SOURCES)
    get_filename_component(abs "${src}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    # A word after SOURCES that is no file (a misspelt keyword) would
    # otherwise only fail at build time, as a missing rule.
    get_source_file_property(generated "${abs}" GENERATED)
    if(NOT EXISTS "${abs}" AND NOT generated)
      message(FATAL_ERROR "mox_add_kernels(${target}): source '${src}' does not exist (${abs}); "
                          "the keywords are NAME, SOURCES, INCLUDE_DIRS and DEFINES")
    endif()
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
  set(define_args "")
  foreach(def IN LISTS MOXK_DEFINES)
    list(APPEND define_args -D "${def}")
  endforeach()
  mox__kernels_config_args(config_args)

  add_custom_command(
    OUTPUT "${stamp}"
    BYPRODUCTS "${dir}/${name}.h" "${dir}/${name}.c" "${dir}/${name}.artifact"
    COMMAND mox::moxc build --name "${name}" --out-dir "${cache_dir}"
            --bindings-dir "${dir}" --depfile "${depfile}" --depfile-target "${stamp}"
            ${include_args} ${define_args} ${config_args} -- ${sources}
    COMMAND "${CMAKE_COMMAND}" -E touch "${stamp}"
    DEPENDS mox::moxc ${sources} ${headers}
    DEPFILE "${depfile}"
    COMMENT "moxc: building kernels of module ${name}"
    VERBATIM)
  # The stamp as a source makes the command run before the target compiles;
  # the bindings are rewritten only when their bytes change.
  target_sources(${target} PRIVATE "${stamp}" "${dir}/${name}.c")
  set_source_files_properties("${dir}/${name}.c" "${dir}/${name}.h" PROPERTIES GENERATED TRUE)
  # A library's bindings header reaches what links the library (in the
  # build tree; an installed library installs its own headers).
  get_target_property(type ${target} TYPE)
  if(type MATCHES "^(STATIC|SHARED|MODULE|OBJECT)_LIBRARY$")
    target_include_directories(${target} PUBLIC "$<BUILD_INTERFACE:${dir}>")
  else()
    target_include_directories(${target} PRIVATE "${dir}")
  endif()
  # Linked through the target's properties, not target_link_libraries(): a
  # target may use either of that command's signatures (plain or keyword)
  # but not both, so mox must use neither. The same as PRIVATE: the target
  # links libmox, and a static library passes it on to what links it.
  set_property(TARGET ${target} APPEND PROPERTY LINK_LIBRARIES mox::mox)
  if(type STREQUAL "STATIC_LIBRARY")
    set_property(TARGET ${target} APPEND PROPERTY INTERFACE_LINK_LIBRARIES "$<LINK_ONLY:mox::mox>")
  endif()
  # For mox_install_kernels: moxc writes the artifact's path here.
  set_property(TARGET ${target} APPEND PROPERTY MOX_ARTIFACT_RECORDS "${dir}/${name}.artifact")
endfunction()

# mox_install_kernels(<target> [DESTINATION <dir>] [COMPONENT <component>])
#
# At install time copies the artifacts of the modules that mox_add_kernels
# added to <target> (call it first) into <dir>/<fingerprint>/ with `moxc
# deploy`. <dir> is relative to the install prefix unless absolute; the
# default lib/mox-artifacts is where a program installed to bin/ (or a
# library installed to lib/) finds them: the runtime looks in
# <its folder>/mox-artifacts and <its folder>/../lib/mox-artifacts before
# the build tree (docs/moxc.md). Honours DESTDIR.
#
# An installed program must also find libmox: on an executable or shared
# library <target> this sets INSTALL_RPATH_USE_LINK_PATH to TRUE (unless
# the project sets CMAKE_INSTALL_RPATH_USE_LINK_PATH), so that `cmake
# --install` keeps the RPATH to the libmox the target was linked with (an
# installed mox outside the system's library path) instead of clearing it.
# Set the property to FALSE after this call to opt out; a program that
# links a static library holding the kernels needs it (or an INSTALL_RPATH)
# on the program.
function(mox_install_kernels target)
  cmake_parse_arguments(PARSE_ARGV 1 MOXI "" "DESTINATION;COMPONENT" "")
  if(MOXI_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "mox_install_kernels(${target}): unexpected arguments: ${MOXI_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "mox_install_kernels: ${target} is not a target")
  endif()
  get_target_property(records ${target} MOX_ARTIFACT_RECORDS)
  if(NOT records)
    message(FATAL_ERROR "mox_install_kernels(${target}): ${target} has no kernels (call mox_add_kernels first)")
  endif()
  set(dest "lib/mox-artifacts")
  if(MOXI_DESTINATION)
    set(dest "${MOXI_DESTINATION}")
  endif()
  if(NOT IS_ABSOLUTE "${dest}")
    set(dest "\${CMAKE_INSTALL_PREFIX}/${dest}")
  endif()
  set(component "")
  if(MOXI_COMPONENT)
    set(component COMPONENT "${MOXI_COMPONENT}")
  endif()
  # CMake initializes the property to OFF on every target, so a project's
  # own choice shows only as CMAKE_INSTALL_RPATH_USE_LINK_PATH (or as the
  # property set after this call).
  get_target_property(type ${target} TYPE)
  if(type MATCHES "^(EXECUTABLE|SHARED_LIBRARY|MODULE_LIBRARY)$" AND NOT DEFINED CMAKE_INSTALL_RPATH_USE_LINK_PATH)
    set_target_properties(${target} PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)
  endif()
  list(JOIN records "\" \"" quoted)
  install(CODE "
    execute_process(COMMAND \"$<TARGET_FILE:mox::moxc>\" deploy --to \"\$ENV{DESTDIR}${dest}\" \"${quoted}\"
                    RESULT_VARIABLE mox_deploy_rc)
    if(NOT mox_deploy_rc EQUAL 0)
      message(FATAL_ERROR \"mox_install_kernels(${target}): moxc deploy failed (\${mox_deploy_rc})\")
    endif()" ${component})
endfunction()
