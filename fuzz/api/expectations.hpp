// fuzz_api's expected results: what the arena must hold after a call, from
// the oracles on a snapshot taken before it; the check of the arena against
// them; and the dense copies and exact runs that the bounded-state checks
// (api/bounded_state_checks.cpp) share.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/call.hpp"
#include "reduce/fast_squares.hpp"
#include "reduce/gmp_oracle.hpp"
#include "sqdiff/error.hpp"

namespace sqdiff_fuzz::api {

namespace gmp = sqdiff_test::gmp;

// The GMP oracle checks the exact path up to this many terms (the broadcast
// shape's elements): a few microseconds each.
inline constexpr int64_t kMaxOracleTerms = int64_t{1} << 10;

// The arena after a successful call: the snapshot with the outputs' elements
// set to `results` (per output of Call::outputs(), row-major bits).
struct Expectation {
  bool error = false;
  bool either = false;  // an empty self-overlapping output: error or not
  std::vector<std::vector<uint64_t>> results;
};

// What the arena must hold after call c, computed from `snapshot` (the arena
// before it), so that any overlap must give the as-if-copied result. The
// quantized ops, reductions and gradients also run the library on dense
// copies here, one thread, and fail where it and the oracles disagree.
Expectation expectation(const Call& c, const std::vector<unsigned char>& snapshot);

// Fails unless the arena after a call that returned `error` is `expected`
// (a failed call: the snapshot, untouched); `pass` names the call.
void compare(const Call& c, const std::vector<unsigned char>& snapshot, const Arena& arena,
             const Expectation& expected, const std::optional<std::string>& error, const char* pass);

// A view's elements copied out of the snapshot, row-major (at least 8 bytes,
// so that an empty one has a pointer to pass).
std::vector<unsigned char> dense_copy(const View& v, const std::vector<unsigned char>& snapshot);

// A dense output buffer for view v's elements, filled with a sentinel.
std::vector<unsigned char> dense_output(const View& v);

// The bits of a dense buffer's elements (view v's, row-major).
std::vector<uint64_t> bits_of(const std::vector<unsigned char>& dense, const View& v);

// View v of the snapshot, as the GMP oracle reads it.
gmp::Input oracle_input(const View& v, const std::vector<unsigned char>& snapshot);

// Runs `call` with the fast paths off (every output summed exactly), one
// thread; returns the error text, or nullopt.
template <typename F>
std::optional<std::string> run_exact(F&& call) {
  std::optional<std::string> error;
  sqdiff::detail::set_fast_square_reductions(false);
  try {
    call();
  } catch (const sqdiff::Error& x) {
    error = x.what();
  }
  sqdiff::detail::set_fast_square_reductions(true);
  return error;
}

}  // namespace sqdiff_fuzz::api
