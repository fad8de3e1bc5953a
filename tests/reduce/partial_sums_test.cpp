// The exact partial states of include/sqdiff/partial_sums.hpp (SPEC 7, the
// Dask layer's combination):
//  - partial_sum_words: 4 words for f16 and the integers, 11 for bf16 and
//    f32, 68 for f64, as the header documents;
//  - a reduction split into random chunks along its reduced axes, each
//    chunk's partial state computed apart (from strided views into the whole
//    array), the states combined in a random order or as a random tree, and
//    finished: bit for bit the single call's result (and the GMP oracle's),
//    sums and means, every input type and output type, an integer sum beyond
//    its output an Error with nothing written;
//  - the errors of each function, with nothing written;
//  - states are checked (the tag word's mark, layout version and format,
//    flags and range): zeroed, garbage, other versions', other types',
//    negative and inconsistent states are an Error naming the state, never
//    summed; combining past a state's capacity is an Error, never a wrapped
//    sum, exactly where the GMP oracle says the capacity is reached.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "reduce/gmp_oracle.hpp"
#include "reduce/reduce_test_support.hpp"
#include "sqdiff/partial_sums.hpp"
#include "test_support.hpp"

namespace {

namespace gmp = sqdiff_test::gmp;
using namespace sqdiff_test::reduce;

TEST(PartialSums, WordsPerStateAsDocumented) {
  EXPECT_EQ(sqdiff::partial_sum_words(DType::f16), 4u);
  EXPECT_EQ(sqdiff::partial_sum_words(DType::bf16), 11u);
  EXPECT_EQ(sqdiff::partial_sum_words(DType::f32), 11u);
  EXPECT_EQ(sqdiff::partial_sum_words(DType::f64), 68u);
  for (const DType t : {DType::i8, DType::i16, DType::i32, DType::i64, DType::u8, DType::u16, DType::u32, DType::u64}) {
    EXPECT_EQ(sqdiff::partial_sum_words(t), 4u) << sqdiff::dtype_name(t);
  }
  const std::string m = sqdiff_test::error_message([] { sqdiff::partial_sum_words(static_cast<DType>(200)); });
  EXPECT_NE(m.find("partial_sum_words"), std::string::npos) << m;
}

// Cuts [0, n) into 1-6 random pieces (some may be empty).
std::vector<std::pair<int64_t, int64_t>> random_pieces(int64_t n, std::mt19937_64& rng) {
  std::vector<int64_t> cuts{0, n};
  const auto extra = rng() % 6;
  for (std::size_t i = 0; i < extra; ++i) cuts.push_back(n == 0 ? 0 : static_cast<int64_t>(rng() % static_cast<uint64_t>(n + 1)));
  std::sort(cuts.begin(), cuts.end());
  std::vector<std::pair<int64_t, int64_t>> pieces;
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i) pieces.emplace_back(cuts[i], cuts[i + 1]);
  return pieces;
}

// Combines states in a random order: either folding them one by one into a
// random first one, or pairing random neighbours up as a tree.
std::vector<uint64_t> combine_randomly(DType t, std::vector<std::vector<uint64_t>> states, int64_t outputs,
                                       std::mt19937_64& rng) {
  std::shuffle(states.begin(), states.end(), rng);
  if (rng() % 2 == 0) {
    for (std::size_t i = 1; i < states.size(); ++i) sqdiff::combine_partial_sums(t, states[0].data(), states[i].data(), outputs);
    return states[0];
  }
  while (states.size() > 1) {
    const std::size_t i = rng() % (states.size() - 1);
    sqdiff::combine_partial_sums(t, states[i].data(), states[i + 1].data(), outputs);
    states.erase(states.begin() + static_cast<std::ptrdiff_t>(i) + 1);
  }
  return states[0];
}

struct ChunkCase {
  Shape shape;                 // of a (b is broadcast from b_shape)
  Shape b_shape;
  std::optional<Shape> axes;
  std::size_t split_dim;       // a reduced dim of a to cut into chunks
};

class ChunkedSums : public ::testing::TestWithParam<DType> {};

