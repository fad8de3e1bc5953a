# sqdiff as a dependency, the two ways a downstream project takes it (modelled on
# fmt's find-package-test and add-subdirectory-test):
#   package_find_package      installs this build to a prefix under the build dir,
#                             then builds tests/package_consumer with find_package(sqdiff)
#   package_add_subdirectory  builds tests/package_consumer with add_subdirectory()
#                             of this source tree
# The consumer program uses only DESIGN.md's public API and checks SPEC results.
#
# Both consumers use this build's compiler and generator. In a
# sanitizer build (SQDIFF_SANITIZE) the library's objects need the sanitizer
# runtime, so the consumer is compiled and linked with the same -fsanitize flags.

set(_sqdiff_consumer_cxx_flags "${CMAKE_CXX_FLAGS}")
set(_sqdiff_consumer_link_flags "${CMAKE_EXE_LINKER_FLAGS}")
if(SQDIFF_SANITIZE)
  string(APPEND _sqdiff_consumer_cxx_flags
         " -fsanitize=${SQDIFF_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all")
  string(APPEND _sqdiff_consumer_link_flags " -fsanitize=${SQDIFF_SANITIZE}")
endif()
string(STRIP "${_sqdiff_consumer_cxx_flags}" _sqdiff_consumer_cxx_flags)
string(STRIP "${_sqdiff_consumer_link_flags}" _sqdiff_consumer_link_flags)

set(_sqdiff_package_test_args
    -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
    -DBUILD_DIR=${PROJECT_BINARY_DIR}
    -DCONSUMER_DIR=${CMAKE_CURRENT_SOURCE_DIR}/package_consumer
    -DGENERATOR=${CMAKE_GENERATOR}
    -DMAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}
    -DCXX_COMPILER=${CMAKE_CXX_COMPILER}
    "-DCXX_FLAGS=${_sqdiff_consumer_cxx_flags}"
    "-DLINK_FLAGS=${_sqdiff_consumer_link_flags}"
    -Dhwy_DIR=${hwy_DIR}
    -DVERSION=${PROJECT_VERSION})

# add_subdirectory compiles the whole library again (3 minutes of two cores in an
# unoptimised sanitizer build, for a test of CMake's plumbing that the
# sanitizers add nothing to), so a sanitizer build runs only find_package.
set(_sqdiff_package_modes find_package)
if(NOT SQDIFF_SANITIZE)
  list(APPEND _sqdiff_package_modes add_subdirectory)
endif()
# find_package links the library this build made, so it builds the consumer in
# this build's configuration; add_subdirectory compiles the library afresh, in
# Debug: the configuration is not what it tests, and unoptimised the library
# compiles in a third of the time.
set(_sqdiff_package_config_find_package $<CONFIG>)
set(_sqdiff_package_config_add_subdirectory Debug)
foreach(_mode IN LISTS _sqdiff_package_modes)
  add_test(NAME package_${_mode}
           COMMAND ${CMAKE_COMMAND} ${_sqdiff_package_test_args}
                   -DCONFIG=${_sqdiff_package_config_${_mode}}
                   -DMODE=${_mode}
                   -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/package_${_mode}
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/package_test_driver.cmake)
  # A nested configure and build; add_subdirectory compiles the library again.
  set_tests_properties(package_${_mode} PROPERTIES LABELS "package" TIMEOUT 1500)
endforeach()
