// Validation of sqdiff::subtract / sqdiff::squared_difference (SPEC sections 2
// to 4): every error path throws sqdiff::Error and leaves the output alone;
// the legal corner cases (empty, rank 0, high rank, in-place, overlapping,
// negative / zero / gapped strides) give the scalar reference's result.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "sqdiff/sqdiff.hpp"
#include "test_support.hpp"

namespace {

using sqdiff::Broadcast;
using sqdiff::BroadcastKind;
using sqdiff::ConstTensorView;
using sqdiff::DType;
using sqdiff::Options;
using sqdiff::Shape;
using sqdiff::TensorView;
using sqdiff_test::dtype_of;
using sqdiff_test::error_message;
using sqdiff_test::numel;
using sqdiff_test::Op;
using sqdiff_test::op_name;
using sqdiff_test::run_op;
using sqdiff_test::same_values;
using sqdiff_test::StridedInput;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr Op kOps[] = {Op::subtract, Op::squared_difference};
constexpr float kSentinel = -12345.5f;

// ---------------------------------------------------------------------------
// Error paths

// Runs op, which must throw sqdiff::Error, and checks that `out_buffer` (the
// memory behind the output view, pre-filled with the sentinel) is untouched.
std::string rejected(Op op, const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
                     const std::vector<float>& out_buffer, const Options& options = {}) {
  const std::vector<float> before = out_buffer;
  const std::string msg = error_message([&] { run_op(op, a, b, out, options); });
  EXPECT_EQ(std::memcmp(before.data(), out_buffer.data(), before.size() * sizeof(float)), 0)
      << op_name(op) << " wrote to the output of a rejected call";
  EXPECT_THAT(msg, HasSubstr(op_name(op)));
  return msg;
}

struct F32Buffers {
  std::vector<float> a = std::vector<float>(64, 1.5f);
  std::vector<float> b = std::vector<float>(64, 0.25f);
  std::vector<float> out = std::vector<float>(64, kSentinel);
  ConstTensorView va(Shape shape, Shape strides = {}) const { return {a.data(), DType::f32, shape, strides}; }
  ConstTensorView vb(Shape shape, Shape strides = {}) const { return {b.data(), DType::f32, shape, strides}; }
  TensorView vo(Shape shape, Shape strides = {}) { return {out.data(), DType::f32, shape, strides}; }
};

TEST(Validation, MixedInputDTypesNameBothTypes) {
  for (Op op : kOps) {
    F32Buffers buf;
    std::vector<uint16_t> halves(64, 0x3C00);
    const ConstTensorView h{halves.data(), DType::f16, {4}};
    const std::string m1 = rejected(op, buf.va({4}), h, buf.vo({4}), buf.out);
    EXPECT_THAT(m1, HasSubstr("f32"));
    EXPECT_THAT(m1, HasSubstr("f16"));
    const std::string m2 = rejected(op, h, buf.vb({4}), buf.vo({4}), buf.out);
    EXPECT_THAT(m2, HasSubstr("f32"));
    EXPECT_THAT(m2, HasSubstr("f16"));
    // Same size, different signedness: still no promotion.
    const ConstTensorView i{buf.a.data(), DType::i32, {4}};
    const ConstTensorView u{buf.b.data(), DType::u32, {4}};
    const std::string m3 = rejected(op, i, u, {buf.out.data(), DType::i32, {4}}, buf.out);
    EXPECT_THAT(m3, HasSubstr("i32"));
    EXPECT_THAT(m3, HasSubstr("u32"));
    // f16 vs bf16.
    const ConstTensorView bf{halves.data(), DType::bf16, {4}};
    const std::string m4 = rejected(op, h, bf, {buf.out.data(), DType::f16, {4}}, buf.out);
    EXPECT_THAT(m4, HasSubstr("f16"));
    EXPECT_THAT(m4, HasSubstr("bf16"));
  }
}

TEST(Validation, OutputDTypeMustMatchInputs) {
  for (Op op : kOps) {
    F32Buffers buf;
    const std::string m = rejected(op, buf.va({4}), buf.vb({4}), {buf.out.data(), DType::f64, {4}}, buf.out);
    EXPECT_THAT(m, HasSubstr("f64"));
    rejected(op, buf.va({4}), buf.vb({4}), {buf.out.data(), DType::i32, {4}}, buf.out);
    rejected(op, {buf.a.data(), DType::u8, {4}}, {buf.b.data(), DType::u8, {4}},
             {buf.out.data(), DType::i8, {4}}, buf.out);
  }
}

TEST(Validation, InvalidDTypeValue) {
  const DType bad = static_cast<DType>(200);
  ASSERT_FALSE(sqdiff::is_valid_dtype(bad));
  for (Op op : kOps) {
    F32Buffers buf;
    rejected(op, {buf.a.data(), bad, {4}}, {buf.b.data(), bad, {4}}, {buf.out.data(), bad, {4}}, buf.out);
    rejected(op, {buf.a.data(), bad, {4}}, buf.vb({4}), buf.vo({4}), buf.out);
    rejected(op, buf.va({4}), {buf.b.data(), bad, {4}}, buf.vo({4}), buf.out);
    rejected(op, buf.va({4}), buf.vb({4}), {buf.out.data(), bad, {4}}, buf.out);
    rejected(op, {buf.a.data(), static_cast<DType>(sqdiff::kDTypeCount), {4}},
             {buf.b.data(), static_cast<DType>(sqdiff::kDTypeCount), {4}},
             {buf.out.data(), static_cast<DType>(sqdiff::kDTypeCount), {4}}, buf.out);
  }
}

TEST(Validation, OutputShapeMustEqualBroadcastShape) {
  for (Op op : kOps) {
    F32Buffers buf;
    const std::string m = rejected(op, buf.va({2, 3}), buf.vb({3}), buf.vo({3, 2}), buf.out);
    EXPECT_THAT(m, HasSubstr("[2,3]"));
    EXPECT_THAT(m, HasSubstr("[3,2]"));
    // The output is never broadcast, and same element count is not enough.
    rejected(op, buf.va({2, 3}), buf.vb({3}), buf.vo({1, 2, 3}), buf.out);
    rejected(op, buf.va({2, 3}), buf.vb({3}), buf.vo({2, 3, 1}), buf.out);
    rejected(op, buf.va({2, 3}), buf.vb({3}), buf.vo({6}), buf.out);
    rejected(op, buf.va({2, 1}), buf.vb({1, 3}), buf.vo({2, 1}), buf.out);
    rejected(op, buf.va({}), buf.vb({}), buf.vo({1}), buf.out);
    rejected(op, buf.va({1}), buf.vb({}), buf.vo({}), buf.out);
    const std::string m2 = rejected(op, buf.va({2, 3}), buf.vb({2, 3}), buf.vo({2, 4}), buf.out);
    EXPECT_THAT(m2, HasSubstr("[2,4]"));
  }
}

TEST(Validation, StridesLengthMustEqualRank) {
  for (Op op : kOps) {
    F32Buffers buf;
    rejected(op, buf.va({2, 3}, {1}), buf.vb({2, 3}), buf.vo({2, 3}), buf.out);
    rejected(op, buf.va({2, 3}), buf.vb({2, 3}, {3, 1, 1}), buf.vo({2, 3}), buf.out);
    rejected(op, buf.va({2, 3}), buf.vb({2, 3}), buf.vo({2, 3}, {1}), buf.out);
    rejected(op, buf.va({}, {1}), buf.vb({}), buf.vo({}), buf.out);
  }
}

TEST(Validation, NegativeDimIsAnError) {
  for (Op op : kOps) {
    F32Buffers buf;
    rejected(op, buf.va({-1}), buf.vb({1}), buf.vo({1}), buf.out);
    rejected(op, buf.va({2, 3}), buf.vb({-3}), buf.vo({2, 3}), buf.out);
    rejected(op, buf.va({2}), buf.vb({2}), buf.vo({-2}), buf.out);
    rejected(op, buf.va({-2}), buf.vb({-2}), buf.vo({-2}), buf.out);
  }
}

TEST(Validation, BroadcastFailureNamesTheOpShapesAndMode) {
  for (Op op : kOps) {
    F32Buffers buf;
    const std::string prefix = std::string(op_name(op)) + ": ";
    const std::string m1 = rejected(op, buf.va({3}), buf.vb({2}), buf.vo({3}), buf.out);
    EXPECT_THAT(m1, StartsWith(prefix));
    EXPECT_THAT(m1, HasSubstr("cannot broadcast"));
    EXPECT_THAT(m1, HasSubstr("[3]"));
    EXPECT_THAT(m1, HasSubstr("[2]"));
    EXPECT_THAT(m1, HasSubstr("(numpy)"));
    Options none;
    none.broadcast = Broadcast{BroadcastKind::none, -1};
    const std::string m2 = rejected(op, buf.va({2, 3}), buf.vb({3}), buf.vo({2, 3}), buf.out, none);
    EXPECT_THAT(m2, StartsWith(prefix));
    EXPECT_THAT(m2, HasSubstr("cannot broadcast"));
    EXPECT_THAT(m2, HasSubstr("(none)"));
    Options pdpd;
    pdpd.broadcast = Broadcast{BroadcastKind::pdpd, -2};
    const std::string m3 = rejected(op, buf.va({2, 3}), buf.vb({3}), buf.vo({2, 3}), buf.out, pdpd);
    EXPECT_THAT(m3, StartsWith(prefix));
    EXPECT_THAT(m3, HasSubstr("cannot broadcast"));
    EXPECT_THAT(m3, HasSubstr("(pdpd, axis -2)"));
    pdpd.broadcast.axis = 0;
    const std::string m4 = rejected(op, buf.va({2, 3}), buf.vb({3}), buf.vo({2, 3}), buf.out, pdpd);
    EXPECT_THAT(m4, HasSubstr("(pdpd, axis 0)"));
  }
}

TEST(Validation, SelfOverlappingOutputIsRejected) {
  for (Op op : kOps) {
    F32Buffers buf;
    rejected(op, buf.va({3, 4}), buf.vb({4}), buf.vo({3, 4}, {0, 1}), buf.out);
    rejected(op, buf.va({4}), buf.vb({4}), buf.vo({4}, {0}), buf.out);
    rejected(op, buf.va({2, 3}), buf.vb({2, 3}), buf.vo({2, 3}, {1, 1}), buf.out);
    rejected(op, buf.va({2, 2}), buf.vb({2, 2}), {buf.out.data() + 10, DType::f32, {2, 2}, {-1, -1}}, buf.out);
    rejected(op, buf.va({2, 3}), buf.vb({3}), buf.vo({2, 3}, {2, 1}), buf.out);
    // Strides that do not nest: rejected (documented as conservative).
    rejected(op, buf.va({3, 3}), buf.vb({3, 3}), buf.vo({3, 3}, {2, 3}), buf.out);
  }
}

TEST(Validation, NullDataWithNonEmptyShape) {
  for (Op op : kOps) {
    F32Buffers buf;
    rejected(op, {nullptr, DType::f32, {4}}, buf.vb({4}), buf.vo({4}), buf.out);
    rejected(op, buf.va({4}), {nullptr, DType::f32, {4}}, buf.vo({4}), buf.out);
    rejected(op, buf.va({4}), buf.vb({4}), {nullptr, DType::f32, {4}}, buf.out);
    rejected(op, {nullptr, DType::f32, {}}, buf.vb({}), buf.vo({}), buf.out);
    rejected(op, buf.va({2, 3}), {nullptr, DType::f32, {1}}, buf.vo({2, 3}), buf.out);
  }
}

TEST(Validation, NegativeThreadsIsAnError) {
  for (Op op : kOps) {
    F32Buffers buf;
    Options o;
    o.threads = -1;
    rejected(op, buf.va({4}), buf.vb({4}), buf.vo({4}), buf.out, o);
    o.threads = -1000;
    rejected(op, buf.va({4}), buf.vb({4}), buf.vo({4}), buf.out, o);
  }
}

TEST(Validation, ErrorsAreInvalidArgument) {
  F32Buffers buf;
  EXPECT_THROW(sqdiff::subtract(buf.va({3}), buf.vb({2}), buf.vo({3})), std::invalid_argument);
  EXPECT_THROW(sqdiff::squared_difference(buf.va({3}), buf.vb({3}), buf.vo({3}, {0})), std::invalid_argument);
}

// ---------------------------------------------------------------------------
// Successes, checked against the scalar reference

template <class T>
T random_value(std::mt19937_64& rng) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(rng());
  } else {
    std::uniform_real_distribution<float> dist(-100.0f, 100.0f);
    return T(dist(rng));
  }
}

