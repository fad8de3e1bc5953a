// The bounded partial states of include/sqdiff/bounded_partial_sums.hpp
// (issue 23), the fast counterpart of the exact ones (partial_sums_test.cpp):
//  - agreement: random reductions (every float input type and output type,
//    sums and means, axes, keepdims, broadcasting, strided views) cut into
//    random boxes along their reduced dims, each box's bounded state
//    computed apart from views into the whole arrays, the states combined in
//    a random order or as a random tree, and finished: every output written
//    is bit for bit the single call's, every output reported undecided is
//    left untouched and, summed again with the exact states of the same
//    boxes, is the single call's too; the undecided flags are 0 or 1 and the
//    return value their count;
//  - undecided when it must be: sums on or extremely near a rounding
//    midpoint of the output type are undecided (never written wrong), sums of
//    random data far from boundaries are decided; zero sums stay +0 through
//    any number of combinations (their bound stays 0); NaN and infinities;
//    f64 terms the fast path leaves to the exact one;
//  - determinism: the finished results whatever the boxes, the combination
//    order, the threads and the SIMD target;
//  - errors, with nothing written: integer inputs, output types, overlap,
//    null pointers, negative counts, a non-dense output, and states that are
//    not this library's bounded states for inputs of the type given (the
//    message names the function and the state's index).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <iostream>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "reduce/fast_squares.hpp"
#include "reduce/gmp_oracle.hpp"
#include "reduce/reduce_test_support.hpp"
#include "sqdiff/bounded_partial_sums.hpp"
#include "sqdiff/partial_sums.hpp"
#include "test_support.hpp"

namespace {

namespace gmp = sqdiff_test::gmp;
using namespace sqdiff_test::reduce;
using sqdiff::ConstTensorView;

constexpr std::size_t kWords = sqdiff::kBoundedPartialSumWords;
// Fills states' buffers (and one word past them, which must survive).
constexpr uint64_t kStateFill = 0x5A5A5A5A5A5A5A5Au;
// Fills the undecided flags before a finish: neither 0 nor 1.
constexpr uint8_t kFlagFill = 0x77;

// Every output summed exactly while it lives (the fast paths off): the
// bounded states then come from exact sums (execute_bounded_partial_
// reduction's other branch), as they do for reductions the fast paths do not
// run (single terms, say).
class ExactPathOnly {
 public:
  explicit ExactPathOnly(bool on) : on_(on) {
    if (on_) sqdiff::detail::set_fast_square_reductions(false);
  }
  ~ExactPathOnly() {
    if (on_) sqdiff::detail::set_fast_square_reductions(true);
  }
  ExactPathOnly(const ExactPathOnly&) = delete;
  ExactPathOnly& operator=(const ExactPathOnly&) = delete;

 private:
  bool on_;
};

// One reduction: its inputs, options, and what the oracle's alignment says
// of its broadcast shape.
struct Reduction {
  Array a, b;
  sqdiff::ReduceOptions options;
  gmp::Alignment al;
  std::vector<bool> reduced;  // per broadcast dim
  Shape out_shape;
  int64_t outputs = 0;
  int64_t count = 1;  // terms per output

  DType input() const { return a.dtype; }
  std::string describe() const {
    return std::string(sqdiff::dtype_name(a.dtype)) + " a " + text(a.shape) + " (" + text(a.layout) + ") b " +
           text(b.shape) + " (" + text(b.layout) + "), " + text(options.broadcast) + ", axes " + text(options.axes) +
           (options.keepdims ? " keepdims" : "") + ", " + std::to_string(options.threads) + " threads";
  }
};

Reduction make_reduction(Array a, Array b, const sqdiff::ReduceOptions& options) {
  Reduction r{std::move(a), std::move(b), options, {}, {}, {}, 0, 1};
  r.al = gmp::align(r.a.shape, r.b.shape, options.broadcast);
  r.reduced = gmp::reduced_dims(r.al.shape.size(), options.axes);
  r.out_shape = sqdiff::reduced_shape(r.al.shape, options.axes, options.keepdims);
  r.outputs = count_of(r.out_shape);
  for (std::size_t d = 0; d < r.al.shape.size(); ++d) {
    if (r.reduced[d]) r.count *= r.al.shape[d];
  }
  return r;
}

// The part of one reduction's terms that a piece (a chunk of a file, a block
// of a Dask array) holds: views of a and b.
struct Piece {
  ConstTensorView a, b;
};

// Cuts [0, n) into 1 to `most` pieces, some perhaps empty.
std::vector<std::pair<int64_t, int64_t>> random_cuts(int64_t n, std::size_t most, std::mt19937_64& rng) {
  std::vector<int64_t> cuts{0, n};
  const std::size_t extra = rng() % most;
  for (std::size_t i = 0; i < extra; ++i) cuts.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(n + 1)));
  std::sort(cuts.begin(), cuts.end());
  std::vector<std::pair<int64_t, int64_t>> pieces;
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i) pieces.emplace_back(cuts[i], cuts[i + 1]);
  return pieces;
}

// An input's view restricted to [begin, end) of broadcast dim d: cut where
// the input has that dim at the broadcast shape's size; a broadcast 1, or a
// dim the input does not have, reads the same elements for every piece.
void cut(ConstTensorView& v, const std::vector<int>& dims, const Shape& shape, std::size_t d, int64_t begin,
         int64_t end) {
  const int own = dims[d];
  if (own < 0 || v.shape[static_cast<std::size_t>(own)] != shape[d]) return;
  const auto i = static_cast<std::size_t>(own);
  v.data = static_cast<const unsigned char*>(v.data) +
           begin * v.strides[i] * static_cast<int64_t>(sqdiff::dtype_size(v.dtype));
  v.shape[i] = end - begin;
}

// The reduction cut into boxes along up to two of its reduced dims (every
// box a view into the whole arrays); one piece when nothing is reduced.
std::vector<Piece> random_pieces(const Reduction& r, std::mt19937_64& rng) {
  const Piece whole{{r.a.origin(), r.a.dtype, r.a.shape, r.a.layout.strides},
                    {r.b.origin(), r.b.dtype, r.b.shape, r.b.layout.strides}};
  std::vector<std::size_t> reduced;
  for (std::size_t d = 0; d < r.reduced.size(); ++d) {
    if (r.reduced[d]) reduced.push_back(d);
  }
  std::shuffle(reduced.begin(), reduced.end(), rng);
  reduced.resize(std::min<std::size_t>(reduced.size(), 1 + rng() % 2));
  std::vector<Piece> pieces{whole};
  for (const std::size_t d : reduced) {
    std::vector<Piece> finer;
    for (const auto& [begin, end] : random_cuts(r.al.shape[d], 4, rng)) {
      for (Piece p : pieces) {
        cut(p.a, r.al.a_dim, r.al.shape, d, begin, end);
        cut(p.b, r.al.b_dim, r.al.shape, d, begin, end);
        finer.push_back(p);
      }
    }
    pieces = finer;
  }
  return pieces;
}

// Combines states in a random order: folded one by one into a random first
// one, or random neighbours paired up as a tree.
template <class Combine>
std::vector<uint64_t> combine_randomly(std::vector<std::vector<uint64_t>> states, std::mt19937_64& rng,
                                       Combine&& combine) {
  std::shuffle(states.begin(), states.end(), rng);
  if (rng() % 2 == 0) {
    for (std::size_t i = 1; i < states.size(); ++i) combine(states[0].data(), states[i].data());
    return states[0];
  }
  while (states.size() > 1) {
    const std::size_t i = rng() % (states.size() - 1);
    combine(states[i].data(), states[i + 1].data());
    states.erase(states.begin() + static_cast<std::ptrdiff_t>(i) + 1);
  }
  return states[0];
}

