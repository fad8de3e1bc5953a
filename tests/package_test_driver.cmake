# cmake -DMODE=find_package|add_subdirectory -DWORK_DIR=... (see package_tests.cmake) -P package_test_driver.cmake
#
# find_package:     cmake --install BUILD_DIR --prefix WORK_DIR/prefix, then configure
#                   CONSUMER_DIR with CMAKE_PREFIX_PATH=WORK_DIR/prefix.
# add_subdirectory: configure CONSUMER_DIR with SQDIFF_SOURCE_DIR=SOURCE_DIR.
# Then build the consumer in WORK_DIR/build and run it; any failing step fails.
cmake_minimum_required(VERSION 3.25)

foreach(_var IN ITEMS MODE WORK_DIR SOURCE_DIR BUILD_DIR CONSUMER_DIR GENERATOR CXX_COMPILER VERSION)
  if(NOT DEFINED ${_var} OR "${${_var}}" STREQUAL "")
    message(FATAL_ERROR "package_test_driver.cmake: pass -D${_var}=...")
  endif()
endforeach()

# run(STEP <description> COMMAND ...): echoes, runs, fails the test on a non-zero status.
function(run step description)
  list(POP_FRONT ARGN _command_keyword)
  message(STATUS "[${MODE}] ${step}: ${description}")
  execute_process(COMMAND ${ARGN} COMMAND_ECHO STDOUT RESULT_VARIABLE _result)
  if(NOT _result STREQUAL "0")
    message(FATAL_ERROR "[${MODE}] ${step} failed (${_result})")
  endif()
endfunction()

# Start clean, so that nothing from an earlier run can make this one pass.
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

set(_config_args)
if(CONFIG)
  set(_config_args --config "${CONFIG}")
endif()

set(_consumer_args
    -G "${GENERATOR}"
    "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
    "-DCMAKE_BUILD_TYPE=${CONFIG}"
    "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
    "-DCMAKE_EXE_LINKER_FLAGS=${LINK_FLAGS}"
    "-DSQDIFF_CONSUMER_MODE=${MODE}"
    "-DSQDIFF_EXPECTED_VERSION=${VERSION}")
if(MAKE_PROGRAM)
  list(APPEND _consumer_args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(hwy_DIR)
  list(APPEND _consumer_args "-Dhwy_DIR=${hwy_DIR}")
endif()

if(MODE STREQUAL "find_package")
  set(_prefix "${WORK_DIR}/prefix")
  run(install "install the built library to ${_prefix}"
      COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${_prefix}" ${_config_args})
  if(NOT EXISTS "${_prefix}/include/sqdiff/sqdiff.hpp")
    message(FATAL_ERROR "[${MODE}] the install has no include/sqdiff/sqdiff.hpp")
  endif()
  list(APPEND _consumer_args "-DCMAKE_PREFIX_PATH=${_prefix}" "-DSQDIFF_EXPECTED_PREFIX=${_prefix}")
elseif(MODE STREQUAL "add_subdirectory")
  list(APPEND _consumer_args "-DSQDIFF_SOURCE_DIR=${SOURCE_DIR}")
else()
  message(FATAL_ERROR "package_test_driver.cmake: unknown MODE '${MODE}'")
endif()

set(_build "${WORK_DIR}/build")
run(configure "configure the consumer"
    COMMAND "${CMAKE_COMMAND}" -S "${CONSUMER_DIR}" -B "${_build}" ${_consumer_args})
run(build "build the consumer"
    COMMAND "${CMAKE_COMMAND}" --build "${_build}" --parallel 2 ${_config_args})
run(run "run the consumer"
    COMMAND "${_build}/bin/sqdiff_consumer")
message(STATUS "[${MODE}] the consumer built against sqdiff and got the SPEC's results")