template <class T>
std::vector<T> random_vector(std::size_t n, std::mt19937_64& rng) {
  std::vector<T> v(n);
  for (T& x : v) x = random_value<T>(rng);
  return v;
}

// Computes the reference first (so that overlapping inputs are read before
// anything is written), runs op, and compares the output view element-wise.
template <class T>
void expect_matches_reference(Op op, const T* a, const Shape& as, const Shape& ast, const T* b, const Shape& bs,
                              const Shape& bst, T* out, const Shape& os, const Shape& ost,
                              const Options& options = {}) {
  const std::vector<T> expected = sqdiff_test::reference_op(op, StridedInput<T>{a, as, ast},
                                                            StridedInput<T>{b, bs, bst}, os);
  run_op(op, {a, dtype_of<T>, as, ast}, {b, dtype_of<T>, bs, bst}, {out, dtype_of<T>, os, ost}, options);
  EXPECT_TRUE(same_values(expected, sqdiff_test::gather(static_cast<const T*>(out), os, ost)))
      << op_name(op) << " " << sqdiff_test::shape_str(as) << " with " << sqdiff_test::shape_str(bs);
}

TEST(Validation, EmptyOutputsSucceedWithNullData) {
  for (Op op : kOps) {
    for (const Shape& s : {Shape{0}, Shape{3, 0, 2}, Shape{0, 0}, Shape{1, 0}}) {
      EXPECT_NO_THROW(run_op(op, {nullptr, DType::f32, s}, {nullptr, DType::f32, s}, {nullptr, DType::f32, s}));
    }
    // Broadcast to an empty output; the non-empty input has real data.
    const float one = 1.0f;
    EXPECT_NO_THROW(run_op(op, {nullptr, DType::f32, {1, 0, 3}}, {&one, DType::f32, {1}},
                           {nullptr, DType::f32, {1, 0, 3}}));
    EXPECT_NO_THROW(run_op(op, {nullptr, DType::i64, {0}}, {nullptr, DType::i64, {1, 0}},
                           {nullptr, DType::i64, {1, 0}}));
    // A real output buffer behind an empty view is not written.
    std::vector<float> out(16, kSentinel);
    std::vector<float> a(16, 3.0f), b(16, 1.0f);
    run_op(op, {a.data(), DType::f32, {2, 0}}, {b.data(), DType::f32, {2, 0}}, {out.data(), DType::f32, {2, 0}});
    run_op(op, {a.data(), DType::f32, {0, 8}}, {b.data(), DType::f32, {8}}, {out.data(), DType::f32, {0, 8}});
    for (float v : out) EXPECT_EQ(v, kSentinel);
  }
}

