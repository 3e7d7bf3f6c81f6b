# What an installed cacheadvise needs at run time, and its packages (issue 28).
#
#   bin/cacheadvise, bin/cacheadvise-probe
#   lib/cacheadvise/libcacheadvise_inject.so   the injection library (found
#                                              relative to bin/cacheadvise)
#   lib/cacheadvise/libcacheadvise_device.a    the L2-window helpers (l2window.h)
#   include/cacheadvise/                       the headers patches include:
#                                              regcache.cuh, softcache.cuh, l2window.h
#   share/doc/cacheadvise/                     README.md and docs/
#   share/man/man1/                            man pages, where pandoc is found
#
# The build tree has the same layout under ${PROJECT_BINARY_DIR} (bin/, lib/
# cacheadvise/, include/cacheadvise/), so one rule finds everything from
# either. `cmake --build build --target package` makes a .deb and a .tar.gz.

set(CACHEADVISE_HEADERS
  ${PROJECT_SOURCE_DIR}/device/regcache.cuh
  ${PROJECT_SOURCE_DIR}/device/softcache.cuh
  ${PROJECT_SOURCE_DIR}/device/l2window.h)
foreach(h ${CACHEADVISE_HEADERS})
  get_filename_component(name ${h} NAME)
  configure_file(${h} ${PROJECT_BINARY_DIR}/include/cacheadvise/${name} COPYONLY)
endforeach()
install(FILES ${CACHEADVISE_HEADERS} DESTINATION include/cacheadvise)

install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION share/doc/cacheadvise)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION share/doc/cacheadvise/docs
        FILES_MATCHING PATTERN "*.md")

# Man pages from docs/cmd-*.md, only where pandoc is there: never a build failure.
find_program(PANDOC pandoc)
if(PANDOC)
  file(GLOB CMD_DOCS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/cmd-*.md)
  set(MAN_PAGES)
  foreach(doc ${CMD_DOCS})
    get_filename_component(cmd ${doc} NAME_WE)
    string(REPLACE "cmd-" "cacheadvise-" page ${cmd})
    set(out ${PROJECT_BINARY_DIR}/man/${page}.1)
    add_custom_command(OUTPUT ${out}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/man
      COMMAND ${PANDOC} -s -t man -M title=${page} -M section=1 ${doc} -o ${out}
      DEPENDS ${doc} COMMENT "man page ${page}.1")
    list(APPEND MAN_PAGES ${out})
  endforeach()
  add_custom_target(man ALL DEPENDS ${MAN_PAGES})
  install(FILES ${MAN_PAGES} DESTINATION share/man/man1)
else()
  message(STATUS "pandoc not found: no man pages (the docs are installed as Markdown)")
endif()

# Packages. The CUDA driver and toolkit are not dependencies: a user's driver
# comes from NVIDIA, and the injection library finds libcupti where the
# toolkit put it (its RUNPATH). GLPK is linked statically by default
# (CACHEADVISE_STATIC_GLPK), so libglpk40 is not one either.
set(CPACK_PACKAGE_NAME cacheadvise)
set(CPACK_PACKAGE_VENDOR "cacheadvise")
set(CPACK_PACKAGE_CONTACT "cacheadvise maintainers <cacheadvise@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Per-load L1/L2 cache advice for CUDA and Triton programs, measured and verified")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR "DEB;TGZ")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE amd64)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# The shared libraries bin/cacheadvise and the injection library load
# (ldd), by the names Debian 12 and Ubuntu 24.04 both give them.
set(CACHEADVISE_DEB_DEPENDS "libc6, libjansson4, libzstd1, zlib1g, libelf1 | libelf1t64, libssl3 | libssl3t64")
if(CACHEADVISE_STATIC_GLPK)
  string(APPEND CACHEADVISE_DEB_DEPENDS ", libltdl7")
else()
  string(APPEND CACHEADVISE_DEB_DEPENDS ", libglpk40")
endif()
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${CACHEADVISE_DEB_DEPENDS}")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3")
include(CPack)