// The bounded states of the pieces for an `out` result, combined randomly.
// A word past each piece's states must stay as it was.
std::vector<uint64_t> bounded_states(const Reduction& r, const std::vector<Piece>& pieces, DType out,
                                     std::mt19937_64& rng) {
  std::vector<std::vector<uint64_t>> states;
  for (const Piece& p : pieces) {
    std::vector<uint64_t> s(static_cast<std::size_t>(r.outputs) * kWords + 1, kStateFill);
    sqdiff::bounded_partial_sum_squared_difference(p.a, p.b, out, s.data(), r.options);
    EXPECT_EQ(s.back(), kStateFill) << "a word past the bounded states was written";
    s.pop_back();
    states.push_back(s);
  }
  const DType input = r.input();
  const int64_t outputs = r.outputs;
  return combine_randomly(states, rng, [&](uint64_t* into, const uint64_t* from) {
    sqdiff::combine_bounded_partial_sums(input, into, from, outputs);
  });
}

// The exact states of the same pieces, combined randomly.
std::vector<uint64_t> exact_states(const Reduction& r, const std::vector<Piece>& pieces, std::mt19937_64& rng) {
  const std::size_t words = sqdiff::partial_sum_words(r.input());
  std::vector<std::vector<uint64_t>> states;
  for (const Piece& p : pieces) {
    std::vector<uint64_t> s(static_cast<std::size_t>(r.outputs) * words + 1, kStateFill);
    sqdiff::partial_sum_squared_difference(p.a, p.b, s.data(), r.options);
    s.pop_back();
    states.push_back(s);
  }
  const DType input = r.input();
  const int64_t outputs = r.outputs;
  return combine_randomly(states, rng, [&](uint64_t* into, const uint64_t* from) {
    sqdiff::combine_partial_sums(input, into, from, outputs);
  });
}

// What finish_bounded_partial_sums wrote: a dense output that was all
// sentinel bytes, the undecided flags that were all kFlagFill, its return.
struct Finished {
  Array out;
  std::vector<uint8_t> undecided;
  int64_t left = 0;
};

Finished finish_bounded(DType input, const std::vector<uint64_t>& states, int64_t count, bool mean, DType out,
                        const Shape& shape) {
  Finished f{sentinel_array(out, shape, dense_layout(shape)),
             std::vector<uint8_t>(static_cast<std::size_t>(count_of(shape)) + 1, kFlagFill), 0};
  f.left =
      sqdiff::finish_bounded_partial_sums(input, states.data(), count, mean, f.out.mutable_view(), f.undecided.data());
  EXPECT_EQ(f.undecided.back(), kFlagFill) << "a flag past the outputs was written";
  f.undecided.pop_back();
  return f;
}

// The single call's dense output.
Array single_call(const Reduction& r, bool mean, DType out) {
  Array one = sentinel_array(out, r.out_shape, dense_layout(r.out_shape));
  if (mean) {
    sqdiff::mean_squared_difference(r.a.view(), r.b.view(), one.mutable_view(), r.options);
  } else {
    sqdiff::sum_squared_difference(r.a.view(), r.b.view(), one.mutable_view(), r.options);
  }
  return one;
}

// The exact states finished into a dense output.
Array finish_exact(const Reduction& r, const std::vector<uint64_t>& states, bool mean, DType out) {
  Array o = sentinel_array(out, r.out_shape, dense_layout(r.out_shape));
  sqdiff::finish_partial_sums(r.input(), states.data(), r.count, mean, o.mutable_view());
  return o;
}

// The contract of one finish: the flags are 0 or 1 and `left` counts the 1s;
// a decided output holds `reference`'s bits, an undecided one its sentinel
// bytes, and the exact states' result for it (`exact`) is `reference`'s.
::testing::AssertionResult finish_agrees(const Finished& f, const Array& reference, const Array& exact) {
  ::testing::AssertionResult failure = ::testing::AssertionFailure();
  int misses = 0;
  int64_t ones = 0;
  const std::size_t size = gmp::size_of(reference.dtype);
  for (std::size_t i = 0; i < f.undecided.size(); ++i) {
    const auto at = static_cast<int64_t>(i);
    const uint8_t flag = f.undecided[i];
    if (flag != 0 && flag != 1) {
      if (misses++ < 6) failure << "\n  undecided[" << i << "] is " << int{flag} << ", not 0 or 1";
      continue;
    }
    if (flag == 0) {
      if (f.out.bits_at(at) != reference.bits_at(at) && misses++ < 6) {
        failure << "\n  element " << i << " decided as " << gmp::describe(reference.dtype, f.out.bits_at(at))
                << ", the single call gives " << gmp::describe(reference.dtype, reference.bits_at(at));
      }
      continue;
    }
    ++ones;
    const bool left_alone = std::all_of(f.out.bytes.begin() + static_cast<std::ptrdiff_t>(i * size),
                                        f.out.bytes.begin() + static_cast<std::ptrdiff_t>((i + 1) * size),
                                        [](unsigned char c) { return c == kSentinel; });
    if (!left_alone && misses++ < 6) failure << "\n  undecided element " << i << " was written";
    if (exact.bits_at(at) != reference.bits_at(at) && misses++ < 6) {
      failure << "\n  undecided element " << i << " from the exact states is "
              << gmp::describe(reference.dtype, exact.bits_at(at)) << ", the single call gives "
              << gmp::describe(reference.dtype, reference.bits_at(at));
    }
  }
  if (ones != f.left && misses++ < 6) failure << "\n  returned " << f.left << " undecided, the flags say " << ones;
  if (misses == 0) return ::testing::AssertionSuccess();
  return failure << "\n  " << misses << " mismatches";
}

// The finished result: the decided outputs, and the exact states' result
// where undecided.
std::vector<unsigned char> completed(const Finished& f, const Array& exact) {
  std::vector<unsigned char> bytes = f.out.bytes;
  const std::size_t size = gmp::size_of(f.out.dtype);
  for (std::size_t i = 0; i < f.undecided.size(); ++i) {
    if (f.undecided[i] == 1) {
      std::copy_n(exact.bytes.begin() + static_cast<std::ptrdiff_t>(i * size), size,
                  bytes.begin() + static_cast<std::ptrdiff_t>(i * size));
    }
  }
  return bytes;
}

// ---------------------------------------------------------------------------
// Agreement with the single call

// A random reduction of rank 0-5 of at most ~2000 terms (reductions_test's
// mix): broadcasting, axes, keepdims, strided and stride-0 views, threads.
Reduction random_reduction(DType t, std::mt19937_64& rng) {
  const RandomBroadcast shapes = random_broadcast({6, 50, 40, 2000, 4}, rng);
  const std::size_t rank = gmp::align(shapes.a_shape, shapes.b_shape, shapes.mode).shape.size();
  sqdiff::ReduceOptions options;
  options.broadcast = shapes.mode;
  const auto u = rng() % 10;
  if (u < 2) {
    options.axes = std::nullopt;
  } else if (u < 3) {
    options.axes = Shape{};
  } else {
    Shape axes;
    for (std::size_t d = 0; d < rank; ++d) {
      if (rng() % 2 == 0) axes.push_back(static_cast<int64_t>(d) - (rng() % 2 == 0 ? 0 : static_cast<int64_t>(rank)));
    }
    std::shuffle(axes.begin(), axes.end(), rng);
    options.axes = axes;
  }
  options.keepdims = rng() % 2 == 0;
  options.threads = 1 + static_cast<int>(rng() % 3);
  ValueMix mix;
  mix.specials = rng() % 4 == 0 ? 0.01 : 0;
  mix.extremes = rng() % 3 == 0 ? 0.1 : 0.01;
  Array a = random_array(t, shapes.a_shape, layout_of(kLayoutKinds[rng() % 6], shapes.a_shape, rng, true), rng, mix);
  Array b = random_array(t, shapes.b_shape, layout_of(kLayoutKinds[rng() % 6], shapes.b_shape, rng, true), rng, mix);
  return make_reduction(std::move(a), std::move(b), options);
}

struct Tally {
  int64_t outputs = 0;
  int64_t undecided = 0;
};