// An empty shape is counted as NumPy counts it: the product of its non-zero
// dims must fit in int64, or the call is refused before any stride is
// computed (dense strides of [0, 2^63-1, 2^63-1] would overflow).
TEST(Validation, EmptyShapesWithHugeDimsAreRefused) {
  constexpr int64_t kMax = INT64_MAX;
  for (Op op : kOps) {
    for (const Shape& s : {Shape{0, kMax, kMax}, Shape{kMax, 0, 2}, Shape{int64_t{1} << 62, 4, 0}}) {
      const std::string msg = error_message(
          [&] { run_op(op, {nullptr, DType::f32, s}, {nullptr, DType::f32, s}, {nullptr, DType::f32, s}); });
      EXPECT_THAT(msg, HasSubstr("overflows int64")) << msg;
    }
    // The product of the non-zero dims fits: an empty call that does nothing.
    EXPECT_NO_THROW(run_op(op, {nullptr, DType::f32, {0, kMax}}, {nullptr, DType::f32, {kMax}},
                           {nullptr, DType::f32, {0, kMax}}));
  }
}

TEST(Validation, RankZeroInputs) {
  std::mt19937_64 rng(11);
  for (Op op : kOps) {
    std::vector<float> a = random_vector<float>(6, rng), b = random_vector<float>(6, rng);
    std::vector<float> out(6, kSentinel);
    expect_matches_reference<float>(op, a.data(), {}, {}, b.data(), {}, {}, out.data(), {}, {});
    EXPECT_EQ(out[1], kSentinel);  // a scalar output writes one element
    expect_matches_reference<float>(op, a.data(), {}, {}, b.data(), {5}, {}, out.data(), {5}, {});
    expect_matches_reference<float>(op, a.data(), {2, 3}, {}, b.data(), {}, {}, out.data(), {2, 3}, {});
    std::vector<int32_t> ia = random_vector<int32_t>(4, rng), ib = random_vector<int32_t>(4, rng);
    std::vector<int32_t> io(4, 0);
    expect_matches_reference<int32_t>(op, ia.data(), {}, {}, ib.data(), {}, {}, io.data(), {}, {});
    expect_matches_reference<int32_t>(op, ia.data(), {4}, {}, ib.data(), {}, {}, io.data(), {4}, {});
  }
}

