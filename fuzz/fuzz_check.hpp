// What the fuzzers do when a property fails: print what was expected and what
// happened, then abort, so that libFuzzer saves the input as a crash file.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace sqdiff_fuzz {

[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz check failed: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

inline void check(bool ok, const std::string& what) {
  if (!ok) fail(what);
}

}  // namespace sqdiff_fuzz