// Every output type, sum and mean, of one reduction cut into random pieces:
// the bounded states' finish against the single call, the undecided ones
// against the exact states of the same pieces.
void check_pieces(const Reduction& r, bool exact_path, std::mt19937_64& rng, Tally& tally) {
  const std::vector<Piece> pieces = random_pieces(r, rng);
  const std::vector<uint64_t> exact = exact_states(r, pieces, rng);
  for (const DType o : output_types(r.input(), false)) {
    std::vector<uint64_t> states;
    {
      const ExactPathOnly only(exact_path);
      states = bounded_states(r, pieces, o, rng);
    }
    for (const bool mean : {false, true}) {
      const std::string what = r.describe() + " -> " + std::string(sqdiff::dtype_name(o)) + (mean ? " mean" : " sum") +
                               ", " + std::to_string(pieces.size()) + " pieces" +
                               (exact_path ? ", states from the exact path" : "");
      const Array one = single_call(r, mean, o);
      const Finished f = finish_bounded(r.input(), states, r.count, mean, o, r.out_shape);
      EXPECT_TRUE(finish_agrees(f, one, finish_exact(r, exact, mean, o))) << what;
      if (!exact_path) {
        tally.outputs += r.outputs;
        tally.undecided += f.left;
      }
    }
  }
}

class BoundedAgreement : public ::testing::TestWithParam<DType> {};

TEST_P(BoundedAgreement, FinishedStatesEqualTheSingleCall) {
  const DType t = GetParam();
  std::mt19937_64 rng(2323 + static_cast<int>(t));
  Tally tally;
  for (int i = 0; i < 1500; ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    const Reduction r = random_reduction(t, rng);
    // One case in eight with states from the exact sums (bounded_of(ExactSum)).
    check_pieces(r, i % 8 == 7, rng, tally);
    if (HasFailure()) return;
  }
  // For the record (RandomSumsAreDecided asserts the count): this data's
  // small integers make exact ties, and f64 extremes go to the exact path.
  std::cout << sqdiff::dtype_name(t) << ": " << tally.undecided << " of " << tally.outputs
            << " outputs undecided (states from the fast paths)\n";
}

INSTANTIATE_TEST_SUITE_P(EveryFloatType, BoundedAgreement, ::testing::ValuesIn(kFloatTypes), type_param_name);

// ---------------------------------------------------------------------------
// Undecided when it must be, decided otherwise

// Bits of the double v in type t (v exact in t).
uint64_t bits_in(DType t, double v) {
  switch (t) {
    case DType::f16:
      return std::isnan(v) ? 0x7E00
                           : sqdiff_test::round_float_to_half_oracle(sqdiff_test::kF16Format, static_cast<float>(v));
    case DType::bf16:
      return std::isnan(v) ? 0x7FC0
                           : sqdiff_test::round_float_to_half_oracle(sqdiff_test::kBF16Format, static_cast<float>(v));
    case DType::f32: return std::bit_cast<uint32_t>(static_cast<float>(v));
    default: return std::bit_cast<uint64_t>(v);
  }
}

// A dense 1-d array of type t holding `values` (each exact in t).
Array array_of(DType t, const std::vector<double>& values) {
  const Shape shape{static_cast<int64_t>(values.size())};
  Array a = sentinel_array(t, shape, dense_layout(shape));
  for (std::size_t i = 0; i < values.size(); ++i) a.set_bits_at(static_cast<int64_t>(i), bits_in(t, values[i]));
  return a;
}

// sum (a - b)^2 over every element, each element its own piece (the states
// combined in order), finished into `out`: the finish, and the single call's
// and the exact states' results.
struct OneOutput {
  Finished f;
  Array single;
  Array exact;
};

OneOutput one_output(DType t, const std::vector<double>& a, const std::vector<double>& b, DType out, bool each_alone,
                     bool mean = false) {
  std::mt19937_64 rng(1);
  Reduction r = make_reduction(array_of(t, a), array_of(t, b), {});
  std::vector<Piece> pieces;
  if (each_alone) {
    for (int64_t i = 0; i < r.a.shape[0]; ++i) {
      pieces.push_back({{r.a.origin() + i * static_cast<int64_t>(gmp::size_of(t)), t, {1}, {1}},
                        {r.b.origin() + i * static_cast<int64_t>(gmp::size_of(t)), t, {1}, {1}}});
    }
  } else {
    pieces.push_back({r.a.view(), r.b.view()});
  }
  std::vector<std::vector<uint64_t>> states;
  for (const Piece& p : pieces) {
    states.emplace_back(kWords);
    sqdiff::bounded_partial_sum_squared_difference(p.a, p.b, out, states.back().data());
  }
  for (std::size_t i = 1; i < states.size(); ++i) {
    sqdiff::combine_bounded_partial_sums(t, states[0].data(), states[i].data(), 1);
  }
  std::vector<std::vector<uint64_t>> exact;
  for (const Piece& p : pieces) {
    exact.emplace_back(sqdiff::partial_sum_words(t));
    sqdiff::partial_sum_squared_difference(p.a, p.b, exact.back().data());
  }
  for (std::size_t i = 1; i < exact.size(); ++i) sqdiff::combine_partial_sums(t, exact[0].data(), exact[i].data(), 1);
  return {finish_bounded(t, states[0], r.count, mean, out, {}), single_call(r, mean, out),
          finish_exact(r, exact[0], mean, out)};
}

std::string describe(DType t, const std::vector<double>& a, const std::vector<double>& b, DType out) {
  std::string s = std::string(sqdiff::dtype_name(t)) + " a {";
  for (const double v : a) s += gmp::describe(DType::f64, std::bit_cast<uint64_t>(v)) + " ";
  s += "} b {";
  for (const double v : b) s += gmp::describe(DType::f64, std::bit_cast<uint64_t>(v)) + " ";
  return s + "} -> " + std::string(sqdiff::dtype_name(out));
}

int precision_of(DType t) { return gmp::format_of(t).precision; }

// Squares summing to 2^p + odd for an output of precision p: a midpoint of
// the output type (its ulp at 2^p is 2), as inputs of type t with b = 0:
// 2^p is one square (p even) or two (p odd), then `odd` ones.
std::vector<double> midpoint_terms(int p, int odd) {
  std::vector<double> a;
  if (p % 2 == 0) {
    a.push_back(std::ldexp(1.0, p / 2));
  } else {
    a.push_back(std::ldexp(1.0, (p - 1) / 2));
    a.push_back(std::ldexp(1.0, (p - 1) / 2));
  }
  for (int i = 0; i < odd; ++i) a.push_back(1);
  return a;
}

// The smallest power of two of type t (its smallest subnormal).
double smallest_in(DType t) { return std::ldexp(1.0, gmp::format_of(t).smallest_step()); }

// On a midpoint, or above it by a square far below any bound (2^-40 of the
// sum's magnitude and less): undecided, never written, and the exact states
// give the single call's result; whether the states come as one piece or as
// one per term. The case: f32 squares 2^24 + 1 + 2^-40 from 4096, 1,
// 2^-20 (rounded up to 2^24 + 2, where 2^24 + 1 alone ties down to 2^24).
TEST(BoundedUndecided, SumsOnOrAtAHairFromAMidpoint) {
  for (const DType t : kFloatTypes) {
    for (const DType o : output_types(t, false)) {
      const int p = precision_of(o);
      // 2^p must be one or two squares of t: 2^26 is beyond f16's range.
      if (std::ldexp(1.0, p / 2) > 65504 && t == DType::f16) continue;
      for (const int odd : {1, 3}) {
        std::vector<double> a = midpoint_terms(p, odd);
        for (const int nudge : {0, 1, 2}) {
          std::vector<double> terms = a;
          // nudge 1: a square 2^-40 below the sum's ulp, or the least t holds;
          // nudge 2: the least square t holds.
          if (nudge == 1) terms.push_back(std::max(std::ldexp(1.0, -20), smallest_in(t)));
          if (nudge == 2) terms.push_back(smallest_in(t));
          const std::vector<double> b(terms.size(), 0.0);
          for (const bool each_alone : {false, true}) {
            const std::string what = describe(t, terms, b, o) + (each_alone ? ", one piece a term" : ", one piece");
            const OneOutput r = one_output(t, terms, b, o, each_alone);
            // Single terms are summed exactly (their pieces run no fast path):
            // exact squares keep a 0 bound, which decides even a tie.
            if (!each_alone) {
              EXPECT_EQ(r.f.left, 1) << what << ": decided as " << gmp::describe(o, r.f.out.bits_at(0))
                                     << ", the single call gives " << gmp::describe(o, r.single.bits_at(0));
            }
            EXPECT_TRUE(finish_agrees(r.f, r.single, r.exact)) << what;
          }
        }
      }
    }
  }
  // The case, with its expected bits.
  const OneOutput r = one_output(DType::f32, {4096, 1, 0x1p-20}, {0, 0, 0}, DType::f32, false);
  EXPECT_EQ(r.f.left, 1);
  EXPECT_EQ(r.single.bits_at(0), std::bit_cast<uint32_t>(16777218.0f));
  EXPECT_EQ(r.exact.bits_at(0), std::bit_cast<uint32_t>(16777218.0f));
  const OneOutput tie = one_output(DType::f32, {4096, 1}, {0, 0}, DType::f32, false);
  EXPECT_EQ(tie.f.left, 1);
  EXPECT_EQ(tie.exact.bits_at(0), std::bit_cast<uint32_t>(16777216.0f));
  // One piece a term: exact squares, a 0 bound, decided as the tie's even neighbour.
  const OneOutput exact_tie = one_output(DType::f32, {4096, 1}, {0, 0}, DType::f32, true);
  EXPECT_EQ(exact_tie.f.left, 0);
  EXPECT_EQ(exact_tie.f.out.bits_at(0), std::bit_cast<uint32_t>(16777216.0f));
}

