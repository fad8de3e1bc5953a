# Included by the top-level CMakeLists.txt when SQDIFF_BUILD_FUZZERS is ON,
# before any target is defined: the library and the tools' code must carry
# libFuzzer's coverage instrumentation (-fsanitize=fuzzer-no-link) for the
# fuzzers to see their branches, and ASan+UBSan so that a bad read or an
# undefined operation stops the run. Only clang has libFuzzer.
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR
    "SQDIFF_BUILD_FUZZERS=ON needs clang (libFuzzer is part of clang), but the C++ compiler is "
    "${CMAKE_CXX_COMPILER_ID} (${CMAKE_CXX_COMPILER}). Configure a fresh build directory with "
    "-DCMAKE_CXX_COMPILER=clang++-14 (Debian: apt-get install clang-14 libclang-rt-14-dev), "
    "or run scripts/fuzz.sh, which does.")
endif()

set(_sqdiff_fuzz_sanitizers address,undefined)
if(SQDIFF_SANITIZE)
  set(_sqdiff_fuzz_sanitizers ${SQDIFF_SANITIZE})  # already added by the top level
endif()

# A missing libclang-rt (the runtime with libFuzzer's main) shows up only at
# link time; find out now and say which package provides it.
include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer,${_sqdiff_fuzz_sanitizers}")
check_cxx_source_compiles([[
#include <cstddef>
#include <cstdint>
extern "C" int LLVMFuzzerTestOneInput(const uint8_t*, std::size_t) { return 0; }
]] SQDIFF_HAVE_LIBFUZZER)
unset(CMAKE_REQUIRED_FLAGS)
if(NOT SQDIFF_HAVE_LIBFUZZER)
  message(FATAL_ERROR
    "SQDIFF_BUILD_FUZZERS=ON: ${CMAKE_CXX_COMPILER} cannot link a program with "
    "-fsanitize=fuzzer,${_sqdiff_fuzz_sanitizers} (Debian: apt-get install libclang-rt-14-dev).")
endif()

add_compile_options(-fsanitize=fuzzer-no-link -fno-omit-frame-pointer)
if(NOT SQDIFF_SANITIZE)
  add_compile_options(-fsanitize=${_sqdiff_fuzz_sanitizers} -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${_sqdiff_fuzz_sanitizers})
endif()
