# cmake -DPROGRAM=<executable> -DEXPECTED=<file> -P run_and_check.cmake
#
# Runs PROGRAM and fails unless it exits with status 0 and its standard output
# contains every non-empty line of EXPECTED (leading and trailing blanks
# stripped), in that order. The lines are plain text, not regular expressions.
cmake_minimum_required(VERSION 3.25)

foreach(_var IN ITEMS PROGRAM EXPECTED)
  if(NOT DEFINED ${_var})
    message(FATAL_ERROR "run_and_check.cmake: pass -D${_var}=...")
  endif()
endforeach()

execute_process(COMMAND "${PROGRAM}"
                RESULT_VARIABLE _result
                OUTPUT_VARIABLE _output
                ERROR_VARIABLE _errors)
message("${_output}")
if(_errors)
  message("stderr:\n${_errors}")
endif()
if(NOT _result STREQUAL "0")
  message(FATAL_ERROR "${PROGRAM} exited with ${_result}, expected 0")
endif()

# Read the expected lines one by one (file(STRINGS) keeps brackets intact).
file(STRINGS "${EXPECTED}" _expected_lines)
set(_rest "${_output}")
foreach(_line IN LISTS _expected_lines)
  string(STRIP "${_line}" _line)
  if(_line STREQUAL "")
    continue()
  endif()
  string(FIND "${_rest}" "${_line}" _at)
  if(_at EQUAL -1)
    message(FATAL_ERROR "the output of ${PROGRAM} lacks (in this order) the line:\n  ${_line}\n"
                        "(expected lines are in ${EXPECTED})")
  endif()
  string(LENGTH "${_line}" _length)
  math(EXPR _after "${_at} + ${_length}")
  string(SUBSTRING "${_rest}" ${_after} -1 _rest)
endforeach()
message(STATUS "${PROGRAM}: exit status 0 and all expected lines present")