// Around midpoints at random magnitudes (f32 inputs, f32 and f64 outputs):
// a square about 2^-k of the output's ulp above the midpoint, or the last 1
// made (1 - 2^-k)^2 below it. Whatever is decided is the single call's
// result; one piece (the fast path) decides nothing closer than its bound
// can tell apart: 2^-50 of the sum for f32 outputs (bound_single's is about
// 2^-46.6), 2^-104 for f64 ones (bound_double's is at least 2^-100).
TEST(BoundedUndecided, NearMidpointsNeverWrittenWrong) {
  std::mt19937_64 rng(77);
  int decided = 0, undecided = 0;
  for (int i = 0; i < 3000; ++i) {
    const DType t = DType::f32;
    const DType o = i % 2 == 0 ? DType::f32 : DType::f64;
    const int p = precision_of(o);
    const int scale = static_cast<int>(rng() % 30) - 10;  // multiplies the sum by 4^scale
    std::vector<double> a = midpoint_terms(p, 1 + 2 * static_cast<int>(rng() % 4));
    std::vector<double> b(a.size(), 0.0);
    const int k = 10 + static_cast<int>(rng() % (o == DType::f32 ? 40 : 100));
    if (rng() % 2 == 0) {
      a.push_back(std::ldexp(1.0, -k / 2));  // above: by 2^-k or 2^(1-k)
      b.push_back(0);
    } else {
      b.back() = std::ldexp(1.0, -k);  // below: by about 2^(1-k)
    }
    for (double& v : a) v = std::ldexp(v, scale);
    for (double& v : b) v = std::ldexp(v, scale);
    const bool each_alone = rng() % 4 == 0;
    const OneOutput r = one_output(t, a, b, o, each_alone);
    const std::string what = describe(t, a, b, o) + (each_alone ? ", one piece a term" : "");
    EXPECT_TRUE(finish_agrees(r.f, r.single, r.exact)) << what;
    // The distance to the midpoint is at most 2^(1 - k - p) of the sum.
    const int within = o == DType::f32 ? 50 : 104;
    if (!each_alone && k + p - 1 >= within) {
      EXPECT_EQ(r.f.left, 1) << what << ": decided within 2^-" << within << " of the sum";
    }
    (r.f.left == 0 ? decided : undecided) += 1;
    if (HasFailure()) return;
  }
  EXPECT_GT(decided, 100);
  EXPECT_GT(undecided, 100);
}

// A random value exact in t: either sign, 2^e for e in [lowest, highest],
// the type's full mantissa.
double random_value(DType t, int lowest, int highest, std::mt19937_64& rng) {
  const int fraction_bits = precision_of(t) - 1;
  const auto mantissa = static_cast<double>(rng() & ((uint64_t{1} << fraction_bits) - 1));
  const int e = lowest + static_cast<int>(rng() % static_cast<uint64_t>(highest + 1 - lowest));
  const double v = std::ldexp(1 + std::ldexp(mantissa, -fraction_bits), e);
  return rng() % 2 == 0 ? v : -v;
}

// Sums of random data far from any boundary: every one of 1000 outputs of
// each input and output type, sums and means, is decided, from pieces too.
// The data must make sums that are far from boundaries: squares of values
// from 2^-60 up hold many more bits than any output type (and a mean of
// them, a dyadic one when 37 divides the sum, as many); f16 squares are
// multiples of 2^-48, so f16 sums below 2^5 are exact doubles instead
// (larger ones, of up to 4 bits more than a double, lie on an f64 midpoint
// one time in 16 or so, and are rightly undecided).
TEST(BoundedDecided, RandomSumsAreDecided) {
  std::mt19937_64 rng(1000);
  for (const DType t : kFloatTypes) {
    // 1000 outputs of 37 terms.
    const Shape shape{1000, 37};
    const int lowest = t == DType::f16 ? -14 : -60;
    const int highest = t == DType::f16 ? -3 : 3;
    std::vector<double> values(2 * 1000 * 37);
    for (double& v : values) v = random_value(t, lowest, highest, rng);
    Array a = array_of(t, std::vector<double>(values.begin(), values.begin() + 37000));
    Array b = array_of(t, std::vector<double>(values.begin() + 37000, values.end()));
    a.shape = b.shape = shape;
    a.layout = b.layout = dense_layout(shape);
    sqdiff::ReduceOptions options;
    options.axes = Shape{1};
    const Reduction r = make_reduction(std::move(a), std::move(b), options);
    for (const DType o : output_types(t, false)) {
      for (const bool whole : {true, false}) {
        const std::vector<Piece> pieces = whole ? std::vector<Piece>{{r.a.view(), r.b.view()}} : random_pieces(r, rng);
        const std::vector<uint64_t> states = bounded_states(r, pieces, o, rng);
        for (const bool mean : {false, true}) {
          const Finished f = finish_bounded(t, states, r.count, mean, o, r.out_shape);
          const Array one = single_call(r, mean, o);
          EXPECT_EQ(f.left, 0) << sqdiff::dtype_name(t) << " -> " << sqdiff::dtype_name(o) << (mean ? " mean" : " sum")
                               << ", " << pieces.size() << " pieces";
          EXPECT_TRUE(finish_agrees(f, one, one));
        }
      }
    }
  }
}

// a == b: every piece's sum is exactly 0 with a 0 bound, which combining
// keeps however many pieces are added: +0, decided (NaN for the mean over no
// terms).
TEST(BoundedDecided, ZeroSumsStayZeroThroughManyPieces) {
  std::mt19937_64 rng(3);
  for (const DType t : kFloatTypes) {
    ValueMix mix;
    mix.extremes = 0.1;  // tiny and huge values too: their differences are still 0
    const Shape shape{64, 300};
    const Array a = random_array(t, shape, dense_layout(shape), rng, mix);
    sqdiff::ReduceOptions options;
    options.axes = Shape{1};
    const Reduction r = make_reduction(a, a, options);
    // 60 pieces of 5 columns each.
    std::vector<Piece> pieces;
    for (int64_t c = 0; c < 300; c += 5) {
      const auto* at = r.a.origin() + c * static_cast<int64_t>(gmp::size_of(t));
      pieces.push_back({{at, t, {64, 5}, {300, 1}}, {at, t, {64, 5}, {300, 1}}});
    }
    for (const DType o : output_types(t, false)) {
      const std::vector<uint64_t> states = bounded_states(r, pieces, o, rng);
      for (const bool mean : {false, true}) {
        const Finished f = finish_bounded(t, states, r.count, mean, o, r.out_shape);
        EXPECT_EQ(f.left, 0) << sqdiff::dtype_name(t) << " -> " << sqdiff::dtype_name(o);
        for (int64_t i = 0; i < 64; ++i) ASSERT_EQ(f.out.bits_at(i), 0u) << sqdiff::dtype_name(t) << " element " << i;
        const Finished none = finish_bounded(t, states, 0, true, o, r.out_shape);
        EXPECT_EQ(none.left, 0);
        for (int64_t i = 0; i < 64; ++i) ASSERT_TRUE(gmp::is_nan_bits(o, none.out.bits_at(i)));
      }
    }
  }
}

