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
//  - the errors of each function, with nothing written.
#include <gtest/gtest.h>

#include <cstring>
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
  // A mean over no terms is NaN; a sum over none of an empty state is +0.
  std::vector<uint64_t> empty_state(words, 0);
  Array nan_out = sentinel_array(DType::f32, {}, dense_layout({}));
  sqdiff::finish_partial_sums(DType::f32, empty_state.data(), 0, true, nan_out.mutable_view());
  gmp::Expected nan;
  nan.nan = true;
  EXPECT_TRUE(output_matches(nan_out, {nan}));
  sqdiff::partial_sum_squared_difference({nullptr, DType::f32, {0}}, {nullptr, DType::f32, {0}}, empty_state.data());
  Array zero_out = sentinel_array(DType::f32, {}, dense_layout({}));
  sqdiff::finish_partial_sums(DType::f32, empty_state.data(), 0, false, zero_out.mutable_view());
  EXPECT_TRUE(output_matches(zero_out, {gmp::Expected{}}));
}

}  // namespace
