# Install rules: libmox (libmox.so.0, only the MOX_API symbols exported), the
# public and dialect headers, moxc, the CMake package (lib/cmake/mox:
# mox::mox, mox::moxc, mox_add_kernels) and lib/pkgconfig/mox.pc.
# `cmake --install <build> [--prefix DIR]`; docs/install.md.
include(CMakePackageConfigHelpers)
set(MOX_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/mox" CACHE STRING
    "Where the CMake package of mox is installed (relative to the prefix)")

install(TARGETS mox EXPORT moxTargets
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT runtime NAMELINK_COMPONENT development
  INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/mox" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
  COMPONENT development FILES_MATCHING PATTERN "*.h")
if(TARGET moxc)
  install(TARGETS moxc RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT development)
endif()

install(EXPORT moxTargets NAMESPACE mox:: DESTINATION "${MOX_INSTALL_CMAKEDIR}" COMPONENT development)
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/package/moxConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/package/moxConfig.cmake"
  INSTALL_DESTINATION "${MOX_INSTALL_CMAKEDIR}"
  PATH_VARS CMAKE_INSTALL_BINDIR)
write_basic_package_version_file("${PROJECT_BINARY_DIR}/package/moxConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES
  "${PROJECT_BINARY_DIR}/package/moxConfig.cmake"
  "${PROJECT_BINARY_DIR}/package/moxConfigVersion.cmake"
  "${PROJECT_SOURCE_DIR}/cmake/MoxCuda.cmake"
  "${PROJECT_SOURCE_DIR}/cmake/MoxKernels.cmake"
  DESTINATION "${MOX_INSTALL_CMAKEDIR}" COMPONENT development)

# The .pc file is relative to its own folder (${pcfiledir}), so an install
# prefix given only to `cmake --install --prefix`, or a moved prefix, works.
file(RELATIVE_PATH mox_pc_to_prefix "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig" "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "/$" "" mox_pc_to_prefix "${mox_pc_to_prefix}")
configure_file("${PROJECT_SOURCE_DIR}/cmake/package/mox.pc.in" "${PROJECT_BINARY_DIR}/package/mox.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/package/mox.pc"
  DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig" COMPONENT development)