// NaN inputs (and inf - inf) give NaN, infinite ones +inf, decided, and a
// NaN piece combined with an infinite one gives NaN; the single call agrees.
// `infinity_undecided`: an infinite (not NaN) sum of several terms may be left
// to the exact states (then they give +inf).
void check_nan_and_infinity(DType t, bool infinity_undecided = false) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  struct Special {
    std::vector<double> a, b;
    bool is_nan;
  };
  const std::vector<Special> cases = {
      {{1, nan, 2}, {0, 0, 0}, true},     {{1, 2, 3}, {0, nan, 0}, true},   {{1, inf, 2}, {0, 0, 0}, false},
      {{1, 2, -inf}, {0, 0, 1}, false},   {{1, inf, 2}, {0, inf, 0}, true}, {{inf, 2, nan}, {0, 0, 0}, true},
      {{1, -inf, 2}, {0, inf, 0}, false},
  };
  for (const DType o : output_types(t, false)) {
    for (const Special& c : cases) {
      for (const bool each_alone : {false, true}) {
        for (const bool mean : {false, true}) {
          const std::string what = describe(t, c.a, c.b, o) + (mean ? " mean" : " sum") +
                                   (each_alone ? ", one piece a term" : ", one piece");
          const OneOutput r = one_output(t, c.a, c.b, o, each_alone, mean);
          EXPECT_EQ(r.f.left, infinity_undecided && !c.is_nan && !each_alone ? r.f.left : 0) << what;
          EXPECT_TRUE(finish_agrees(r.f, r.single, r.exact)) << what;
          const uint64_t want = c.is_nan ? gmp::nan_bits(o) : gmp::infinity_bits(o, false);
          EXPECT_TRUE(gmp::matches(o, {false, c.is_nan, want}, r.single.bits_at(0))) << what;
        }
      }
    }
  }
}

TEST(BoundedDecided, NanAndInfinity) {
  for (const DType t : {DType::f16, DType::bf16, DType::f32}) check_nan_and_infinity(t);
}

// The same for f64 inputs, apart: the f64 kernels flag an infinite difference
// as out of their range (kernels/reduce-inl.h, OutOfRange: a square from
// 2^1000 goes to the exact path, where SPEC 7's rule for f64 overflow
// applies), so an infinite sum of the fast path may be left undecided, and the
// exact states then give +inf; a NaN sum is NaN whatever the kernels flagged,
// decided.
TEST(BoundedDecided, F64NanAndInfinity) { check_nan_and_infinity(DType::f64, true); }

// f64 terms the fast path leaves to the exact one (differences below 2^-480,
// squares below 2^-960, or from 2^500, squares from 2^1000): undecided, and
// the exact states give the single call's result (which the GMP oracle
// checks too), on the fast path's shapes and on a single term (which the
// exact path sums into the bounded state).
TEST(BoundedUndecided, F64TermsLeftToTheExactPath) {
  const std::vector<std::vector<double>> terms = {
      {0x1p-500, 1, 2},
      {0x1p-500, 0x1p-520, 0x1.8p-530},
      {0x1.3p-481, 0x1p-700},
      {0x1p505, 1, 3},
      {0x1p510, 0x1p511, 0x1.fffffffffffffp511},
      {0x1p500},
      {0x1.5p-540, 0x1p-1074},
      {0x1p-490},
  };
  for (const std::vector<double>& a : terms) {
    const std::vector<double> b(a.size(), 0.0);
    for (const DType o : {DType::f64, DType::f32}) {
      for (const bool each_alone : {false, true}) {
        for (const bool mean : {false, true}) {
          const std::string what =
              describe(DType::f64, a, b, o) + (mean ? " mean" : " sum") + (each_alone ? ", one piece a term" : "");
          const OneOutput r = one_output(DType::f64, a, b, o, each_alone, mean);
          EXPECT_TRUE(finish_agrees(r.f, r.single, r.exact)) << what;
          // Pieces of more than one term run the fast path, which leaves them.
          if (!each_alone && a.size() > 1) {
            EXPECT_EQ(r.f.left, 1) << what;
          }
          const Array av = array_of(DType::f64, a), bv = array_of(DType::f64, b);
          const gmp::ExactReduction exact = gmp::exact_reduction(av.input(), bv.input(), {}, std::nullopt, false);
          EXPECT_TRUE(gmp::matches(o, gmp::round_reduction(exact, mean, o)[0], r.single.bits_at(0))) << what;
        }
      }
    }
  }
}

// States from exact sums (single terms, whose pieces run no fast path) of
// values below the doubles' subnormal spacing: 2^-1074 squared is 2^-2148,
// whose nearest double is 0 and whose bound must be half the spacing there,
// 2^-1075, which is no double. A bound that rounds to 0 makes the sum look
// exact, and a tie decided on it is wrong: f64 inputs {4096, 1, 2^-1074}
// (b = 0), a piece each, sum into f32: 2^24 + 1 + 2^-2148 is above the
// midpoint 2^24 + 1, so 16777218, never 16777216; and {1, 2^-27, 2^-27,
// 2^-1074} into f64: 1 + 2^-53 + 2^-2148, so 1 + 2^-52, never 1.
TEST(BoundedUndecided, ExactSumsBelowTheSubnormalSpacingKeepTheirBound) {
  struct Case {
    std::vector<double> a;
    DType out;
    uint64_t bits;
  };
  const std::vector<Case> cases = {
      {{4096, 1, 0x1p-1074}, DType::f32, std::bit_cast<uint32_t>(16777218.0f)},
      {{1, 0x1p-27, 0x1p-27, 0x1p-1074}, DType::f64, std::bit_cast<uint64_t>(1 + 0x1p-52)},
      {{1, 0x1p-27, 0x1p-27, 0x1p-600}, DType::f64, std::bit_cast<uint64_t>(1 + 0x1p-52)},
      {{1, 0x1p-27, 0x1p-27, 0x1.8p-520}, DType::f64, std::bit_cast<uint64_t>(1 + 0x1p-52)},
  };
  for (const Case& c : cases) {
    const std::vector<double> b(c.a.size(), 0.0);
    const std::string what = describe(DType::f64, c.a, b, c.out) + ", one piece a term";
    const OneOutput r = one_output(DType::f64, c.a, b, c.out, true);
    EXPECT_EQ(r.single.bits_at(0), c.bits) << what;
    EXPECT_TRUE(finish_agrees(r.f, r.single, r.exact)) << what;
  }
}

// A single f64 term whose exact square rounds to the largest double (a - b
// = 0x1.fffffffffffffp511 + 1.5 2^457, not a double: its square is a quarter
// ulp below 2^1024 - 2^971, the largest double): the nearest double is the
// largest one, whose half ulp above (toward +inf) is no finite number. A
// state the library wrote must be one it reads back, and finish as the
// single call does; 2^511, 2^-537 and 1.5 2^-600 are the same test away
// from that edge.
TEST(BoundedUndecided, AnExactSumNearestTheLargestDoubleIsAState) {
  const std::vector<std::pair<double, double>> cases = {
      {0x1.fffffffffffffp511, -0x1.8p457},
      {0x1p511, 0},
      {0x1p-537, 0},
      {0x1p-600, -0x1p-601},
  };
  for (const auto& [x, y] : cases) {
    for (const DType o : {DType::f64, DType::f32}) {
      const std::string what = describe(DType::f64, {x}, {y}, o);
      const Reduction r = make_reduction(array_of(DType::f64, {x}), array_of(DType::f64, {y}), {});
      const std::vector<Piece> whole{Piece{r.a.view(), r.b.view()}};
      std::mt19937_64 rng(9);
      const std::vector<uint64_t> states = bounded_states(r, whole, o, rng);
      std::optional<Finished> f;
      EXPECT_NO_THROW(f = finish_bounded(DType::f64, states, 1, false, o, {})) << what;
      if (f) {
        EXPECT_TRUE(finish_agrees(*f, single_call(r, false, o), finish_exact(r, exact_states(r, whole, rng), false, o)))
            << what;
      }
      std::vector<uint64_t> twice = states;  // added to itself: still a state
      EXPECT_NO_THROW(sqdiff::combine_bounded_partial_sums(DType::f64, twice.data(), twice.data(), 1)) << what;
    }
  }
}