// Random numpy broadcasts of a given rank, dims mostly 1 and 2.
template <class T>
void check_random_broadcasts(int rank, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 6; ++trial) {
    Shape full(static_cast<std::size_t>(rank));
    do {
      for (int64_t& d : full) {
        const double r = u(rng);
        d = r < 0.45 ? 2 : (r < 0.5 ? 3 : 1);
      }
    } while (numel(full) > 2048);
    Shape as, bs;
    // Each input keeps a dim or broadcasts it (1); one of them may also be
    // shorter (leading dims dropped).
    const int drop = rank > 2 ? static_cast<int>(rng() % 3) : 0;
    const bool drop_a = (rng() & 1) != 0;
    Shape os(full.size());
    for (int k = 0; k < rank; ++k) {
      const int64_t d = full[static_cast<std::size_t>(k)];
      const bool a_here = !(drop_a && k < drop);
      const bool b_here = !(!drop_a && k < drop);
      int64_t ad = a_here && u(rng) < 0.6 ? d : 1;
      int64_t bd = b_here && u(rng) < 0.6 ? d : 1;
      if (!a_here) bd = d;
      if (!b_here) ad = d;
      if (a_here) as.push_back(ad);
      if (b_here) bs.push_back(bd);
      os[static_cast<std::size_t>(k)] = ad > bd ? ad : bd;
    }
    ASSERT_EQ(sqdiff::broadcast_shape(as, bs), os);
    const std::vector<T> a = random_vector<T>(static_cast<std::size_t>(numel(as)), rng);
    const std::vector<T> b = random_vector<T>(static_cast<std::size_t>(numel(bs)), rng);
    for (Op op : kOps) {
      std::vector<T> out(static_cast<std::size_t>(numel(os)));
      SCOPED_TRACE("rank " + std::to_string(rank) + " trial " + std::to_string(trial));
      expect_matches_reference<T>(op, a.data(), as, {}, b.data(), bs, {}, out.data(), os, {});
    }
  }
}

