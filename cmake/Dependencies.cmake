# Third-party libraries, each a real package made for the job:
#   jansson (JSON), zstd (fatbin PTX entries), libelf (ELF .nv_fatbin),
#   GLPK (the ILP), OpenSSL libcrypto (SHA-256 module ids),
#   the CUDA Toolkit (CUPTI headers and library, the driver API for the
#   injection library). scripts/install-deps.sh installs them on Debian.
find_package(PkgConfig REQUIRED)
pkg_check_modules(JANSSON REQUIRED IMPORTED_TARGET jansson)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
pkg_check_modules(LIBELF REQUIRED IMPORTED_TARGET libelf)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
find_package(CUDAToolkit REQUIRED)

find_path(GLPK_INCLUDE_DIR glpk.h REQUIRED)
add_library(glpk_dep INTERFACE)
target_include_directories(glpk_dep INTERFACE ${GLPK_INCLUDE_DIR})
if(CACHEADVISE_STATIC_GLPK)
  foreach(lib glpk amd colamd suitesparseconfig gmp z)
    find_library(GLPK_STATIC_${lib} NAMES lib${lib}.a REQUIRED)
    list(APPEND GLPK_STATIC_LIBS ${GLPK_STATIC_${lib}})
  endforeach()
  find_library(LTDL_SHARED NAMES ltdl libltdl.so.7 REQUIRED)
  target_link_libraries(glpk_dep INTERFACE ${GLPK_STATIC_LIBS} ${LTDL_SHARED} m)
else()
  find_library(GLPK_LIBRARY glpk REQUIRED)
  target_link_libraries(glpk_dep INTERFACE ${GLPK_LIBRARY})
endif()

# CUPTI: the toolkit's headers and libcupti.so (the injection library only).
find_path(CUPTI_INCLUDE_DIR cupti_range_profiler.h
          HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI/include REQUIRED)
find_library(CUPTI_LIBRARY cupti
             HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI/lib64 REQUIRED)
