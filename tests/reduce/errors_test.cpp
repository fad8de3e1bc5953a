// Bad calls of the reductions and gradients (SPEC 3-5, 7, 8): each throws
// sqdiff::Error (a std::invalid_argument) whose message starts with the
// function's name and says what is wrong, and the outputs, filled with a
// sentinel before the call, are untouched after it. Also what is NOT an
// error: an output overlapping an input gets the as-if-copied result.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "reduce/gmp_oracle.hpp"
#include "reduce/reduce_test_support.hpp"
#include "test_support.hpp"

namespace {

namespace gmp = sqdiff_test::gmp;
using namespace sqdiff_test::reduce;

// The call throws sqdiff::Error, its message starts with `op` and holds every
// one of `phrases`.
void expect_error(const std::function<void()>& call, const std::string& op, const std::vector<std::string>& phrases,
                  const std::string& what) {
  try {
    call();
    ADD_FAILURE() << what << ": no error";
  } catch (const sqdiff::Error& e) {
    const std::string m = e.what();
    const std::invalid_argument& base = e;  // sqdiff::Error is an invalid_argument
    EXPECT_EQ(std::string(base.what()), m);
    EXPECT_EQ(m.rfind(op + ": ", 0), 0u) << what << ": " << m;
    for (const std::string& p : phrases) EXPECT_NE(m.find(p), std::string::npos) << what << ": '" << p << "' not in: " << m;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": not a sqdiff::Error: " << e.what();
  }
}

struct Inputs {
  std::vector<float> a = std::vector<float>(24, 1.5f);
  std::vector<float> b = std::vector<float>(24, -0.5f);
  sqdiff::ConstTensorView va() const { return {a.data(), DType::f32, {2, 3, 4}}; }
  sqdiff::ConstTensorView vb() const { return {b.data(), DType::f32, {2, 3, 4}}; }
};

using Reduction = void (*)(const sqdiff::ConstTensorView&, const sqdiff::ConstTensorView&, const sqdiff::TensorView&,
                           const sqdiff::ReduceOptions&);

struct Op {
  const char* name;
  Reduction run;
  bool mean;
};
const Op kOps[] = {{"sum_squared_difference", &sqdiff::sum_squared_difference, false},
                   {"mean_squared_difference", &sqdiff::mean_squared_difference, true}};

TEST(ReductionErrors, BadAxes) {
  const Inputs in;
  for (const Op& op : kOps) {
    struct Bad {
      Shape axes;
      std::vector<std::string> phrases;
    };
    const Bad bad[] = {{{0, 0}, {"axis 0", "listed twice"}},
                       {{1, -2}, {"axis -2", "listed twice", "as axis 1"}},
                       {{3}, {"axis 3", "out of range", "[2,3,4]"}},
                       {{-4}, {"axis -4", "out of range", "-3 to 2"}},
                       {{0, 7}, {"axis 7", "out of range"}}};
    for (const Bad& x : bad) {
      Array out = sentinel_array(DType::f32, {4}, dense_layout({4}));
      sqdiff::ReduceOptions options;
      options.axes = x.axes;
      expect_error([&] { op.run(in.va(), in.vb(), out.mutable_view(), options); }, op.name, x.phrases, text(x.axes));
      EXPECT_TRUE(untouched(out));
    }
  }
  expect_error([] { sqdiff::reduced_shape({2, 3}, Shape{1, 1}, false); }, "reduced_shape", {"listed twice"}, "reduced_shape");
  expect_error([] { sqdiff::reduced_shape({2, 3}, Shape{2}, false); }, "reduced_shape", {"out of range"}, "reduced_shape");
}

TEST(ReductionErrors, WrongOutputShapeOrType) {
  const Inputs in;
  for (const Op& op : kOps) {
    struct Bad {
      Shape out_shape;
      std::optional<Shape> axes;
      bool keepdims;
    };
    const Bad bad[] = {{{2, 4}, Shape{1}, true},   // keepdims wants [2,1,4]
                       {{2, 1, 4}, Shape{1}, false},
                       {{1}, std::nullopt, false},  // all axes: []
                       {{4, 2}, Shape{1}, false},
                       {{2, 3, 4, 1}, Shape{}, false}};
    for (const Bad& x : bad) {
      Array out = sentinel_array(DType::f32, x.out_shape, dense_layout(x.out_shape));
      sqdiff::ReduceOptions options;
      options.axes = x.axes;
      options.keepdims = x.keepdims;
      expect_error([&] { op.run(in.va(), in.vb(), out.mutable_view(), options); }, op.name,
                   {"output shape " + text(x.out_shape), "reduced shape"}, text(x.out_shape));
      EXPECT_TRUE(untouched(out));
    }
    // Output types SPEC 7 does not allow: f16 for f32 inputs, i64 for a mean
    // of integers, u64 for signed ones, f16 for integers, an invalid value.
    struct BadType {
      DType input, output;
    };
    const BadType types[] = {{DType::f32, DType::f16}, {DType::f32, DType::bf16}, {DType::f64, DType::f16},
                             {DType::i32, op.mean ? DType::i64 : DType::u64}, {DType::u8, DType::f16},
                             {DType::f16, DType::bf16}, {DType::f32, DType::i64}};
    std::vector<uint64_t> data(8, 1);
    for (const BadType& x : types) {
      Array out = sentinel_array(x.output, {}, dense_layout({}));
      expect_error([&] { op.run({data.data(), x.input, {2}}, {data.data(), x.input, {2}}, out.mutable_view(), {}); }, op.name,
                   {"output type " + std::string(sqdiff::dtype_name(x.output)), std::string(sqdiff::dtype_name(x.input))},
                   "output type");
      EXPECT_TRUE(untouched(out));
    }
    Array out = sentinel_array(DType::f32, {}, dense_layout({}));
    expect_error([&] { op.run(in.va(), in.vb(), {out.origin(), static_cast<DType>(77), {}}, {}); }, op.name, {"77"},
                 "invalid dtype");
    expect_error([&] { op.run(in.va(), {in.b.data(), DType::f64, {2, 3, 4}}, out.mutable_view(), {}); }, op.name,
                 {"input types differ", "f32", "f64"}, "mixed inputs");
    EXPECT_TRUE(untouched(out));
  }
}

TEST(ReductionErrors, ShapesStridesNullsThreadsAndSelfOverlap) {
  const Inputs in;
  for (const Op& op : kOps) {
    Array out = sentinel_array(DType::f32, {}, dense_layout({}));
    // Shapes that do not broadcast, pdpd axes out of range.
    expect_error([&] { op.run(in.va(), {in.b.data(), DType::f32, {3, 2}}, out.mutable_view(), {}); }, op.name,
                 {"cannot broadcast", "[2,3,4]", "[3,2]"}, "numpy mismatch");
    sqdiff::ReduceOptions none;
    none.broadcast = {BroadcastKind::none, -1};
    expect_error([&] { op.run(in.va(), {in.b.data(), DType::f32, {3, 4}}, out.mutable_view(), none); }, op.name,
                 {"(none)"}, "none mismatch");
    sqdiff::ReduceOptions pdpd;
    pdpd.broadcast = {BroadcastKind::pdpd, 2};
    expect_error([&] { op.run(in.va(), {in.b.data(), DType::f32, {3, 4}}, out.mutable_view(), pdpd); }, op.name,
                 {"pdpd"}, "pdpd axis");
    // A strides list of the wrong length; null data on a call that reads.
    expect_error([&] { op.run({in.a.data(), DType::f32, {2, 3, 4}, {12, 4}}, in.vb(), out.mutable_view(), {}); }, op.name,
                 {"strides"}, "strides length");
    expect_error([&] { op.run({nullptr, DType::f32, {2, 3, 4}}, in.vb(), out.mutable_view(), {}); }, op.name,
                 {"null", "a"}, "null a");
    expect_error([&] { op.run(in.va(), {nullptr, DType::f32, {2, 3, 4}}, out.mutable_view(), {}); }, op.name,
                 {"null", "b"}, "null b");
    expect_error([&] { op.run(in.va(), in.vb(), {nullptr, DType::f32, {}}, {}); }, op.name, {"null", "out"}, "null out");
    sqdiff::ReduceOptions negative;
    negative.threads = -2;
    expect_error([&] { op.run(in.va(), in.vb(), out.mutable_view(), negative); }, op.name, {"threads is -2"}, "threads");
    EXPECT_TRUE(untouched(out));
    // An output reaching one element from two indices (stride 0), or whose
    // strides do not nest.
    Array rows = sentinel_array(DType::f32, {16}, dense_layout({16}));
    sqdiff::ReduceOptions last;
    last.axes = Shape{-1};
    expect_error([&] { op.run(in.va(), in.vb(), {rows.origin(), DType::f32, {2, 3}, {0, 1}}, last); }, op.name,
                 {"out", "may reach one element from two indices"}, "stride 0 output");
    sqdiff::ReduceOptions nothing;
    nothing.axes = Shape{};
    expect_error([&] { op.run({in.a.data(), DType::f32, {3, 3}}, {in.b.data(), DType::f32, {3, 3}},
                              {rows.origin(), DType::f32, {3, 3}, {2, 3}}, nothing); },
                 op.name, {"strides must nest"}, "non-nesting output");
    EXPECT_TRUE(untouched(rows));
  }
}

// An integer sum that does not fit i64 / u64: Error, and no output element
// written, not even those that fit.
TEST(ReductionErrors, IntegerOverflowWritesNothing) {
  const std::vector<int64_t> a{1, 2, 3, std::numeric_limits<int64_t>::max()}, b{0, 0, 0, -1};
  Array out = sentinel_array(DType::i64, {4}, dense_layout({4}));
  sqdiff::ReduceOptions options;
  options.axes = Shape{};
  expect_error([&] { sqdiff::sum_squared_difference({a.data(), DType::i64, {4}}, {b.data(), DType::i64, {4}}, out.mutable_view(), options); },
               "sum_squared_difference", {"output element 3", "does not fit i64", "nothing was written"}, "i64 overflow");
  EXPECT_TRUE(untouched(out));
  const std::vector<uint32_t> ua(4, 0xFFFFFFFFu), ub(4, 0);
  Array uout = sentinel_array(DType::u64, {}, dense_layout({}));
  expect_error([&] { sqdiff::sum_squared_difference({ua.data(), DType::u32, {4}}, {ub.data(), DType::u32, {4}}, uout.mutable_view()); },
               "sum_squared_difference", {"does not fit u64"}, "u64 overflow");
  EXPECT_TRUE(untouched(uout));
}

TEST(GradientErrors, EachBadCallWritesNothing) {
  const Inputs in;
  const std::vector<float> g(24, 1.0f);
  const std::vector<double> g64(24, 1.0);
  const sqdiff::ConstTensorView vg{g.data(), DType::f32, {2, 3, 4}};
  Array ga = sentinel_array(DType::f32, {2, 3, 4}, dense_layout({2, 3, 4}));
  Array gb = sentinel_array(DType::f32, {2, 3, 4}, dense_layout({2, 3, 4}));
  const sqdiff::TensorView va = ga.mutable_view(), vb = gb.mutable_view();
  const std::string sq = "squared_difference_backward", sub = "subtract_backward";
  const auto both = [&](const sqdiff::ConstTensorView& a, const sqdiff::ConstTensorView& b, const sqdiff::ConstTensorView& go,
                        const sqdiff::TensorView* x, const sqdiff::TensorView* y, sqdiff::Options options = {}) {
    return [=] { sqdiff::squared_difference_backward(a, b, go, x, y, options); };
  };
  // Integer types; one tensor of another type.
  std::vector<int32_t> ints(24, 1);
  const sqdiff::ConstTensorView ia{ints.data(), DType::i32, {2, 3, 4}};
  Array int_grad = sentinel_array(DType::i32, {2, 3, 4}, dense_layout({2, 3, 4}));
  const sqdiff::TensorView vi = int_grad.mutable_view();
  expect_error(both(ia, ia, ia, &vi, nullptr), sq, {"i32", "float types only"}, "integer inputs");
  expect_error([&] { sqdiff::subtract_backward(ia, &vi, nullptr); }, sub, {"i32", "float types only"}, "integer grad_out");
  EXPECT_TRUE(untouched(int_grad));
  expect_error(both(in.va(), in.vb(), {g64.data(), DType::f64, {2, 3, 4}}, &va, &vb), sq, {"grad_out is f64", "f32"},
               "mixed grad_out");
  Array g64_out = sentinel_array(DType::f64, {2, 3, 4}, dense_layout({2, 3, 4}));
  const sqdiff::TensorView v64 = g64_out.mutable_view();
  expect_error(both(in.va(), in.vb(), vg, &v64, nullptr), sq, {"grad_a is f64"}, "mixed grad_a");
  expect_error([&] { sqdiff::subtract_backward(vg, nullptr, &v64); }, sub, {"grad_b is f64"}, "mixed grad_b");
  EXPECT_TRUE(untouched(g64_out));
  // Shapes: grad_out not the broadcast shape, a gradient not its input's
  // shape, inputs that do not broadcast.
  expect_error(both(in.va(), in.vb(), {g.data(), DType::f32, {2, 3}}, &va, &vb), sq,
               {"grad_out has shape [2,3]", "broadcast shape [2,3,4]"}, "grad_out shape");
  const sqdiff::TensorView small{ga.origin(), DType::f32, {3, 4}};
  expect_error(both(in.va(), in.vb(), vg, &small, nullptr), sq, {"grad_a has shape [3,4]", "[2,3,4] of a"}, "grad_a shape");
  expect_error(both(in.va(), {in.b.data(), DType::f32, {4, 3}}, vg, &va, nullptr), sq, {"cannot broadcast"}, "broadcast");
  const sqdiff::TensorView row{gb.origin(), DType::f32, {4}};
  expect_error([&] { sqdiff::subtract_backward({g.data(), DType::f32, {2, 3}}, &va, &row); }, sub,
               {"grad_out has shape [2,3]", "broadcast shape [2,3,4]"}, "subtract grad_out shape");
  // The two gradients sharing memory; a gradient reaching one element twice.
  const sqdiff::TensorView shifted{ga.origin() + 4, DType::f32, {2, 3, 4}};
  expect_error(both(in.va(), in.vb(), vg, &va, &shifted), sq, {"grad_a and grad_b share memory"}, "shared gradients");
  expect_error([&] { sqdiff::subtract_backward(vg, &va, &shifted); }, sub, {"share memory"}, "shared gradients");
  const sqdiff::TensorView repeated{ga.origin(), DType::f32, {2, 3, 4}, {0, 4, 1}};
  expect_error(both(in.va(), in.vb(), vg, &repeated, nullptr), sq, {"may reach one element from two indices"}, "stride 0");
  // Null data where the call reads or writes; negative threads.
  const sqdiff::TensorView null_grad{nullptr, DType::f32, {2, 3, 4}};
  expect_error(both(in.va(), in.vb(), vg, &null_grad, nullptr), sq, {"null", "grad_a"}, "null grad_a");
  expect_error(both({nullptr, DType::f32, {2, 3, 4}}, in.vb(), vg, &va, nullptr), sq, {"null", "a"}, "null a");
  expect_error(both(in.va(), in.vb(), {nullptr, DType::f32, {2, 3, 4}}, &va, nullptr), sq, {"null", "grad_out"}, "null g");
  sqdiff::Options negative;
  negative.threads = -1;
  expect_error(both(in.va(), in.vb(), vg, &va, &vb, negative), sq, {"threads is -1"}, "threads");
  expect_error([&] { sqdiff::subtract_backward(vg, &va, &vb, negative); }, sub, {"threads is -1"}, "threads");
  EXPECT_TRUE(untouched(ga));
  EXPECT_TRUE(untouched(gb));
  // Not errors: both gradients skipped; an empty call with null pointers.
  sqdiff::squared_difference_backward(in.va(), in.vb(), vg, nullptr, nullptr);
  sqdiff::subtract_backward(vg, nullptr, nullptr);
  const sqdiff::TensorView empty{nullptr, DType::f32, {0, 3}};
  sqdiff::squared_difference_backward({nullptr, DType::f32, {0, 3}}, {nullptr, DType::f32, {3}},
                                      {nullptr, DType::f32, {0, 3}}, &empty, nullptr);
}

// Reductions whose output overlaps an input (in place over a's first
// elements, or shifted into it) give the result of reading the inputs first.
TEST(ReductionOverlap, IsAsIfCopied) {
  std::mt19937_64 rng(6060);
  for (const DType t : {DType::f32, DType::f64}) {
    for (const int64_t rows : {int64_t{7}, int64_t{300}}) {
      const int64_t k = 129;
      const Shape shape{rows, k};
      const Array a0 = random_array(t, shape, dense_layout(shape), rng, ValueMix{});
      const Array b = random_array(t, shape, dense_layout(shape), rng, ValueMix{});
      const std::vector<gmp::Expected> expected =
          gmp::round_reduction(gmp::exact_reduction(a0.input(), b.input(), {}, Shape{1}, false), false, t);
      for (const int64_t shift : {int64_t{0}, int64_t{1}, int64_t{rows * k - rows}}) {
        for (const int threads : {1, 2}) {
          Array a = a0;
          sqdiff::ReduceOptions options;
          options.axes = Shape{1};
          options.threads = threads;
          const sqdiff::TensorView out{a.origin() + shift * static_cast<int64_t>(gmp::size_of(t)), t, {rows}};
          sqdiff::sum_squared_difference(a.view(), b.view(), out, options);
          for (int64_t i = 0; i < rows; ++i) {
            ASSERT_TRUE(gmp::matches(t, expected[static_cast<std::size_t>(i)], a.bits_at(shift + i)))
                << sqdiff::dtype_name(t) << ", " << rows << " rows, output at element " << shift << ", " << threads
                << " threads: row " << i;
          }
        }
      }
    }
  }
}

}  // namespace