template <class T>
class TypedValidation : public ::testing::Test {};
using AllTypes = ::testing::Types<sqdiff::float16, sqdiff::bfloat16, float, double, int8_t, int16_t, int32_t,
                                  int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;
TYPED_TEST_SUITE(TypedValidation, AllTypes);

TYPED_TEST(TypedValidation, HighRankBroadcastsMatchScalarLoop) {
  for (int rank : {1, 2, 3, 8, 12, 20}) check_random_broadcasts<TypeParam>(rank, 1000u + static_cast<uint64_t>(rank));
}

TYPED_TEST(TypedValidation, InPlace) {
  using T = TypeParam;
  std::mt19937_64 rng(21);
  const Shape s{4, 37};
  for (Op op : kOps) {
    // out == a (b broadcast along rows).
    std::vector<T> x = random_vector<T>(4 * 37, rng), row = random_vector<T>(37, rng);
    expect_matches_reference<T>(op, x.data(), s, {}, row.data(), {37}, {}, x.data(), s, {});
    // out == b (a broadcast along rows).
    std::vector<T> y = random_vector<T>(4 * 37, rng);
    expect_matches_reference<T>(op, row.data(), {37}, {}, y.data(), s, {}, y.data(), s, {});
    // out == a == b.
    std::vector<T> z = random_vector<T>(4 * 37, rng);
    expect_matches_reference<T>(op, z.data(), s, {}, z.data(), s, {}, z.data(), s, {});
    // The same strided view in and out: gapped rows and elements.
    std::vector<T> g = random_vector<T>(4 * 80, rng);
    const std::vector<T> g_before = g;
    const Shape gs{80, 2};
    expect_matches_reference<T>(op, g.data(), s, gs, row.data(), {37}, {}, g.data(), s, gs);
    // The gaps of the strided view are untouched.
    for (int64_t r = 0; r < 4; ++r)
      for (int64_t c = 0; c < 80; ++c) {
        const bool in_view = c % 2 == 0 && c / 2 < 37;
        if (!in_view) {
          EXPECT_TRUE(sqdiff_test::same_value(g_before[static_cast<std::size_t>(r * 80 + c)],
                                              g[static_cast<std::size_t>(r * 80 + c)]));
        }
      }
  }
}

