// fuzz_api's checks of a reduction's bounded partial states: the whole
// call's states and those of its terms cut into pieces, finished against the
// reduction's reference, their bounds against the GMP oracle's exact sums,
// and states with a bit flipped.
#include "api/bounded_state_checks.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <exception>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "sqdiff/bounded_partial_sums.hpp"
#include "sqdiff/error.hpp"
#include "sqdiff/partial_sums.hpp"
#include "sqdiff/reduce.hpp"

namespace sqdiff_fuzz::api {
namespace {

// Part of a reduction's terms: views of a and b (explicit strides).
struct Piece {
  sqdiff::ConstTensorView a, b;
};

// An input's view restricted to [begin, end) of broadcast dim d, where the
// input has that dim at the broadcast size (a broadcast 1, or a dim the input
// lacks, reads the same elements in every piece).
void cut_along(sqdiff::ConstTensorView& v, const std::vector<int>& dims, const Shape& shape, std::size_t d,
               int64_t begin, int64_t end) {
  const int own = dims[d];
  if (own < 0 || v.shape[static_cast<std::size_t>(own)] != shape[d]) return;
  const auto i = static_cast<std::size_t>(own);
  v.data = static_cast<const unsigned char*>(v.data) +
           begin * v.strides[i] * static_cast<int64_t>(oracle::elem_size(v.dtype));
  v.shape[i] = end - begin;
}

// The call's terms (views into `base`) cut into 1-4 pieces, some perhaps
// empty, along one reduced dim of the broadcast shape `al` (none reduced: one
// piece).
std::vector<Piece> random_pieces(const Call& c, const unsigned char* base, const gmp::Alignment& al,
                                 const std::vector<bool>& reduced, std::mt19937_64& rng) {
  const Piece whole{{base + c.a.start, c.a.dtype, c.a.shape, c.a.effective_strides()},
                    {base + c.b.start, c.b.dtype, c.b.shape, c.b.effective_strides()}};
  std::vector<std::size_t> dims;
  for (std::size_t d = 0; d < reduced.size(); ++d) {
    if (reduced[d]) dims.push_back(d);
  }
  if (dims.empty()) return {whole};
  const std::size_t d = dims[rng() % dims.size()];
  std::vector<int64_t> cuts{0, al.shape[d]};
  for (uint64_t i = rng() % 4; i > 0; --i)
    cuts.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(al.shape[d] + 1)));
  std::sort(cuts.begin(), cuts.end());
  std::vector<Piece> pieces;
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
    Piece p = whole;
    cut_along(p.a, al.a_dim, al.shape, d, cuts[i], cuts[i + 1]);
    cut_along(p.b, al.b_dim, al.shape, d, cuts[i], cuts[i + 1]);
    pieces.push_back(p);
  }
  std::shuffle(pieces.begin(), pieces.end(), rng);
  return pieces;
}

constexpr uint64_t kStateFill = 0x5A5A5A5A5A5A5A5Au;

