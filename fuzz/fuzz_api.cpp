// Fuzzes the library's public API on random views inside one arena:
// sqdiff::subtract and squared_difference (checked against the scalar oracle
// of tests/oracle.hpp), sum_squared_difference / mean_squared_difference and
// the gradients squared_difference_backward / subtract_backward /
// mean_squared_difference_backward (checked against the library itself on
// dense copies, one thread, exact path only: what a layout, the thread count
// or the fast paths could change; and, for calls of at most kMaxOracleTerms
// terms, that exact path against the GMP oracle of tests/reduce/gmp_oracle.hpp,
// which shares no code with it); and the quantized ops
// quantized_squared_difference / quantized_subtract (SPEC section 9), checked
// against the integer oracle of tests/quantized/quantized_oracle.hpp, which
// calls no library code, and against the library on dense copies, one thread.
//
// The input decides the op, the dtypes, the broadcast mode and axis, small
// shapes, each view's strides (dense, permuted, gapped, reversed, 0, arbitrary,
// or an output exactly aliasing an input or the other gradient), which
// gradients are asked for, and each view's offset inside one arena, so views
// overlap freely; then the threads, the arena's alignment and its bytes; for
// the quantized ops also each tensor's scale and zero point (invalid ones
// included), the activation, the rounding and pot_scale_int16.
// Every arena granule outside the views' extents is poisoned for ASan, so a
// read or write beyond a view stops the run.
//
// Checks (SPEC sections 3-8, docs/SPEC_DECISIONS.md):
// - a valid call succeeds and leaves the arena equal to the snapshot taken
//   before it, with only the outputs' elements replaced by the expected results
//   (computed from the snapshot: any overlap gives the as-if-copied result);
//   a NaN result may be any NaN;
// - an invalid call (types, shapes, axes, a strides list of the wrong length, a
//   self-overlapping output, grad_a and grad_b sharing memory, threads < 0,
//   quantization parameters SPEC 9 refuses)
//   throws sqdiff::Error and leaves the arena untouched; nothing else is ever
//   thrown;
// - the same call again (the per-thread plan memo replays it) with another
//   thread count gives the same arena;
// - a reduction's bounded partial states (sqdiff/bounded_partial_sums.hpp),
//   of the whole call and of its terms cut into pieces along a reduced dim
//   and combined in a random order, finish to the reference's bits wherever
//   they decide, leave the undecided outputs alone, and the exact states of
//   the same pieces give the reference's bits there; up to kMaxOracleTerms
//   terms, each state's bound holds the GMP oracle's exact sum; a call the
//   reduction refuses, or of integer inputs, is refused with nothing
//   written; a state with a bit flipped is refused with nothing written, or
//   read.
// A self-overlapping output is an error (the strides must nest); for an empty
// output either outcome is accepted, with the arena untouched.
//
// The call (Op, View, Arena, Call, run) is in api/call.*, its decoding from
// the input's bytes in api/call_decoder.*, the expected results from the
// oracles in api/expectations.*, and the bounded partial states' checks in
// api/bounded_state_checks.*; this file ties them together.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "api/bounded_state_checks.hpp"
#include "api/call.hpp"
#include "api/call_decoder.hpp"
#include "api/expectations.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  namespace api = sqdiff_fuzz::api;
  FuzzedDataProvider in(data, size);
  const std::optional<api::Call> call = api::decode(in);
  if (!call) return 0;
  const api::Call& c = *call;
  api::Arena arena(c.arena_size, c.arena_shift);
  api::fill(in, arena, c.a.dtype);
  const std::vector<unsigned char> snapshot(arena.data(), arena.data() + arena.size());
  const api::Expectation expected = api::expectation(c, snapshot);

  arena.poison_outside(c.views());
  std::optional<std::string> error = api::run(c, arena.data(), c.threads);
  arena.unpoison();
  api::compare(c, snapshot, arena, expected, error, "first call");

  // Again from the same snapshot with another thread count: the plan memo
  // replays the call, and results may not depend on the threads.
  const int threads = c.threads < 0 ? c.threads : c.threads == 1 ? 2 : 1;
  std::memcpy(arena.data(), snapshot.data(), snapshot.size());
  arena.poison_outside(c.views());
  error = api::run(c, arena.data(), threads);
  arena.unpoison();
  api::compare(c, snapshot, arena, expected, error, threads == 1 ? "again, 1 thread" : "again, 2 threads");

  if (api::is_reduction(c.op)) api::check_bounded_states(c, snapshot, expected);
  return 0;
}