TYPED_TEST(TypedValidation, PartiallyOverlappingOutputActsAsIfInputsWereCopied) {
  using T = TypeParam;
  std::mt19937_64 rng(31);
  for (int64_t n : {int64_t{1000}, int64_t{100003}}) {
    const Shape s{n};
    const std::size_t un = static_cast<std::size_t>(n);
    for (Op op : kOps) {
      const std::vector<T> other = random_vector<T>(un, rng);
      // out one element after a, then one element before a.
      for (int shift : {1, -1}) {
        std::vector<T> buf = random_vector<T>(un + 1, rng);
        T* a = shift > 0 ? buf.data() : buf.data() + 1;
        T* out = shift > 0 ? buf.data() + 1 : buf.data();
        expect_matches_reference<T>(op, a, s, {}, other.data(), s, {}, out, s, {});
        // Same with b as the overlapping input.
        std::vector<T> buf2 = random_vector<T>(un + 1, rng);
        T* b = shift > 0 ? buf2.data() : buf2.data() + 1;
        T* out2 = shift > 0 ? buf2.data() + 1 : buf2.data();
        expect_matches_reference<T>(op, other.data(), s, {}, b, s, {}, out2, s, {});
      }
      // out is the reversed view of a: same memory, opposite direction.
      std::vector<T> buf = random_vector<T>(un, rng);
      expect_matches_reference<T>(op, buf.data(), s, {}, other.data(), s, {}, buf.data() + n - 1, s, {-1});
      // a is read with a 0 stride from inside the output's memory.
      std::vector<T> buf3 = random_vector<T>(un, rng);
      expect_matches_reference<T>(op, other.data(), s, {}, buf3.data() + n / 2, s, {0}, buf3.data(), s, {});
    }
  }
}

TYPED_TEST(TypedValidation, NegativeZeroAndGappedInputStrides) {
  using T = TypeParam;
  std::mt19937_64 rng(41);
  const std::vector<T> a = random_vector<T>(200, rng), b = random_vector<T>(200, rng);
  for (Op op : kOps) {
    std::vector<T> out(80);
    // 1-D: reversed, expanded (0), gapped.
    expect_matches_reference<T>(op, a.data() + 69, {70}, {-1}, b.data(), {70}, {}, out.data(), {70}, {});
    expect_matches_reference<T>(op, a.data(), {70}, {0}, b.data(), {70}, {}, out.data(), {70}, {});
    expect_matches_reference<T>(op, a.data(), {70}, {}, b.data() + 5, {70}, {0}, out.data(), {70}, {});
    expect_matches_reference<T>(op, a.data(), {66}, {3}, b.data() + 130, {66}, {-2}, out.data(), {66}, {});
    // 2-D: gapped rows and elements, negative row stride, transposed.
    expect_matches_reference<T>(op, a.data(), {5, 7}, {16, 2}, b.data(), {5, 7}, {}, out.data(), {5, 7}, {});
    expect_matches_reference<T>(op, a.data() + 28, {5, 7}, {-7, 1}, b.data(), {7}, {}, out.data(), {5, 7}, {});
    expect_matches_reference<T>(op, a.data(), {5, 7}, {1, 5}, b.data() + 60, {5, 1}, {-3, 0}, out.data(), {5, 7},
                                {});
    // A [5,7] view whose broadcast dim also has a stride of 0 written out.
    expect_matches_reference<T>(op, a.data(), {5, 7}, {0, 1}, b.data(), {5, 7}, {7, 0}, out.data(), {5, 7}, {});
  }
}

