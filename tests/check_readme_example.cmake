# cmake -DREADME=<README.md> -DEXAMPLE=<examples/readme_example.cpp> -DOUT=<file> -P check_readme_example.cmake
#
# Fails unless the first ```cpp block of README.md is byte-for-byte the content
# of examples/readme_example.cpp, so that the code the README shows is the code
# a test compiles and runs. On a mismatch, writes the README's block to OUT and
# prints a diff.
cmake_minimum_required(VERSION 3.25)

foreach(_var IN ITEMS README EXAMPLE OUT)
  if(NOT DEFINED ${_var})
    message(FATAL_ERROR "check_readme_example.cmake: pass -D${_var}=...")
  endif()
endforeach()

file(READ "${README}" _readme)
file(READ "${EXAMPLE}" _example)

set(_fence_open "```cpp\n")
string(FIND "${_readme}" "${_fence_open}" _open)
if(_open EQUAL -1)
  message(FATAL_ERROR "${README} has no ```cpp block; it must show ${EXAMPLE}")
endif()
string(LENGTH "${_fence_open}" _open_length)
math(EXPR _begin "${_open} + ${_open_length}")
string(SUBSTRING "${_readme}" ${_begin} -1 _rest)
string(FIND "${_rest}" "\n```" _close)
if(_close EQUAL -1)
  message(FATAL_ERROR "${README}: the ```cpp block is not closed")
endif()
math(EXPR _block_length "${_close} + 1")  # keep the block's last newline
string(SUBSTRING "${_rest}" 0 ${_block_length} _block)

if("${_block}" STREQUAL "${_example}")
  message(STATUS "README.md's ```cpp block is identical to ${EXAMPLE}")
  return()
endif()

file(WRITE "${OUT}" "${_block}")
find_program(_diff diff)
if(_diff)
  execute_process(COMMAND "${_diff}" -u "${EXAMPLE}" "${OUT}")
endif()
message(FATAL_ERROR "README.md's ```cpp block (written to ${OUT}) differs from ${EXAMPLE}; "
                    "edit both together")