// ---------------------------------------------------------------------------
// Determinism

struct Workload {
  const char* name;
  Shape a, b;
  std::optional<Shape> axes;
};

// The fast paths' shapes (all axes, rows, columns, per channel, pairwise),
// big enough for the work to be split across two threads.
const std::vector<Workload>& workloads() {
  static const std::vector<Workload> w = {
      {"all axes", {70001}, {70001}, std::nullopt},     {"rows", {32, 2053}, {32, 2053}, Shape{-1}},
      {"columns", {2053, 32}, {32}, Shape{0}},          {"per channel", {4, 16, 32, 33}, {1, 16, 1, 1}, Shape{0, 2, 3}},
      {"pairwise", {33, 1, 64}, {1, 33, 64}, Shape{2}},
  };
  return w;
}

// The finished results (decided outputs, the exact states' where undecided)
// are the same bytes for other pieces, other combination orders, 1 and 2
// threads and every SIMD target, and every decided output is the single
// call's.
TEST(BoundedDeterminism, ResultsDoNotDependOnPiecesOrderThreadsOrTarget) {
  std::mt19937_64 rng(31);
  const std::vector<int64_t> targets = targets_to_run();
  for (const Workload& w : workloads()) {
    for (const DType t : kFloatTypes) {
      ValueMix mix;
      mix.extremes = 0.01;
      sqdiff::ReduceOptions options;
      options.axes = w.axes;
      const Reduction r = make_reduction(random_array(t, w.a, layout_of(LayoutKind::gapped, w.a, rng, false), rng, mix),
                                         random_array(t, w.b, dense_layout(w.b), rng, mix), options);
      for (const DType o : output_types(t, false)) {
        const bool mean = rng() % 2 == 0;
        const Array one = single_call(r, mean, o);
        for (const int64_t target : targets) {
          const TargetGuard guard(target);
          for (const int threads : {1, 2}) {
            Reduction run = r;
            run.options.threads = threads;
            const std::vector<Piece> pieces = random_pieces(run, rng);
            const std::string what = std::string(w.name) + ", " + std::string(sqdiff::dtype_name(t)) + " -> " +
                                     std::string(sqdiff::dtype_name(o)) + (mean ? " mean" : " sum") + ", " +
                                     target_text(target) + ", " + std::to_string(threads) + " threads, " +
                                     std::to_string(pieces.size()) + " pieces";
            const Finished f = finish_bounded(t, bounded_states(run, pieces, o, rng), r.count, mean, o, r.out_shape);
            const Array exact = finish_exact(run, exact_states(run, pieces, rng), mean, o);
            EXPECT_TRUE(finish_agrees(f, one, exact)) << what;
            EXPECT_EQ(completed(f, exact), one.bytes) << what;
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Errors

// Runs f, which must throw sqdiff::Error whose message holds every fragment.
template <class F>
void expect_error(F&& f, const std::vector<std::string>& fragments, const std::string& what) {
  const std::string m = sqdiff_test::error_message(std::forward<F>(f));
  for (const std::string& s : fragments) EXPECT_NE(m.find(s), std::string::npos) << what << ": " << m;
}

TEST(BoundedErrors, IntegerInputsAreRefusedByAllThree) {
  for (const DType t : {DType::i8, DType::i16, DType::i32, DType::i64, DType::u8, DType::u16, DType::u32, DType::u64}) {
    const std::string name(sqdiff::dtype_name(t));
    std::vector<uint64_t> a(4, 1), b(4, 2);
    std::vector<uint64_t> states(kWords, kStateFill);
    expect_error(
        [&] {
          sqdiff::bounded_partial_sum_squared_difference({a.data(), t, {2}}, {b.data(), t, {2}}, DType::f64,
                                                         states.data());
        },
        {"bounded_partial_sum_squared_difference", name}, name);
    EXPECT_EQ(states, std::vector<uint64_t>(kWords, kStateFill)) << name;
    std::vector<uint64_t> into(kWords, 0);
    expect_error([&] { sqdiff::combine_bounded_partial_sums(t, into.data(), into.data(), 1); },
                 {"combine_bounded_partial_sums", name}, name);
    Array out = sentinel_array(DType::f64, {1}, dense_layout({1}));
    std::vector<uint8_t> flags(1, kFlagFill);
    expect_error(
        [&] { sqdiff::finish_bounded_partial_sums(t, into.data(), 2, false, out.mutable_view(), flags.data()); },
        {"finish_bounded_partial_sums", name}, name);
    EXPECT_TRUE(untouched(out)) << name;
    EXPECT_EQ(flags[0], kFlagFill) << name;
  }
}

// Two f32 outputs' states: the sums of (a - b)^2 for a = {1, 2}, b = 0.
std::vector<uint64_t> two_states(DType t = DType::f32) {
  const Array a = array_of(t, {1, 2}), b = array_of(t, {0});
  sqdiff::ReduceOptions none;
  none.axes = Shape{};
  std::vector<uint64_t> states(2 * kWords);
  sqdiff::bounded_partial_sum_squared_difference(a.view(), b.view(), t == DType::f64 ? DType::f64 : DType::f32,
                                                 states.data(), none);
  return states;
}

TEST(BoundedErrors, BadCallsWriteNothing) {
  std::vector<float> a(12, 1.0f), b(12, 2.0f);
  const ConstTensorView va{a.data(), DType::f32, {3, 4}}, vb{b.data(), DType::f32, {3, 4}};
  std::vector<uint64_t> states(3 * kWords + 1, kStateFill);
  const std::vector<uint64_t> before = states;
  sqdiff::ReduceOptions last;
  last.axes = Shape{1};
  const std::string op = "bounded_partial_sum_squared_difference";
  // Output types the sum of f32 inputs does not have, an invalid type.
  for (const DType o : {DType::f16, DType::bf16, DType::i64, DType::u8}) {
    expect_error([&] { sqdiff::bounded_partial_sum_squared_difference(va, vb, o, states.data(), last); },
                 {op, std::string(sqdiff::dtype_name(o))}, "output type");
  }
  expect_error(
      [&] { sqdiff::bounded_partial_sum_squared_difference(va, vb, static_cast<DType>(200), states.data(), last); },
      {op}, "invalid output type");
  expect_error(
      [&] {
        sqdiff::bounded_partial_sum_squared_difference({a.data(), static_cast<DType>(200), {3, 4}}, vb, DType::f32,
                                                       states.data(), last);
      },
      {op}, "invalid input type");
  // Inputs of different types, shapes that do not broadcast, bad axes, threads.
  std::vector<double> wide(12, 1.0);
  expect_error(
      [&] {
        sqdiff::bounded_partial_sum_squared_difference(va, {wide.data(), DType::f64, {3, 4}}, DType::f32, states.data(),
                                                       last);
      },
      {op}, "mixed types");
  expect_error(
      [&] {
        sqdiff::bounded_partial_sum_squared_difference(va, {b.data(), DType::f32, {4, 3}}, DType::f32, states.data(),
                                                       last);
      },
      {op}, "shapes");
  sqdiff::ReduceOptions repeated;
  repeated.axes = Shape{1, -1};
  expect_error([&] { sqdiff::bounded_partial_sum_squared_difference(va, vb, DType::f32, states.data(), repeated); },
               {op}, "axes");
  sqdiff::ReduceOptions negative_threads = last;
  negative_threads.threads = -1;
  expect_error(
      [&] { sqdiff::bounded_partial_sum_squared_difference(va, vb, DType::f32, states.data(), negative_threads); },
      {op}, "threads");
  // Null states or input; states overlapping an input.
  expect_error([&] { sqdiff::bounded_partial_sum_squared_difference(va, vb, DType::f32, nullptr, last); }, {op},
               "null states");
  expect_error(
      [&] {
        sqdiff::bounded_partial_sum_squared_difference({nullptr, DType::f32, {3, 4}}, vb, DType::f32, states.data(),
                                                       last);
      },
      {op}, "null input");
  std::vector<uint64_t> shared(3 * kWords + 8, 0);
  const std::vector<uint64_t> shared_before = shared;
  expect_error(
      [&] {
        sqdiff::bounded_partial_sum_squared_difference({shared.data(), DType::f32, {3, 4}}, vb, DType::f32,
                                                       shared.data() + 2, last);
      },
      {op, "overlaps"}, "overlap");
  EXPECT_EQ(shared, shared_before);
  EXPECT_EQ(states, before);

  // combine: negative count, null pointers, overlap without being the same.
  const std::vector<uint64_t> good = two_states();
  std::vector<uint64_t> into = good;
  const std::string combine = "combine_bounded_partial_sums";
  expect_error([&] { sqdiff::combine_bounded_partial_sums(DType::f32, into.data(), good.data(), -1); }, {combine, "-1"},
               "negative");
  expect_error([&] { sqdiff::combine_bounded_partial_sums(DType::f32, nullptr, good.data(), 2); }, {combine, "null"},
               "null into");
  expect_error([&] { sqdiff::combine_bounded_partial_sums(DType::f32, into.data(), nullptr, 2); }, {combine, "null"},
               "null from");
  expect_error([&] { sqdiff::combine_bounded_partial_sums(static_cast<DType>(200), into.data(), good.data(), 2); },
               {combine}, "invalid type");
  std::vector<uint64_t> shifted(3 * kWords, 0);
  std::copy(good.begin(), good.end(), shifted.begin());
  std::copy(good.begin(), good.begin() + kWords, shifted.begin() + 2 * kWords);
  const std::vector<uint64_t> shifted_before = shifted;
  expect_error([&] { sqdiff::combine_bounded_partial_sums(DType::f32, shifted.data() + kWords, shifted.data(), 2); },
               {combine, "overlap"}, "overlap");
  expect_error([&] { sqdiff::combine_bounded_partial_sums(DType::f32, shifted.data(), shifted.data() + 1, 2); },
               {combine, "overlap"}, "overlap by a word");
  EXPECT_EQ(shifted, shifted_before);
  EXPECT_EQ(into, good);
  // No outputs: nothing to do, null pointers allowed.
  EXPECT_NO_THROW(sqdiff::combine_bounded_partial_sums(DType::f32, nullptr, nullptr, 0));

  // finish: output types, non-dense output, negative count, null pointers.
  const std::string finish = "finish_bounded_partial_sums";
  std::vector<uint8_t> flags(3, kFlagFill);
  Array half = sentinel_array(DType::f16, {2}, dense_layout({2}));
  for (const bool mean : {false, true}) {
    expect_error(
        [&] {
          sqdiff::finish_bounded_partial_sums(DType::f32, good.data(), 1, mean, half.mutable_view(), flags.data());
        },
        {finish, "f16"}, "output type");
  }
  Array out = sentinel_array(DType::f32, {2}, dense_layout({2}));
  Array gapped = sentinel_array(DType::f32, {4}, dense_layout({4}));
  expect_error(
      [&] {
        sqdiff::finish_bounded_partial_sums(DType::f32, good.data(), 1, false, {gapped.origin(), DType::f32, {2}, {2}},
                                            flags.data());
      },
      {finish, "dense"}, "gapped output");
  expect_error(
      [&] {
        sqdiff::finish_bounded_partial_sums(DType::f32, good.data(), 1, false,
                                            {out.origin() + 4, DType::f32, {2}, {-1}}, flags.data());
      },
      {finish, "dense"}, "reversed output");
  expect_error(
      [&] { sqdiff::finish_bounded_partial_sums(DType::f32, good.data(), -1, true, out.mutable_view(), flags.data()); },
      {finish, "-1"}, "negative count");
  expect_error(
      [&] { sqdiff::finish_bounded_partial_sums(DType::f32, nullptr, 1, false, out.mutable_view(), flags.data()); },
      {finish, "null"}, "null states");
  expect_error(
      [&] { sqdiff::finish_bounded_partial_sums(DType::f32, good.data(), 1, false, out.mutable_view(), nullptr); },
      {finish, "null"}, "null flags");
  expect_error(
      [&] {
        sqdiff::finish_bounded_partial_sums(DType::f32, good.data(), 1, false, {nullptr, DType::f32, {2}},
                                            flags.data());
      },
      {finish, "null"}, "null output");
  expect_error(
      [&] {
        sqdiff::finish_bounded_partial_sums(DType::f32, good.data(), 1, false,
                                            {out.origin(), static_cast<DType>(200), {2}}, flags.data());
      },
      {finish}, "invalid output type");
  EXPECT_TRUE(untouched(half));
  EXPECT_TRUE(untouched(out));
  EXPECT_TRUE(untouched(gapped));
  EXPECT_EQ(flags, std::vector<uint8_t>(3, kFlagFill));
  // No outputs: nothing written, nothing undecided, null pointers allowed.
  EXPECT_EQ(sqdiff::finish_bounded_partial_sums(DType::f32, nullptr, 1, false, {nullptr, DType::f32, {0, 3}}, nullptr),
            0);

  // The same states as into and from: each doubled (1 + 1, 4 + 4).
  sqdiff::combine_bounded_partial_sums(DType::f32, into.data(), into.data(), 2);
  const Finished doubled = finish_bounded(DType::f32, into, 1, false, DType::f32, {2});
  EXPECT_EQ(doubled.left, 0);
  EXPECT_EQ(doubled.out.bits_at(0), std::bit_cast<uint32_t>(2.0f));
  EXPECT_EQ(doubled.out.bits_at(1), std::bit_cast<uint32_t>(8.0f));
}

// What every function does with a bad second state (`bad` replaces output
// 1's words): an Error whose message names the function, that state and
// holds `fragment`, with nothing written (finish's output and flags,
// combine's `into`, the bad state as into or as from).
void expect_refused(DType t, const std::vector<uint64_t>& bad, const std::string& fragment, const std::string& what) {
  ASSERT_EQ(bad.size(), kWords);
  const std::vector<uint64_t> good = two_states(t);
  std::vector<uint64_t> mixed = good;
  std::copy(bad.begin(), bad.end(), mixed.begin() + static_cast<std::ptrdiff_t>(kWords));
  const std::string context = std::string(sqdiff::dtype_name(t)) + ", " + what;
  for (const bool mean : {false, true}) {
    const DType o = output_types(t, mean).back();
    Array out = sentinel_array(o, {2}, dense_layout({2}));
    std::vector<uint8_t> flags(2, kFlagFill);
    const std::string m = sqdiff_test::error_message(
        [&] { sqdiff::finish_bounded_partial_sums(t, mixed.data(), 1, mean, out.mutable_view(), flags.data()); });
    EXPECT_NE(m.find("finish_bounded_partial_sums: state 1 "), std::string::npos) << context << ": " << m;
    EXPECT_NE(m.find(fragment), std::string::npos) << context << ": " << m;
    EXPECT_TRUE(untouched(out)) << context;
    EXPECT_EQ(flags, std::vector<uint8_t>(2, kFlagFill)) << context;
  }
  for (const bool bad_into : {false, true}) {
    std::vector<uint64_t> into = bad_into ? mixed : good;
    const std::vector<uint64_t> into_before = into;
    const std::vector<uint64_t>& from = bad_into ? good : mixed;
    const std::string m =
        sqdiff_test::error_message([&] { sqdiff::combine_bounded_partial_sums(t, into.data(), from.data(), 2); });
    const std::string name = bad_into ? "into's state 1 " : "from's state 1 ";
    EXPECT_NE(m.find("combine_bounded_partial_sums: " + name), std::string::npos) << context << ": " << m;
    EXPECT_NE(m.find(fragment), std::string::npos) << context << ": " << m;
    EXPECT_EQ(into, into_before) << context << ": combine_bounded_partial_sums wrote into its states";
  }
}

class BoundedBadStates : public ::testing::TestWithParam<DType> {};

TEST_P(BoundedBadStates, AreAnErrorNeverASum) {
  const DType t = GetParam();
  const std::vector<uint64_t> two = two_states(t);
  const std::vector<uint64_t> state(two.begin() + static_cast<std::ptrdiff_t>(kWords), two.end());
  // The tag word's fields (reduce/bounded_state.cpp): the mark "SQB" in
  // bits 63-40, the layout's version in 39-32, the input type in 15-8, the
  // flags in 7-0; the sum 4 (a = 2) in the first word.
  const uint64_t tag = state[3];
  ASSERT_EQ(tag >> 40, 0x535142u);
  ASSERT_EQ(tag >> 32 & 0xFF, 1u);
  ASSERT_EQ(tag >> 8 & 0xFF, static_cast<uint64_t>(t));
  ASSERT_EQ(tag & 0xFF, 0u);
  ASSERT_EQ(std::bit_cast<double>(state[0]), 4.0);
  const auto with = [&](std::size_t word, uint64_t value) {
    std::vector<uint64_t> changed = state;
    changed[word] = value;
    return changed;
  };
  const auto with_value = [&](std::size_t word, double value) { return with(word, std::bit_cast<uint64_t>(value)); };
  const std::string not_a_sum = "holds values that are not a bounded sum of squares";
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();

  expect_refused(t, std::vector<uint64_t>(kWords, 0), "lacks the state's mark", "zeroed words");
  expect_refused(t, std::vector<uint64_t>(kWords, kStateFill), "lacks the state's mark", "garbage");
  expect_refused(t, with(3, tag ^ uint64_t{1} << 40), "lacks the state's mark", "another mark");
  expect_refused(t, with(3, tag ^ uint64_t{0x535144} << 40 ^ uint64_t{0x535142} << 40), "lacks the state's mark",
                 "the exact states' mark");
  expect_refused(t, with(3, (tag & ~(uint64_t{0xFF} << 32)) | uint64_t{2} << 32), "layout version 2",
                 "a later version");
  expect_refused(t, with(3, tag & ~(uint64_t{0xFF} << 32)), "layout version 0", "version 0");
  for (const DType other : kAllTypes) {
    if (other == t) continue;
    expect_refused(t, with(3, (tag & ~uint64_t{0xFF00}) | static_cast<uint64_t>(other) << 8),
                   "is a state of " + std::string(sqdiff::dtype_name(other)) + " inputs, not of " +
                       std::string(sqdiff::dtype_name(t)) + " inputs",
                   "another input type's tag");
  }
  expect_refused(t, with(3, (tag & ~uint64_t{0xFF00}) | uint64_t{0xEE} << 8), "type 238 inputs", "an unknown type");
  expect_refused(t, with(3, tag | 8), "unknown bits", "an unknown flag");
  expect_refused(t, with(3, tag | 0x80), "unknown bits", "the top flag");
  expect_refused(t, with(3, tag | uint64_t{1} << 16), "unknown bits", "bit 16");
  expect_refused(t, with(3, tag | uint64_t{1} << 31), "unknown bits", "bit 31");
  // Flags with a sum beside them.
  for (const uint64_t flag : {1, 2, 4}) {
    expect_refused(t, with(3, tag | flag), "is flagged but holds a sum",
                   "flag " + std::to_string(flag) + " with a sum");
    std::vector<uint64_t> flagged_bound = with(3, tag | flag);
    flagged_bound[0] = 0;
    flagged_bound[2] = std::bit_cast<uint64_t>(1.0);
    expect_refused(t, flagged_bound, "is flagged but holds a sum", "flag " + std::to_string(flag) + " with a bound");
    std::vector<uint64_t> flagged_low = with(3, tag | flag);
    flagged_low[0] = 0;
    flagged_low[1] = std::bit_cast<uint64_t>(-0.0);
    expect_refused(t, flagged_low, "is flagged but holds a sum",
                   "flag " + std::to_string(flag) + " with a -0 low part");
  }
  // Values no sum of squares has.
  expect_refused(t, with_value(0, -4.0), not_a_sum, "a negative high part");
  expect_refused(t, with_value(0, -0.0), not_a_sum, "a -0 high part");
  expect_refused(t, with_value(0, nan), not_a_sum, "a NaN high part");
  expect_refused(t, with_value(0, inf), not_a_sum, "an infinite high part");
  expect_refused(t, with_value(1, nan), not_a_sum, "a NaN low part");
  expect_refused(t, with_value(1, -inf), not_a_sum, "an infinite low part");
  expect_refused(t, with_value(2, -1.0), not_a_sum, "a negative bound");
  expect_refused(t, with_value(2, nan), not_a_sum, "a NaN bound");
  expect_refused(t, with_value(2, inf), not_a_sum, "an infinite bound");
  std::vector<uint64_t> low_only = with_value(0, 0.0);
  low_only[1] = std::bit_cast<uint64_t>(0x1p-60);
  expect_refused(t, low_only, not_a_sum, "hi 0 with lo != 0");
  // Sums no input of a half or single type reaches: 2^63 terms of at most
  // (2 * largest finite)^2 each (f64's sums beyond its range are flagged, so
  // any finite value is an f64 state's).
  if (t != DType::f64) {
    const std::string too_large = "larger than any " + std::string(sqdiff::dtype_name(t)) + " inputs can give";
    expect_refused(t, with_value(0, 1e300), too_large, "a high part of 1e300");
    expect_refused(t, with_value(2, 1e300), too_large, "a bound of 1e300");
    const double largest = t == DType::f16 ? 65504.0 : t == DType::bf16 ? 0x1.FEp127 : 0x1.FFFFFEp127;
    const double limit = std::ldexp((2 * largest) * (2 * largest), 64);
    expect_refused(t, with_value(0, std::nextafter(limit, inf)), too_large, "a high part just past the limit");
    // At the limit itself the state is one: finish rounds it (to inf in the input type).
    std::vector<uint64_t> at_limit = two_states(t);
    at_limit[kWords] = std::bit_cast<uint64_t>(limit);
    Array out = sentinel_array(DType::f64, {2}, dense_layout({2}));
    std::vector<uint8_t> flags(2, kFlagFill);
    sqdiff::finish_bounded_partial_sums(t, at_limit.data(), 1, false, out.mutable_view(), flags.data());
    EXPECT_EQ(out.bits_at(1), std::bit_cast<uint64_t>(limit));
  }
  // A state of another input type, whole: f32's passed as f16 and so on.
  const DType other = t == DType::f32 ? DType::f16 : DType::f32;
  const std::vector<uint64_t> theirs = two_states(other);
  expect_refused(t, std::vector<uint64_t>(theirs.begin() + static_cast<std::ptrdiff_t>(kWords), theirs.end()),
                 "is a state of " + std::string(sqdiff::dtype_name(other)) + " inputs", "another type's state");
  // An exact state's words read as bounded states (f16's are 4 words too).
  std::vector<uint64_t> exact(sqdiff::partial_sum_words(DType::f16));
  const Array one = array_of(DType::f16, {1}), zero = array_of(DType::f16, {0});
  sqdiff::partial_sum_squared_difference(one.view(), zero.view(), exact.data());
  expect_refused(t, exact, "lacks the state's mark", "an exact state");
}

INSTANTIATE_TEST_SUITE_P(EveryFloatType, BoundedBadStates, ::testing::ValuesIn(kFloatTypes), type_param_name);

// A state whose low part is not within half an ulp of its high part, so that
// hi + lo is negative or far from hi: not what the library writes (its sums
// are double-doubles of non-negative values). Read as given, {1, -3} would
// finish as -2: a negative sum of squares.
TEST(BoundedErrors, StatesThatAreNotDoubleDoublesAreRefused) {
  const std::vector<uint64_t> two = two_states(DType::f32);
  std::vector<uint64_t> state(two.begin() + static_cast<std::ptrdiff_t>(kWords), two.end());
  state[0] = std::bit_cast<uint64_t>(1.0);
  state[1] = std::bit_cast<uint64_t>(-3.0);
  state[2] = 0;
  expect_refused(DType::f32, state, "state 1", "hi 1, lo -3");
  state[1] = std::bit_cast<uint64_t>(0.75);
  expect_refused(DType::f32, state, "state 1", "hi 1, lo 0.75");
}

}  // namespace
