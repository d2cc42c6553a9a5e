# `cmake --install`: the libraries (static), their headers, the `ropesim` executable, a CMake
# package (find_package(ropesim): targets ropesim::core, ropesim::io, ropesim::logic, ropesim::numeric, ropesim::automata,
# ropesim::attention, ropesim::proofs and the umbrella ropesim::ropesim) and a pkg-config file
# (ropesim.pc). docs/LIBRARY.md shows how to use them; scripts/check-install builds
# examples/consumer against an installed copy.
#
#   <prefix>/bin/ropesim
#   <prefix>/bin/ropesim-verify   (the certificate checker, verify/)
#   <prefix>/include/ropesim/{core,io,logic,numeric,automata,attention,proofs}/*.hpp   (include dir: include/ropesim)
#   <prefix>/lib/libropesim_{core,io,logic,numeric,automata,attention,proofs}.a
#   <prefix>/lib/cmake/ropesim/ropesim{Config,ConfigVersion,Targets,Targets-release}.cmake
#   <prefix>/lib/pkgconfig/ropesim.pc
# (lib is CMAKE_INSTALL_LIBDIR: GNUInstallDirs may make it lib/<multiarch> for prefix /usr.)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(ROPESIM_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/ropesim)
set(ROPESIM_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/ropesim)

# The headers keep their module folder (include/ropesim/numeric/format.hpp), so
# `#include "numeric/format.hpp"` works with include/ropesim on the include path; the installed
# file sets add that directory to the exported targets' INTERFACE_INCLUDE_DIRECTORIES.
install(TARGETS ropesim_core ropesim_io ropesim_tables ropesim_logic ropesim_numeric ropesim_automata ropesim_attention ropesim_proofs ropesim_all
  EXPORT ropesimTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  FILE_SET HEADERS DESTINATION ${ROPESIM_INSTALL_INCLUDEDIR})
install(TARGETS ropesim ropesim-verify RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

install(EXPORT ropesimTargets
  NAMESPACE ropesim::
  DESTINATION ${ROPESIM_INSTALL_CMAKEDIR})
configure_package_config_file(cmake/ropesimConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/ropesimConfig.cmake
  INSTALL_DESTINATION ${ROPESIM_INSTALL_CMAKEDIR})
# 0.x: a minor version may break the API, so only the same major.minor is compatible.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/ropesimConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${CMAKE_CURRENT_BINARY_DIR}/ropesimConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/ropesimConfigVersion.cmake
  DESTINATION ${ROPESIM_INSTALL_CMAKEDIR})

# ropesim.pc locates the prefix from its own directory (${pcfiledir}), so the installed tree can
# be moved and `cmake --install --prefix P` works whatever CMAKE_INSTALL_PREFIX was at configure
# time (as the CMake package does).
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  message(FATAL_ERROR "ropesim.pc needs CMAKE_INSTALL_LIBDIR and CMAKE_INSTALL_INCLUDEDIR "
                      "relative to the prefix (got ${CMAKE_INSTALL_LIBDIR}, ${CMAKE_INSTALL_INCLUDEDIR})")
endif()
file(RELATIVE_PATH ROPESIM_PC_PREFIX_FROM_PCFILEDIR
  /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" ROPESIM_PC_PREFIX_FROM_PCFILEDIR "${ROPESIM_PC_PREFIX_FROM_PCFILEDIR}")
configure_file(cmake/ropesim.pc.in ${CMAKE_CURRENT_BINARY_DIR}/ropesim.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ropesim.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