// Finishes `states` (of `outputs` outputs) and checks the contract against
// `reference` (row-major bits): flags 0 or 1 and counted by the return value,
// decided outputs equal to the reference, undecided ones untouched and, from
// the exact states of the same pieces, equal to the reference.
void check_finish(const std::string& what, const Call& c, const std::vector<Piece>& pieces,
                  const std::vector<uint64_t>& states, int64_t outputs, int64_t count, const Shape& out_shape,
                  const std::vector<uint64_t>& reference) {
  const DType input = c.a.dtype, out = c.out.dtype;
  const bool mean = c.op == Op::mean;
  const std::size_t item = oracle::elem_size(out);
  const auto n = static_cast<std::size_t>(outputs);
  std::vector<unsigned char> bytes(std::max<std::size_t>(n * item, 8), 0xA5);
  std::vector<uint8_t> undecided(n + 1, 0x77);
  int64_t left = -1;
  try {
    left = sqdiff::finish_bounded_partial_sums(input, states.data(), count, mean, {bytes.data(), out, out_shape},
                                               undecided.data());
  } catch (const std::exception& e) {
    fail(what + ": finish_bounded_partial_sums refused the library's own states: " + e.what());
  }
  check(undecided[n] == 0x77, what + ": a flag past the outputs was written");
  int64_t ones = 0;
  for (std::size_t k = 0; k < n; ++k) {
    check(undecided[k] <= 1, what + ": undecided[" + std::to_string(k) + "] is " + std::to_string(undecided[k]));
    const uint64_t actual = oracle::load_bits(bytes.data() + k * item, out);
    if (undecided[k] == 0) {
      if (!oracle::bits_match(out, reference[k], actual)) {
        fail(what + ": element " + std::to_string(k) + " decided as " + oracle::hex_bits(out, actual) + ", expected " +
             oracle::hex_bits(out, reference[k]));
      }
      continue;
    }
    ++ones;
    for (std::size_t i = 0; i < item; ++i) {
      check(bytes[k * item + i] == 0xA5, what + ": undecided element " + std::to_string(k) + " was written");
    }
  }
  check(ones == left,
        what + ": returned " + std::to_string(left) + " undecided, the flags say " + std::to_string(ones));
  if (ones == 0) return;
  // The exact states of the same pieces decide the rest.
  const std::size_t words = sqdiff::partial_sum_words(input);
  std::vector<uint64_t> exact(n * words + 1), piece(n * words + 1);
  const sqdiff::ReduceOptions options{c.mode, c.axes, c.keepdims, 1};
  sqdiff::partial_sum_squared_difference(pieces[0].a, pieces[0].b, exact.data(), options);
  for (std::size_t i = 1; i < pieces.size(); ++i) {
    sqdiff::partial_sum_squared_difference(pieces[i].a, pieces[i].b, piece.data(), options);
    sqdiff::combine_partial_sums(input, exact.data(), piece.data(), outputs);
  }
  std::vector<unsigned char> exact_bytes(std::max<std::size_t>(n * item, 8));
  sqdiff::finish_partial_sums(input, exact.data(), count, mean, {exact_bytes.data(), out, out_shape});
  for (std::size_t k = 0; k < n; ++k) {
    if (undecided[k] == 0) continue;
    const uint64_t actual = oracle::load_bits(exact_bytes.data() + k * item, out);
    if (!oracle::bits_match(out, reference[k], actual)) {
      fail(what + ": undecided element " + std::to_string(k) + " is " + oracle::hex_bits(out, actual) +
           " from the exact states, expected " + oracle::hex_bits(out, reference[k]));
    }
  }
}

// Flips one bit of one word of a copy of `states`: combining it into good
// states, and finishing it, must either refuse it (an Error, nothing written)
// or read it; never anything else.
void check_flipped_state(const std::string& what, const Call& c, const std::vector<uint64_t>& states, int64_t outputs,
                         int64_t count, const Shape& out_shape, std::mt19937_64& rng) {
  if (outputs == 0) return;
  std::vector<uint64_t> flipped = states;
  flipped[rng() % (flipped.size() - 1)] ^= uint64_t{1} << (rng() % 64);  // not the guard word
  std::vector<uint64_t> into = states;
  try {
    sqdiff::combine_bounded_partial_sums(c.a.dtype, into.data(), flipped.data(), outputs);
  } catch (const sqdiff::Error&) {
    check(into == states, what + ": a refused combination wrote into its states");
  } catch (const std::exception& e) {
    fail(what + ": combine_bounded_partial_sums threw something other than sqdiff::Error: " + e.what());
  }
  const std::size_t item = oracle::elem_size(c.out.dtype);
  const auto n = static_cast<std::size_t>(outputs);
  std::vector<unsigned char> bytes(std::max<std::size_t>(n * item, 8), 0xA5);
  std::vector<uint8_t> undecided(n, 0x77);
  try {
    sqdiff::finish_bounded_partial_sums(c.a.dtype, flipped.data(), count, c.op == Op::mean,
                                        {bytes.data(), c.out.dtype, out_shape}, undecided.data());
  } catch (const sqdiff::Error&) {
    check(std::all_of(bytes.begin(), bytes.end(), [](unsigned char b) { return b == 0xA5; }) &&
              std::all_of(undecided.begin(), undecided.end(), [](uint8_t f) { return f == 0x77; }),
          what + ": a refused finish wrote its output or flags");
  } catch (const std::exception& e) {
    fail(what + ": finish_bounded_partial_sums threw something other than sqdiff::Error: " + e.what());
  }
}