TYPED_TEST(TypedValidation, ReversedTransposedAndGappedOutputStrides) {
  using T = TypeParam;
  std::mt19937_64 rng(51);
  const std::vector<T> a = random_vector<T>(35, rng), b = random_vector<T>(7, rng);
  for (Op op : kOps) {
    std::vector<T> out(100);
    expect_matches_reference<T>(op, a.data(), {35}, {}, a.data() + 3, {35}, {0}, out.data() + 34, {35}, {-1});
    expect_matches_reference<T>(op, a.data(), {5, 7}, {}, b.data(), {7}, {}, out.data() + 34, {5, 7}, {-7, -1});
    expect_matches_reference<T>(op, a.data(), {5, 7}, {}, b.data(), {7}, {}, out.data() + 30, {5, 7}, {-7, 1});
    expect_matches_reference<T>(op, a.data(), {5, 7}, {}, b.data(), {7}, {}, out.data(), {5, 7}, {1, 5});
    // Gapped output: the gaps keep their old values.
    std::vector<T> gapped = random_vector<T>(100, rng);
    const std::vector<T> before = gapped;
    expect_matches_reference<T>(op, a.data(), {5, 7}, {}, b.data(), {7}, {}, gapped.data(), {5, 7}, {20, 2});
    for (std::size_t i = 0; i < gapped.size(); ++i) {
      const bool in_view = (i % 20) % 2 == 0 && (i % 20) / 2 < 7 && i / 20 < 5;
      if (!in_view) {
        EXPECT_TRUE(sqdiff_test::same_value(before[i], gapped[i])) << "gap element " << i;
      }
    }
  }
}

TEST(Validation, ZeroStrideOnSizeOneOutputDimIsFine) {
  std::mt19937_64 rng(61);
  std::vector<float> a = random_vector<float>(4, rng), b = random_vector<float>(4, rng), out(4, kSentinel);
  for (Op op : kOps)
    expect_matches_reference<float>(op, a.data(), {1, 4}, {}, b.data(), {4}, {}, out.data(), {1, 4}, {0, 1});
}

TEST(Validation, PdpdThroughTheOps) {
  std::mt19937_64 rng(71);
  std::vector<float> a = random_vector<float>(24, rng), b = random_vector<float>(3, rng), out(24);
  Options o;
  o.broadcast = Broadcast{BroadcastKind::pdpd, 1};
  for (Op op : kOps) {
    // pdpd [2,3,4] with [3,1] at axis 1 reads like numpy [2,3,4] with [3,1].
    expect_matches_reference<float>(op, a.data(), {2, 3, 4}, {}, b.data(), {3, 1}, {}, out.data(), {2, 3, 4}, {},
                                    o);
  }
}

TEST(Validation, ThreadCountDoesNotChangeResults) {
  std::mt19937_64 rng(81);
  const int64_t n = 300007;
  const std::vector<float> a = random_vector<float>(static_cast<std::size_t>(n), rng);
  const std::vector<float> b = random_vector<float>(static_cast<std::size_t>(n), rng);
  for (Op op : kOps) {
    for (int threads : {1, 2, 3, 8}) {
      std::vector<float> out(static_cast<std::size_t>(n));
      Options o;
      o.threads = threads;
      SCOPED_TRACE("threads " + std::to_string(threads));
      expect_matches_reference<float>(op, a.data(), {n}, {}, b.data(), {n}, {}, out.data(), {n}, {}, o);
    }
  }
}

}  // namespace