TEST_P(ChunkedSums, CombineToTheSingleCallsBits) {
  const DType t = GetParam();
  std::mt19937_64 rng(4242 + static_cast<int>(t));
  const std::vector<ChunkCase> cases = {
      {{5000}, {5000}, std::nullopt, 0},        {{300, 7}, {7}, Shape{0}, 0},        {{6, 700}, {6, 700}, Shape{-1}, 1},
      {{4, 9, 60}, {9, 1}, Shape{0, 2}, 2},     {{4, 9, 60}, {9, 1}, Shape{0, 2}, 0}, {{2, 3, 0, 4}, {4}, Shape{2}, 2},
      {{50, 40}, {1}, std::nullopt, 1},
  };
  for (const ChunkCase& c : cases) {
    for (int repeat = 0; repeat < 4; ++repeat) {
      ValueMix mix;
      mix.specials = repeat == 3 ? 0.002 : 0;
      mix.extremes = repeat >= 2 ? 0.05 : 0;
      mix.full_range_integers = repeat == 1;
      // a in a reversed or gapped layout: chunks are views into it.
      const Array a = random_array(t, c.shape, layout_of(repeat % 2 == 0 ? LayoutKind::reversed : LayoutKind::gapped, c.shape, rng, false),
                                   rng, mix);
      const Array b = random_array(t, c.b_shape, dense_layout(c.b_shape), rng, mix);
      sqdiff::ReduceOptions options;
      options.axes = c.axes;
      options.threads = 1 + static_cast<int>(rng() % 3);
      const gmp::ExactReduction exact = gmp::exact_reduction(a.input(), b.input(), {}, c.axes, false);
      const int64_t outputs = count_of(exact.out_shape);
      const std::size_t words = sqdiff::partial_sum_words(t);
      // Partial states of the chunks along split_dim, then combined.
      std::vector<std::vector<uint64_t>> states;
      for (const auto& [begin, end] : random_pieces(c.shape[c.split_dim], rng)) {
        Shape piece = c.shape;
        piece[c.split_dim] = end - begin;
        const auto* origin = a.origin() + begin * a.layout.strides[c.split_dim] * static_cast<int64_t>(gmp::size_of(t));
        std::vector<uint64_t> state(static_cast<std::size_t>(outputs) * words + 1, 0x5A5A5A5A5A5A5A5Au);
        // b is cut alike where it has the dim (not as a 1); otherwise it
        // broadcasts over every chunk the same way.
        sqdiff::ConstTensorView vb = b.view();
        const auto b_dim = static_cast<int64_t>(c.split_dim) - static_cast<int64_t>(c.shape.size() - c.b_shape.size());
        if (b_dim >= 0 && c.b_shape[static_cast<std::size_t>(b_dim)] != 1) {
          const int64_t step = b.layout.strides[static_cast<std::size_t>(b_dim)];
          Shape b_piece = c.b_shape;
          b_piece[static_cast<std::size_t>(b_dim)] = end - begin;
          vb = {b.origin() + begin * step * static_cast<int64_t>(gmp::size_of(t)), t, b_piece, b.layout.strides};
        }
        sqdiff::partial_sum_squared_difference({origin, t, piece, a.layout.strides}, vb, state.data(), options);
        EXPECT_EQ(state.back(), 0x5A5A5A5A5A5A5A5Au) << "a word past the states was written";
        state.pop_back();
        states.push_back(state);
      }
      const std::vector<uint64_t> combined = combine_randomly(t, states, outputs, rng);
      for (const bool mean : {false, true}) {
        for (const DType o : output_types(t, mean)) {
          const std::string what = std::string(sqdiff::dtype_name(t)) + " -> " + std::string(sqdiff::dtype_name(o)) +
                                   (mean ? " mean" : " sum") + ", a " + text(c.shape) + " cut along " +
                                   std::to_string(c.split_dim) + " into " + std::to_string(states.size());
          Array one = sentinel_array(o, exact.out_shape, dense_layout(exact.out_shape));
          Array pieces = sentinel_array(o, exact.out_shape, dense_layout(exact.out_shape));
          const std::vector<gmp::Expected> expected = gmp::round_reduction(exact, mean, o);
          const auto single = [&] {
            if (mean) sqdiff::mean_squared_difference(a.view(), b.view(), one.mutable_view(), options);
            else sqdiff::sum_squared_difference(a.view(), b.view(), one.mutable_view(), options);
          };
          const auto finish = [&] {
            sqdiff::finish_partial_sums(t, combined.data(), exact.count, mean, pieces.mutable_view());
          };
          if (any_error(expected)) {
            EXPECT_THROW(single(), sqdiff::Error) << what;
            EXPECT_THROW(finish(), sqdiff::Error) << what;
            EXPECT_TRUE(untouched(pieces)) << what;
            continue;
          }
          single();
          finish();
          EXPECT_EQ(one.bytes, pieces.bytes) << what;
          EXPECT_TRUE(output_matches(pieces, expected)) << what;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryInputType, ChunkedSums, ::testing::ValuesIn(kAllTypes), type_param_name);

TEST(PartialSums, ErrorsWriteNothing) {
  std::vector<float> a(12, 1.0f), b(12, 2.0f);
  const sqdiff::ConstTensorView va{a.data(), DType::f32, {3, 4}}, vb{b.data(), DType::f32, {3, 4}};
  const std::size_t words = sqdiff::partial_sum_words(DType::f32);
  std::vector<uint64_t> states(3 * words, 0x1111);
  const std::vector<uint64_t> before = states;
  sqdiff::ReduceOptions last;
  last.axes = Shape{1};
  const auto message = [](auto&& f) { return sqdiff_test::error_message(f); };
  // Bad axes, mismatched shapes, types, threads, null states.
  sqdiff::ReduceOptions repeated;
  repeated.axes = Shape{1, -1};
  EXPECT_NE(message([&] { sqdiff::partial_sum_squared_difference(va, vb, states.data(), repeated); }).find("partial_sum_squared_difference"),
            std::string::npos);
  sqdiff::ReduceOptions out_of_range;
  out_of_range.axes = Shape{2};
  message([&] { sqdiff::partial_sum_squared_difference(va, vb, states.data(), out_of_range); });
  message([&] { sqdiff::partial_sum_squared_difference(va, {b.data(), DType::f32, {4, 3}}, states.data(), last); });
  message([&] { sqdiff::partial_sum_squared_difference(va, {b.data(), DType::f64, {3, 2}}, states.data(), last); });
  sqdiff::ReduceOptions negative_threads = last;
  negative_threads.threads = -1;
  message([&] { sqdiff::partial_sum_squared_difference(va, vb, states.data(), negative_threads); });
  message([&] { sqdiff::partial_sum_squared_difference(va, vb, nullptr, last); });
  message([&] { sqdiff::partial_sum_squared_difference({nullptr, DType::f32, {3, 4}}, vb, states.data(), last); });
  // The states overlapping an input.
  std::vector<uint64_t> shared(3 * words + 8, 0);
  const std::string overlap = message([&] {
    sqdiff::partial_sum_squared_difference({shared.data(), DType::f32, {3, 4}}, vb, shared.data() + 2, last);
  });
  EXPECT_NE(overlap.find("overlaps"), std::string::npos) << overlap;
  EXPECT_EQ(states, before);
  // finish_partial_sums: an output type not allowed, strides that are not
  // dense, a negative count, null pointers.
  sqdiff::partial_sum_squared_difference(va, vb, states.data(), last);
  const std::vector<uint64_t> good = states;
  Array out = sentinel_array(DType::f16, {3}, dense_layout({3}));
  const std::string type = message([&] { sqdiff::finish_partial_sums(DType::f32, states.data(), 4, false, out.mutable_view()); });
  EXPECT_NE(type.find("f16"), std::string::npos) << type;
  Array f32_out = sentinel_array(DType::f32, {3}, dense_layout({3}));
  message([&] {
    sqdiff::finish_partial_sums(DType::f32, states.data(), 4, false, {f32_out.origin(), DType::f32, {3}, {-1}});
  });
  message([&] { sqdiff::finish_partial_sums(DType::f32, states.data(), -1, true, f32_out.mutable_view()); });
  message([&] { sqdiff::finish_partial_sums(DType::f32, nullptr, 4, false, f32_out.mutable_view()); });
  message([&] { sqdiff::finish_partial_sums(DType::f32, states.data(), 4, false, {nullptr, DType::f32, {3}}); });
  message([&] { sqdiff::finish_partial_sums(DType::i32, states.data(), 4, true, {f32_out.origin(), DType::i64, {3}}); });
  EXPECT_TRUE(untouched(out));
  EXPECT_TRUE(untouched(f32_out));
  EXPECT_EQ(states, good);
  // combine_partial_sums: a negative count, null pointers, states that
  // overlap without being the same.
  std::vector<uint64_t> twice = good;
  message([&] { sqdiff::combine_partial_sums(DType::f32, twice.data(), good.data(), -1); });
  message([&] { sqdiff::combine_partial_sums(DType::f32, nullptr, good.data(), 3); });
  message([&] { sqdiff::combine_partial_sums(DType::f32, twice.data(), nullptr, 3); });
  std::vector<uint64_t> shifted(4 * words, 0);
  std::copy(good.begin(), good.end(), shifted.begin());
  const std::vector<uint64_t> shifted_before = shifted;
  const std::string overlapping =
      message([&] { sqdiff::combine_partial_sums(DType::f32, shifted.data() + words, shifted.data(), 2); });
  EXPECT_NE(overlapping.find("overlap"), std::string::npos) << overlapping;
  EXPECT_EQ(shifted, shifted_before);
  EXPECT_EQ(twice, good);
  // The same states as into and from: each doubled.
  sqdiff::combine_partial_sums(DType::f32, twice.data(), twice.data(), 3);
  Array doubled = sentinel_array(DType::f32, {3}, dense_layout({3}));
  sqdiff::finish_partial_sums(DType::f32, twice.data(), 8, false, doubled.mutable_view());
  const std::vector<gmp::Expected> eight(3, gmp::Expected{false, false, std::bit_cast<uint32_t>(8.0f)});
  EXPECT_TRUE(output_matches(doubled, eight));
  // A mean over no terms is NaN; a sum over none is +0: the state of an
  // empty sum comes from partial_sum_squared_difference (zeroed words are
  // not a state).
  std::vector<uint64_t> empty_state(words, 0);
  sqdiff::partial_sum_squared_difference({nullptr, DType::f32, {0}}, {nullptr, DType::f32, {0}}, empty_state.data());
  Array nan_out = sentinel_array(DType::f32, {}, dense_layout({}));
  sqdiff::finish_partial_sums(DType::f32, empty_state.data(), 0, true, nan_out.mutable_view());
  gmp::Expected nan;
  nan.nan = true;
  EXPECT_TRUE(output_matches(nan_out, {nan}));
  Array zero_out = sentinel_array(DType::f32, {}, dense_layout({}));
  sqdiff::finish_partial_sums(DType::f32, empty_state.data(), 0, false, zero_out.mutable_view());
  EXPECT_TRUE(output_matches(zero_out, {gmp::Expected{}}));
}

// The bits of the two values of type `t` whose difference has the largest
// square the type gives: its largest and lowest finite values (for f64,
// whose square of that is beyond its range and so +inf, the largest value
// below 2^512 and 0: a square just below 2^1024).
std::pair<uint64_t, uint64_t> largest_square_pair(DType t) {
  switch (t) {
    case DType::f16: return {0x7BFF, 0xFBFF};
    case DType::bf16: return {0x7F7F, 0xFF7F};
    case DType::f32: return {0x7F7FFFFF, 0xFF7FFFFF};
    case DType::f64: return {std::bit_cast<uint64_t>(0x1.fffffffffffffp511), 0};
    case DType::i8: return {0x7F, 0x80};
    case DType::i16: return {0x7FFF, 0x8000};
    case DType::i32: return {0x7FFFFFFF, 0x80000000};
    case DType::i64: return {0x7FFFFFFFFFFFFFFF, 0x8000000000000000};
    case DType::u8: return {0xFF, 0};
    case DType::u16: return {0xFFFF, 0};
    case DType::u32: return {0xFFFFFFFF, 0};
    default: return {~uint64_t{0}, 0};
  }
}

// A state's capacity as a power of two of the sum's value: 2^(64 limbs - 1)
// units of the format's lowest bit (the top bit is two's complement's sign),
// for exact_sum.cpp's formats: 3 limbs from 2^0 (integers), 3 from 2^-48
// (f16), 10 from 2^-266 (bf16), 10 from 2^-298 (f32), 67 from 2^-2148 (f64).
int capacity_exponent(DType t) {
  switch (t) {
    case DType::f16: return 64 * 3 - 1 - 48;
    case DType::bf16: return 64 * 10 - 1 - 266;
    case DType::f32: return 64 * 10 - 1 - 298;
    case DType::f64: return 64 * 67 - 1 - 2148;
    default: return 64 * 3 - 1;
  }
}

class StateCapacity : public ::testing::TestWithParam<DType> {};

// A state holding the type's largest square, combined with itself over and
// over: it doubles exactly until the sum would reach the capacity, and then
// combine_partial_sums raises instead of wrapping into a negative sum (as it
// once did: a u64 sum of squares finished as -3.4e38), leaving the states
// as they were. The header's promise, room for 2^63 of the largest squares,
// holds for every type.
TEST_P(StateCapacity, CombiningPastItIsAnErrorNotAWrap) {
  const DType t = GetParam();
  const auto [a_bits, b_bits] = largest_square_pair(t);
  uint64_t a_store = 0, b_store = 0;
  gmp::store_bits(&a_store, gmp::size_of(t), a_bits);
  gmp::store_bits(&b_store, gmp::size_of(t), b_bits);
  const sqdiff::ConstTensorView a{&a_store, t, {1}}, b{&b_store, t, {1}};
  const gmp::ExactReduction exact = gmp::exact_reduction({t, &a_store, {1}, {1}}, {t, &b_store, {1}, {1}}, {},
                                                         std::nullopt, false);
  const gmp::ExactSum& one = exact.sums.at(0);
  ASSERT_TRUE(!one.nan && !one.positive_infinity && sgn(one.sum) > 0);
  // value = one.sum * 2^-scale stays below 2^capacity while doubled d times
  // as long as bits(one.sum) + d <= capacity + scale.
  const auto bits = static_cast<int>(mpz_sizeinbase(one.sum.get_mpz_t(), 2));
  const int doublings = capacity_exponent(t) + exact.scale - bits;
  EXPECT_GE(doublings, 63) << sqdiff::dtype_name(t) << ": fewer than 2^63 largest squares fit";

  const std::size_t words = sqdiff::partial_sum_words(t);
  std::vector<uint64_t> state(words);
  sqdiff::partial_sum_squared_difference(a, b, state.data());
  int done = 0;
  std::string overflow;
  for (; done <= doublings; ++done) {
    const std::vector<uint64_t> before = state;
    try {
      sqdiff::combine_partial_sums(t, state.data(), state.data(), 1);
    } catch (const sqdiff::Error& e) {
      overflow = e.what();
      EXPECT_EQ(state, before) << "a refused combination wrote into its states";
      break;
    }
  }
  EXPECT_EQ(done, doublings) << sqdiff::dtype_name(t);
  EXPECT_NE(overflow.find("reaches 2^" + std::to_string(capacity_exponent(t))), std::string::npos) << overflow;
  EXPECT_NE(overflow.find("nothing was written"), std::string::npos) << overflow;

  // The fullest state finishes as the exact sum: the square times 2^doublings.
  gmp::ExactSum fullest = one;
  fullest.sum <<= static_cast<mp_bitcnt_t>(doublings);
  Array out = sentinel_array(DType::f64, {}, dense_layout({}));
  sqdiff::finish_partial_sums(t, state.data(), 1, false, out.mutable_view());
  EXPECT_TRUE(output_matches(out, {gmp::round_sum(fullest, exact.scale, false, 1, DType::f64)}));

  // Several outputs: one that would overflow leaves every one untouched.
  std::vector<uint64_t> two(2 * words);
  sqdiff::partial_sum_squared_difference(a, b, two.data());
  std::copy(state.begin(), state.end(), two.begin() + static_cast<std::ptrdiff_t>(words));
  const std::vector<uint64_t> two_before = two;
  EXPECT_THROW(sqdiff::combine_partial_sums(t, two.data(), two.data(), 2), sqdiff::Error);
  EXPECT_EQ(two, two_before);
}

INSTANTIATE_TEST_SUITE_P(EveryInputType, StateCapacity, ::testing::ValuesIn(kAllTypes), type_param_name);

// A state of `t` with terms: the sums of (a - b)^2 for a = 1, 2 and b = 0
// (states {1, 4}: two outputs).
std::vector<uint64_t> two_states(DType t) {
  uint64_t a_store[2] = {0, 0}, b_store = 0;
  const std::size_t size = gmp::size_of(t);
  const uint64_t ones[] = {0x3C00, 0x3F80, 0x3F800000, std::bit_cast<uint64_t>(1.0)};
  const uint64_t twos[] = {0x4000, 0x4000, 0x40000000, std::bit_cast<uint64_t>(2.0)};
  const bool is_float = gmp::is_float(t);
  const auto index = static_cast<std::size_t>(t);
  gmp::store_bits(reinterpret_cast<unsigned char*>(a_store), size, is_float ? ones[index] : 1);
  gmp::store_bits(reinterpret_cast<unsigned char*>(a_store) + size, size, is_float ? twos[index] : 2);
  std::vector<uint64_t> states(2 * sqdiff::partial_sum_words(t));
  sqdiff::ReduceOptions none;
  none.axes = Shape{};
  sqdiff::partial_sum_squared_difference({a_store, t, {2}}, {&b_store, t, {}}, states.data(), none);
  return states;
}

// What every function does with a bad second state (`bad` replaces output
// 1's words): an Error whose message names that state and holds `fragment`,
// with nothing written: not the output of finish_partial_sums, not output 0
// of `into` in combine_partial_sums (the bad state as `into` or as `from`).
void expect_refused(DType t, const std::vector<uint64_t>& bad, const std::string& fragment, const std::string& what) {
  const std::size_t words = sqdiff::partial_sum_words(t);
  ASSERT_EQ(bad.size(), words);
  const std::vector<uint64_t> good = two_states(t);
  std::vector<uint64_t> mixed = good;
  std::copy(bad.begin(), bad.end(), mixed.begin() + static_cast<std::ptrdiff_t>(words));
  const std::string context = std::string(sqdiff::dtype_name(t)) + ", " + what;

  for (const bool mean : {false, true}) {
    const DType o = output_types(t, mean).back();
    Array out = sentinel_array(o, {2}, dense_layout({2}));
    std::string m;
    try {
      sqdiff::finish_partial_sums(t, mixed.data(), 1, mean, out.mutable_view());
    } catch (const sqdiff::Error& e) {
      m = e.what();
    }  // anything else (a std::logic_error) escapes and fails the test
    EXPECT_NE(m.find("finish_partial_sums: state 1 "), std::string::npos) << context << ": " << m;
    EXPECT_NE(m.find(fragment), std::string::npos) << context << ": " << m;
    EXPECT_NE(m.find("must come from partial_sum_squared_difference"), std::string::npos) << context << ": " << m;
    EXPECT_TRUE(untouched(out)) << context;
  }
  for (const bool bad_into : {false, true}) {
    std::vector<uint64_t> into = bad_into ? mixed : good;
    const std::vector<uint64_t> into_before = into;
    const std::vector<uint64_t>& from = bad_into ? good : mixed;
    std::string m;
    try {
      sqdiff::combine_partial_sums(t, into.data(), from.data(), 2);
    } catch (const sqdiff::Error& e) {
      m = e.what();
    }
    const std::string name = bad_into ? "into's state 1 " : "from's state 1 ";
    EXPECT_NE(m.find("combine_partial_sums: " + name), std::string::npos) << context << ": " << m;
    EXPECT_NE(m.find(fragment), std::string::npos) << context << ": " << m;
    EXPECT_EQ(into, into_before) << context << ": combine_partial_sums wrote into its states";
  }
}

// A type whose states have as many words as t's but another format (none
// for f64, whose size is its own).
std::optional<DType> same_size_other_format(DType t) {
  switch (t) {
    case DType::f32: return DType::bf16;
    case DType::bf16: return DType::f32;
    case DType::f16: return DType::i16;
    case DType::f64: return std::nullopt;
    default: return DType::f16;
  }
}

class BadStates : public ::testing::TestWithParam<DType> {};

TEST_P(BadStates, AreAnErrorNeverASum) {
  const DType t = GetParam();
  const std::size_t words = sqdiff::partial_sum_words(t);
  const std::vector<uint64_t> two = two_states(t);
  const std::vector<uint64_t> state(two.begin() + static_cast<std::ptrdiff_t>(words), two.end());
  const std::size_t tag = words - 1;
  // The tag word's fields (exact_sum.hpp): the mark in bits 63-40, the
  // layout's version in 39-32, the flags in 7-0.
  ASSERT_EQ(state[tag] >> 40, 0x535144u);
  ASSERT_EQ((state[tag] >> 32) & 0xFF, 1u);
  ASSERT_EQ(state[tag] & 0xFF, 8u | 16u);  // terms were added; not every one -0
  const auto with = [&](std::size_t word, uint64_t value) {
    std::vector<uint64_t> changed = state;
    changed[word] = value;
    return changed;
  };

  expect_refused(t, std::vector<uint64_t>(words, 0), "is not a partial state", "zeroed words");
  expect_refused(t, std::vector<uint64_t>(words, 0x5A5A5A5A5A5A5A5Au), "is not a partial state", "garbage");
  expect_refused(t, with(tag, 8 | 16), "is not a partial state", "the old layout's flags word");
  expect_refused(t, with(tag, state[tag] ^ (uint64_t{1} << 40)), "is not a partial state", "another mark");
  expect_refused(t, with(tag, (state[tag] & ~(uint64_t{0xFF} << 32)) | uint64_t{2} << 32), "layout version 2",
                 "a later version");
  expect_refused(t, with(tag, state[tag] | 0x20), "unknown flag bits", "an unknown flag");
  expect_refused(t, with(tag, state[tag] | 4), "flagged -inf", "-inf");
  expect_refused(t, with(tag, state[tag] & ~uint64_t{16}), "inconsistent flags", "only -0 terms");
  expect_refused(t, with(tag, state[tag] & ~uint64_t{8}), "inconsistent flags", "not-only -0 terms without terms");
  expect_refused(t, with(tag, state[tag] & ~uint64_t{8 | 16}), "flagged as having no terms", "a sum without terms");
  expect_refused(t, with(tag - 1, state[tag - 1] | uint64_t{1} << 63), "holds a negative sum", "the sign bit");
  expect_refused(t, with(tag - 1, ~uint64_t{0}), "holds a negative sum", "a wrapped sum");
  if (!gmp::is_float(t)) {
    // Integer squares have no specials: once a std::logic_error in rounding.
    expect_refused(t, with(tag, state[tag] | 1), "flagged NaN", "NaN");
    expect_refused(t, with(tag, state[tag] | 2), "flagged +inf", "+inf");
  }
  // A state of another type whose format differs but whose size is the same.
  if (const std::optional<DType> other = same_size_other_format(t)) {
    ASSERT_EQ(sqdiff::partial_sum_words(*other), words);
    const std::vector<uint64_t> theirs = two_states(*other);
    const std::string name = gmp::is_float(*other) ? std::string(sqdiff::dtype_name(*other)) : "integer";
    expect_refused(t, std::vector<uint64_t>(theirs.begin() + static_cast<std::ptrdiff_t>(words), theirs.end()),
                   "is a state of " + name + " inputs", "another type's state");
  }
  if (!gmp::is_float(t)) {
    // The integer types share one format (SPEC_DECISIONS 7): a u8 state is
    // read as a state of t, a sum of integer squares either way.
    std::vector<uint64_t> into = two_states(t);
    sqdiff::combine_partial_sums(t, into.data(), two_states(DType::u8).data(), 2);
    Array sums = sentinel_array(DType::f64, {2}, dense_layout({2}));
    sqdiff::finish_partial_sums(t, into.data(), 2, false, sums.mutable_view());
    EXPECT_TRUE(output_matches(sums, {gmp::Expected{false, false, std::bit_cast<uint64_t>(2.0)},
                                      gmp::Expected{false, false, std::bit_cast<uint64_t>(8.0)}}));
  }
}

INSTANTIATE_TEST_SUITE_P(EveryInputType, BadStates, ::testing::ValuesIn(kAllTypes), type_param_name);

// States of one size read as another's (an f64 state passed as f32, an f32
// one as f16): the word where the shorter state's tag would be is a limb,
// and is refused.
TEST(PartialSums, StatesOfAnotherSizeAreRefused) {
  const std::vector<uint64_t> f64_states = two_states(DType::f64);
  Array out = sentinel_array(DType::f32, {2}, dense_layout({2}));
  EXPECT_THROW(sqdiff::finish_partial_sums(DType::f32, f64_states.data(), 1, false, out.mutable_view()), sqdiff::Error);
  const std::vector<uint64_t> f32_states = two_states(DType::f32);
  Array half = sentinel_array(DType::f16, {2}, dense_layout({2}));
  EXPECT_THROW(sqdiff::finish_partial_sums(DType::f16, f32_states.data(), 1, false, half.mutable_view()),
               sqdiff::Error);
  std::vector<uint64_t> into = two_states(DType::f16);
  const std::vector<uint64_t> into_before = into;
  EXPECT_THROW(sqdiff::combine_partial_sums(DType::f16, into.data(), f32_states.data(), 2), sqdiff::Error);
  EXPECT_EQ(into, into_before);
  EXPECT_TRUE(untouched(out));
  EXPECT_TRUE(untouched(half));
}

}  // namespace