// Each state's bound holds: the GMP oracle's exact sum is within `error` of
// hi + lo, or the state's flags say NaN (the exact sum is NaN) or +inf (it is
// +inf); a state flagged for the exact path claims nothing. This checks the
// bounds themselves, which a finish only shows wrong on the rare sum near a
// rounding boundary. The words as reduce/bounded_state.cpp lays them out
// (hi, lo, bound, tag with the flags in its low byte): this fuzzer is the
// library's own test code.
void check_bounds(const std::string& what, const std::vector<uint64_t>& states, const gmp::ExactReduction& exact) {
  mpz_class scale;
  mpz_ui_pow_ui(scale.get_mpz_t(), 2, static_cast<unsigned long>(exact.scale));
  for (std::size_t k = 0; k < exact.sums.size(); ++k) {
    const uint64_t* w = states.data() + k * sqdiff::kBoundedPartialSumWords;
    const uint64_t flags = w[3] & 0xFF;
    const gmp::ExactSum& s = exact.sums[k];
    const std::string element = what + ": state " + std::to_string(k);
    if ((flags & 4) != 0) continue;
    if ((flags & 1) != 0) {
      check(s.nan, element + " is flagged NaN, the exact sum is not");
      continue;
    }
    check(!s.nan, element + " is not flagged NaN, the exact sum is");
    if ((flags & 2) != 0) {
      check(s.positive_infinity, element + " is flagged +inf, the exact sum is not");
      continue;
    }
    check(!s.positive_infinity, element + " is not flagged +inf, the exact sum is");
    const double hi = std::bit_cast<double>(w[0]), lo = std::bit_cast<double>(w[1]),
                 error = std::bit_cast<double>(w[2]);
    const mpq_class distance = abs(mpq_class(s.sum, scale) - (mpq_class(hi) + mpq_class(lo)));
    if (distance > mpq_class(error)) {
      // The distance's binary exponent, within 1 (it may be far below the doubles).
      const auto exponent = static_cast<long>(mpz_sizeinbase(distance.get_num_mpz_t(), 2)) -
                            static_cast<long>(mpz_sizeinbase(distance.get_den_mpz_t(), 2));
      char text[200];
      std::snprintf(text, sizeof text, " is %a + %a within %a, but the exact sum is about 2^%ld away", hi, lo, error,
                    exponent);
      fail(element + text);
    }
  }
}

}  // namespace

