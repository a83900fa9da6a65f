# SPDX-License-Identifier: GPL-2.0-or-later
# Installing libiwarp for others to build on, and the Debian package of the
# whole toolkit (cpack -G DEB). Included last by the top CMakeLists.txt.
include(CMakePackageConfigHelpers)

install(TARGETS iwarp_shared iwarp_verbs_shared EXPORT iwarpTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT libs NAMELINK_COMPONENT dev)
install(TARGETS iwarp iwarp_verbs EXPORT iwarpTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/reference-stack/lib/include/iwarp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev FILES_MATCHING PATTERN "*.h")
install(FILES ${IW_GEN_INCLUDE}/iwarp/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/iwarp COMPONENT dev)

set(IW_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/iwarp)
install(EXPORT iwarpTargets NAMESPACE iwarp:: DESTINATION ${IW_CMAKE_DIR} COMPONENT dev)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/iwarpConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/iwarpConfig.cmake INSTALL_DESTINATION ${IW_CMAKE_DIR})
# Before 1.0 a minor release may break the API: same minor only.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/iwarpConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/iwarpConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/iwarpConfigVersion.cmake
        DESTINATION ${IW_CMAKE_DIR} COMPONENT dev)
# pkg-config files name the prefix they are installed under (cmake --install
# --prefix, cpack's /usr), known only at install time: everything else is
# filled in now, the prefix then.
set(IW_PC_PREFIX "@IW_PC_PREFIX@")
# The static libiwarp_verbs needs libusrsctp when it has the SCTP transport.
if(IW_HAVE_USRSCTP)
  set(IW_VERBS_LIBS_PRIVATE "-lusrsctp")
else()
  set(IW_VERBS_LIBS_PRIVATE "")
endif()
foreach(pc iwarp iwarp-verbs)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/${pc}.pc.in ${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc.in @ONLY)
  install(CODE "set(IW_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
    configure_file(${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc.in ${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc @ONLY)"
    COMPONENT dev)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/README.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT tools)

# ---- Debian package: everything above, the tools, the cases and the plugin ----
set(CPACK_PACKAGE_NAME iwarpkit)
set(CPACK_PACKAGE_VENDOR "iwarpkit")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "iWARP (RDMA over TCP) toolkit: decoder, conformance runner, reference target, Wireshark plugin")
set(CPACK_PACKAGE_DESCRIPTION
    "libiwarp (MPA, DDP and RDMAP codecs and a sans-I/O RNIC engine), iwarp-decode, \
iwarp-target, iwarp-conform with its cases, iwarp-perf, iwarp-agent and the \
Wireshark 4.0 plugin, for people who debug, certify and harden RDMA network adapters.")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "iwarpkit developers <dev@iwarpkit.invalid>")
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# Run-time dependencies from the binaries themselves (dpkg-shlibdeps): libpcap,
# libwireshark, librdmacm and libibverbs at the versions this build used.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "tshark | wireshark")
include(CPack)

# ---- tests (label "package"): what an installer and a downstream project meet.
# Skipped in sanitizer builds, whose libraries need the sanitizer runtime.
if(NOT IW_SANITIZE)
  add_test(NAME package_downstream
    COMMAND bash ${PROJECT_SOURCE_DIR}/docs/examples/downstream/check.sh ${CMAKE_BINARY_DIR}
            ${PROJECT_SOURCE_DIR}/docs/examples)
  add_test(NAME package_deb
    COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/check-deb.sh ${CMAKE_BINARY_DIR} ${PROJECT_VERSION})
  set_tests_properties(package_downstream package_deb PROPERTIES LABELS "package" TIMEOUT 600
                       SKIP_RETURN_CODE 77)
  # Both install the build: one at a time.
  set_tests_properties(package_downstream package_deb PROPERTIES RESOURCE_LOCK package_install)
endif()