void check_bounded_states(const Call& c, const std::vector<unsigned char>& snapshot, const Expectation& expected) {
  const std::string what = c.describe() + " (bounded partial states)";
  std::mt19937_64 rng(
      std::hash<std::string_view>{}(std::string_view(reinterpret_cast<const char*>(snapshot.data()), snapshot.size())));
  std::optional<Shape> broadcast;
  Shape out_shape;
  bool valid = c.a.strides_ok() && c.b.strides_ok() && c.threads >= 0 && oracle::is_float(c.a.dtype);
  if (valid) broadcast = oracle::broadcast(c.a.shape, c.b.shape, c.mode.kind, c.mode.axis);
  if (broadcast) {
    try {
      out_shape = sqdiff::reduced_shape(*broadcast, c.axes, c.keepdims);
    } catch (const sqdiff::Error&) {
      broadcast.reset();
    }
  }
  valid = valid && broadcast.has_value();
  std::vector<uint64_t> reference;
  if (valid && !expected.error) {
    reference = expected.results[0];
  } else if (valid) {
    const std::vector<unsigned char> a = dense_copy(c.a, snapshot), b = dense_copy(c.b, snapshot);
    View dense_out;
    dense_out.dtype = c.out.dtype;
    dense_out.shape = out_shape;
    std::vector<unsigned char> out = dense_output(dense_out);
    const std::optional<std::string> error = run_exact([&] {
      const sqdiff::ConstTensorView av{a.data(), c.a.dtype, c.a.shape};
      const sqdiff::ConstTensorView bv{b.data(), c.b.dtype, c.b.shape};
      const sqdiff::TensorView ov{out.data(), c.out.dtype, out_shape};
      if (c.op == Op::sum) {
        sqdiff::sum_squared_difference(av, bv, ov, {c.mode, c.axes, c.keepdims, 1});
      } else {
        sqdiff::mean_squared_difference(av, bv, ov, {c.mode, c.axes, c.keepdims, 1});
      }
    });
    valid = !error.has_value();
    if (valid) reference = bits_of(out, dense_out);
  }
  const int64_t outputs = valid ? count_of(out_shape) : 0;
  const sqdiff::ReduceOptions options{c.mode, c.axes, c.keepdims, c.threads};
  const auto states_of = [&](const Piece& p, std::vector<uint64_t>& states) {
    sqdiff::bounded_partial_sum_squared_difference(p.a, p.b, c.out.dtype, states.data(), options);
    check(states.back() == kStateFill, what + ": a word past the states was written");
  };
  const Piece whole{{snapshot.data() + c.a.start, c.a.dtype, c.a.shape, c.a.strides},
                    {snapshot.data() + c.b.start, c.b.dtype, c.b.shape, c.b.strides}};
  // A refused call writes nothing (its states buffer: as many as the reduced
  // shape has, when there is one).
  std::vector<uint64_t> states(
      static_cast<std::size_t>(valid || broadcast ? count_of(out_shape) : 0) * sqdiff::kBoundedPartialSumWords + 1,
      kStateFill);
  try {
    states_of(whole, states);
    if (!valid) fail(what + ": an invalid call succeeded");
  } catch (const sqdiff::Error& e) {
    if (valid) fail(what + ": a valid call failed: " + e.what());
    check(std::all_of(states.begin(), states.end(), [](uint64_t w) { return w == kStateFill; }),
          what + ": a refused call wrote its states");
    return;
  } catch (const std::exception& e) {
    fail(what + ": threw something other than sqdiff::Error: " + e.what());
  }
  const gmp::Alignment al = gmp::align(c.a.shape, c.b.shape, c.mode);
  const std::vector<bool> reduced = gmp::reduced_dims(al.shape.size(), c.axes);
  int64_t count = 1;
  for (std::size_t d = 0; d < reduced.size(); ++d) {
    if (reduced[d]) count *= al.shape[d];
  }
  check_finish(what + ", one piece", c, {whole}, states, outputs, count, out_shape, reference);
  std::optional<gmp::ExactReduction> exact;
  if (count_of(al.shape) <= kMaxOracleTerms) {
    exact = gmp::exact_reduction(oracle_input(c.a, snapshot), oracle_input(c.b, snapshot), c.mode, c.axes, c.keepdims);
    check_bounds(what + ", one piece", states, *exact);
  }

  // The terms cut into pieces, their states combined one by one.
  const std::vector<Piece> pieces = random_pieces(c, snapshot.data(), al, reduced, rng);
  std::vector<uint64_t> combined(states.size(), kStateFill), piece(states.size(), kStateFill);
  states_of(pieces[0], combined);
  for (std::size_t i = 1; i < pieces.size(); ++i) {
    states_of(pieces[i], piece);
    sqdiff::combine_bounded_partial_sums(c.a.dtype, combined.data(), piece.data(), outputs);
  }
  check_finish(what + ", " + std::to_string(pieces.size()) + " pieces", c, pieces, combined, outputs, count, out_shape,
               reference);
  if (exact) check_bounds(what + ", " + std::to_string(pieces.size()) + " pieces", combined, *exact);
  if (rng() % 4 == 0) check_flipped_state(what + ", a bit flipped", c, combined, outputs, count, out_shape, rng);
}

}  // namespace sqdiff_fuzz::api
