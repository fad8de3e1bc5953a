// Unit tests of sqdiff::detail::make_plan (src/plan.hpp): the operands are
// built by hand (broadcast strides written out), the plan's dims, strides,
// offsets and row kind are checked exactly; a randomized property test checks
// that every plan visits exactly the same (out, a, b) element triples as the
// operands it came from.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "elementwise/plan.hpp"
#include "oracle.hpp"

namespace {

using sqdiff::Shape;
using sqdiff::detail::BroadcastOperands;
using sqdiff::detail::make_plan;
using sqdiff::detail::Plan;
using sqdiff::detail::RowKind;

Shape dense(const Shape& shape) { return sqdiff_test::oracle::dense_strides(shape); }

const char* kind_name(RowKind k) {
  switch (k) {
    case RowKind::vv: return "vv";
    case RowKind::vs: return "vs";
    case RowKind::sv: return "sv";
    case RowKind::strided: return "strided";
    case RowKind::vp: return "vp";
    case RowKind::pv: return "pv";
    case RowKind::block: return "block";
  }
  return "?";
}

std::string str(const Shape& s) {
  std::string r = "[";
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i != 0) r += ',';
    r += std::to_string(s[i]);
  }
  return r + "]";
}

template <typename Array>
Shape first(const Array& a, int n) {
  return Shape(a.begin(), a.begin() + n);
}

std::string plan_str(const Plan& p) {
  std::ostringstream s;
  s << "rank " << p.rank << " count " << p.element_count << " size " << str(first(p.size, p.rank)) << " out "
    << str(first(p.stride_out, p.rank)) << " a " << str(first(p.stride_a, p.rank)) << " b "
    << str(first(p.stride_b, p.rank)) << " offsets out/a/b " << p.offset_out << "/" << p.offset_a << "/"
    << p.offset_b << " kind " << kind_name(p.row_kind);
  return s.str();
}

struct Expected {
  Shape size, out, a, b;
  RowKind kind;
  int64_t offset_out = 0, offset_a = 0, offset_b = 0;
};

void expect_plan(const Plan& p, const Expected& e, int64_t count) {
  SCOPED_TRACE(plan_str(p));
  ASSERT_EQ(p.rank, static_cast<int>(e.size.size()));
  EXPECT_EQ(p.element_count, count);
  EXPECT_EQ(first(p.size, p.rank), e.size);
  EXPECT_EQ(first(p.stride_out, p.rank), e.out);
  EXPECT_EQ(first(p.stride_a, p.rank), e.a);
  EXPECT_EQ(first(p.stride_b, p.rank), e.b);
  EXPECT_EQ(p.offset_out, e.offset_out);
  EXPECT_EQ(p.offset_a, e.offset_a);
  EXPECT_EQ(p.offset_b, e.offset_b);
  EXPECT_EQ(kind_name(p.row_kind), std::string(kind_name(e.kind)));
  EXPECT_EQ(p.row_length(), e.size.empty() ? 0 : e.size.back());
}

TEST(Plan, DenseSameShapeMergesToOneVvRow) {
  const Shape s{2, 3, 4};
  const Plan p = make_plan({s, dense(s), dense(s), dense(s)});
  expect_plan(p, {{24}, {1}, {1}, {1}, RowKind::vv}, 24);
}

TEST(Plan, SpecExampleNumpy8x1x6x1With7x1x5) {
  // a [8,1,6,1] dense strides [6,6,1,1]; b [7,1,5] dense strides [5,5,1];
  // out [8,7,6,5]. Nothing merges: each adjacent pair breaks for a or b.
  const Plan p = make_plan({{8, 7, 6, 5}, {210, 30, 5, 1}, {6, 0, 1, 0}, {0, 5, 0, 1}});
  expect_plan(p, {{8, 7, 6, 5}, {210, 30, 5, 1}, {6, 0, 1, 0}, {0, 5, 0, 1}, RowKind::sv}, 1680);
}

TEST(Plan, PerChannelMergesHWIntoOneVsRow) {
  // [N,C,H,W] - [1,C,1,1] with N=2, C=3, H=4, W=5
  const Shape s{2, 3, 4, 5};
  const Plan p = make_plan({s, dense(s), dense(s), {0, 1, 0, 0}});
  expect_plan(p, {{2, 3, 20}, {60, 20, 1}, {60, 20, 1}, {0, 1, 0}, RowKind::vs}, 120);
}

TEST(Plan, RowBroadcastIsVvWithZeroOuterStrideForB) {
  // [M,K] - [K]
  const Plan p = make_plan({{7, 9}, {9, 1}, {9, 1}, {0, 1}});
  expect_plan(p, {{7, 9}, {9, 1}, {9, 1}, {0, 1}, RowKind::vv}, 63);
}

TEST(Plan, ColumnBroadcastIsVs) {
  // [M,K] - [M,1]
  const Plan p = make_plan({{7, 9}, {9, 1}, {9, 1}, {1, 0}});
  expect_plan(p, {{7, 9}, {9, 1}, {9, 1}, {1, 0}, RowKind::vs}, 63);
}

TEST(Plan, ScalarAIsSv) {
  const Plan p = make_plan({{7, 9}, {9, 1}, {0, 0}, {9, 1}});
  expect_plan(p, {{63}, {1}, {0}, {1}, RowKind::sv}, 63);
}

TEST(Plan, ScalarBIsVsRankOne) {
  const Shape s{2, 3, 5};
  const Plan p = make_plan({s, dense(s), dense(s), {0, 0, 0}});
  expect_plan(p, {{30}, {1}, {1}, {0}, RowKind::vs}, 30);
}

TEST(Plan, ReversedEverythingBecomesForwardWithOffsets) {
  // All three views walk a [3,4] block backwards (strides [-4,-1]).
  const Plan p = make_plan({{3, 4}, {-4, -1}, {-4, -1}, {-4, -1}});
  expect_plan(p, {{12}, {1}, {1}, {1}, RowKind::vv, -11, -11, -11}, 12);
}

TEST(Plan, ReversedOutputOnlyReversesTheInputs) {
  // out walks backwards, a and b forwards: after the reversal the output is
  // forward and the inputs run backwards from their last element.
  const Plan p = make_plan({{5}, {-1}, {1}, {1}});
  expect_plan(p, {{5}, {1}, {-1}, {-1}, RowKind::strided, -4, 4, 4}, 5);
}

TEST(Plan, ReversedOutputWithBroadcastScalar) {
  // b is a scalar (stride 0): reversing leaves it a scalar, offset 0.
  const Plan p = make_plan({{6}, {-1}, {-1}, {0}});
  expect_plan(p, {{6}, {1}, {1}, {0}, RowKind::vs, -5, -5, 0}, 6);
}

TEST(Plan, TransposedOutputMakesTheUnitStrideDimTheRow) {
  // out [3,4] column-major (strides [1,3]); a and b column-major too: after
  // reordering all three are dense and merge into one vv row.
  const Plan p = make_plan({{3, 4}, {1, 3}, {1, 3}, {1, 3}});
  expect_plan(p, {{12}, {1}, {1}, {1}, RowKind::vv}, 12);
}

TEST(Plan, TransposedOutputWithRowMajorInputs) {
  // out column-major, inputs row-major: the row is out's unit-stride dim
  // (dim 0, size 3), where the inputs have stride 4: strided.
  const Plan p = make_plan({{3, 4}, {1, 3}, {4, 1}, {4, 1}});
  expect_plan(p, {{4, 3}, {3, 1}, {1, 4}, {1, 4}, RowKind::strided}, 12);
}

TEST(Plan, SizeOneDimsAreDropped) {
  const Shape s{1, 3, 1, 4, 1};
  {
    const Plan p = make_plan({s, dense(s), dense(s), dense(s)});
    expect_plan(p, {{12}, {1}, {1}, {1}, RowKind::vv}, 12);
  }
  {
    // size-1 dims with arbitrary (even 0 or negative) strides change nothing
    const Plan p = make_plan({s, {99, 4, -7, 1, 0}, {0, 4, 5, 1, 3}, {-2, 1, 0, 0, 8}});
    expect_plan(p, {{3, 4}, {4, 1}, {4, 1}, {1, 0}, RowKind::vs}, 12);
  }
}

TEST(Plan, EmptyOutputHasRankZero) {
  for (const Shape& s : {Shape{3, 0, 2}, Shape{0}, Shape{1, 0}, Shape{5, 7, 0}}) {
    const Plan p = make_plan({s, dense(s), dense(s), dense(s)});
    EXPECT_EQ(p.rank, 0) << str(s);
    EXPECT_EQ(p.element_count, 0) << str(s);
    EXPECT_EQ(p.row_length(), 0) << str(s);
  }
}

TEST(Plan, SingleElementOutput) {
  // rank 0 is reserved for empty outputs: one element is a row of length 1.
  for (const Shape& s : {Shape{}, Shape{1}, Shape{1, 1, 1}}) {
    const Plan p = make_plan({s, dense(s), dense(s), Shape(s.size(), 0)});
    SCOPED_TRACE(str(s) + ": " + plan_str(p));
    EXPECT_EQ(p.element_count, 1);
    ASSERT_GE(p.rank, 1);
    int64_t n = 1;
    for (int i = 0; i < p.rank; ++i) n *= p.size[static_cast<std::size_t>(i)];
    EXPECT_EQ(n, 1);
    EXPECT_EQ(p.row_length(), 1);
  }
}

TEST(Plan, Rank20MostlyOnes) {
  Shape s(20, 1);
  s[5] = 3;
  s[17] = 4;
  {
    const Plan p = make_plan({s, dense(s), dense(s), dense(s)});
    expect_plan(p, {{12}, {1}, {1}, {1}, RowKind::vv}, 12);
  }
  {
    Shape b(20, 0);
    b[17] = 1;  // b broadcast along dim 5: a row [4] reused 3 times, folded (period 4)
    const Plan p = make_plan({s, dense(s), dense(s), b});
    expect_plan(p, {{12}, {1}, {1}, {0}, RowKind::vp}, 12);
    EXPECT_EQ(p.period, 4);
  }
  {
    Shape all_ones(20, 1);
    const Plan p = make_plan({all_ones, dense(all_ones), dense(all_ones), dense(all_ones)});
    EXPECT_EQ(p.element_count, 1);
    EXPECT_EQ(p.row_length(), 1);
  }
}

// [1,32,32,2] - [1024,1,1,2]: rows of 2 where b repeats its row over the 1024
// positions of a: folded into rows of 2048 with b periodic (period 2).
TEST(Plan, TinyInnerDimFoldsIntoPeriodicRow) {
  const Plan p = make_plan({{1024, 1024, 2}, {2048, 2, 1}, {0, 2, 1}, {2, 0, 1}});
  expect_plan(p, {{1024, 2048}, {2048, 1}, {0, 1}, {2, 0}, RowKind::vp}, 1024 * 2048);
  EXPECT_EQ(p.period, 2);
}

TEST(Plan, TinyInnerDimWithRepeatingAFoldsIntoPv) {
  const Plan p = make_plan({{64, 4}, {4, 1}, {0, 1}, {4, 1}});
  expect_plan(p, {{256}, {1}, {0}, {1}, RowKind::pv}, 256);
  EXPECT_EQ(p.period, 4);
}

TEST(Plan, PeriodsThatAreNotPowersOfTwoDoNotFold) {
  const Plan p = make_plan({{64, 3}, {3, 1}, {0, 1}, {3, 1}});
  expect_plan(p, {{64, 3}, {3, 1}, {0, 1}, {3, 1}, RowKind::vv}, 192);
  EXPECT_EQ(p.period, 0);
}

TEST(Plan, LongRowsDoNotFold) {
  const Plan p = make_plan({{64, 17}, {17, 1}, {17, 1}, {0, 1}});
  expect_plan(p, {{64, 17}, {17, 1}, {17, 1}, {0, 1}, RowKind::vv}, 64 * 17);
  EXPECT_EQ(p.period, 0);
}

TEST(Plan, NonUnitInnerStrideIsStrided) {
  {
    const Plan p = make_plan({{5}, {1}, {2}, {1}});
    expect_plan(p, {{5}, {1}, {2}, {1}, RowKind::strided}, 5);
  }
  {
    const Plan p = make_plan({{5}, {1}, {1}, {3}});
    expect_plan(p, {{5}, {1}, {1}, {3}, RowKind::strided}, 5);
  }
  {
    // output gapped along the row
    const Plan p = make_plan({{4, 5}, {20, 2}, {5, 1}, {5, 1}});
    EXPECT_EQ(p.row_kind, RowKind::strided) << plan_str(p);
    EXPECT_EQ(p.row_length(), 5);
  }
  {
    // both inputs scalar along the row: neither vs nor sv
    const Plan p = make_plan({{4, 5}, {5, 1}, {1, 0}, {1, 0}});
    EXPECT_EQ(p.row_kind, RowKind::strided) << plan_str(p);
  }
}

TEST(Plan, GappedOuterDimsStayUnmerged) {
  // out rows padded to 8 elements: the two dims cannot merge
  const Plan p = make_plan({{3, 5}, {8, 1}, {5, 1}, {5, 1}});
  expect_plan(p, {{3, 5}, {8, 1}, {5, 1}, {5, 1}, RowKind::vv}, 15);
}

// ---------------------------------------------------------------------------
// Property test: random valid operands; the plan must visit exactly the same
// set of (out, a, b) element offsets, keep every dim >= 2, walk the output
// forwards with decreasing strides, be fully merged, and pick the row kind
// that matches its inner strides.

using Triple = std::tuple<int64_t, int64_t, int64_t>;

std::vector<Triple> visit_operands(const BroadcastOperands& o) {
  std::vector<Triple> r;
  int64_t n = 1;
  for (int64_t d : o.shape) n *= d;
  if (n == 0) return r;
  Shape idx(o.shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t po = 0, pa = 0, pb = 0;
    for (std::size_t d = 0; d < idx.size(); ++d) {
      po += idx[d] * o.out_strides[d];
      pa += idx[d] * o.a_strides[d];
      pb += idx[d] * o.b_strides[d];
    }
    r.emplace_back(po, pa, pb);
    for (std::size_t d = idx.size(); d-- > 0;) {
      if (++idx[d] < o.shape[d]) break;
      idx[d] = 0;
    }
  }
  return r;
}

std::vector<Triple> visit_plan(const Plan& p) {
  std::vector<Triple> r;
  if (p.rank == 0 || p.element_count == 0) return r;
  std::vector<int64_t> idx(static_cast<std::size_t>(p.rank), 0);
  for (int64_t k = 0; k < p.element_count; ++k) {
    int64_t po = p.offset_out, pa = p.offset_a, pb = p.offset_b;
    for (std::size_t d = 0; d < idx.size(); ++d) {
      po += idx[d] * p.stride_out[d];
      pa += idx[d] * p.stride_a[d];
      pb += idx[d] * p.stride_b[d];
    }
    // A periodic row: the repeating input walks its pattern, not a stride.
    const int64_t in_pattern = p.period != 0 ? idx.back() % p.period : 0;
    if (p.row_kind == RowKind::vp) pb += in_pattern;
    if (p.row_kind == RowKind::pv) pa += in_pattern;
    r.emplace_back(po, pa, pb);
    for (std::size_t d = idx.size(); d-- > 0;) {
      if (++idx[d] < p.size[d]) break;
      idx[d] = 0;
    }
  }
  return r;
}

// The operands as plain Shapes, easy to build up; converted for make_plan.
struct RandomOperands {
  Shape shape, out_strides, a_strides, b_strides;
  BroadcastOperands converted() const { return {shape, out_strides, a_strides, b_strides}; }
};

TEST(Plan, RandomOperandsVisitTheSameElements) {
  std::mt19937_64 rng(0x91A40001u);
  auto rnd = [&](int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1)); };
  int checked = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    RandomOperands o;
    const int rank = static_cast<int>(rnd(0, 7));
    for (int i = 0; i < rank; ++i) {
      const int64_t p = rnd(0, 99);
      o.shape.push_back(p < 35 ? 1 : p < 37 ? 0 : rnd(2, 5));
    }
    // output: a nesting layout (permuted, gapped, some dims reversed)
    std::vector<std::size_t> perm(o.shape.size());
    for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = i;
    if (rnd(0, 2) == 0) std::shuffle(perm.begin(), perm.end(), rng);
    o.out_strides.assign(o.shape.size(), 0);
    int64_t st = rnd(0, 3) == 0 ? 2 : 1;
    for (std::size_t k = perm.size(); k-- > 0;) {
      o.out_strides[perm[k]] = st;
      st = st * std::max<int64_t>(o.shape[perm[k]], 1) + (rnd(0, 4) == 0 ? 1 : 0);
    }
    for (auto& s : o.out_strides)
      if (rnd(0, 4) == 0) s = -s;
    // inputs: dense-like with random 0 (broadcast) and negative strides, or the
    // output's own layout (so that merges are possible after reordering)
    for (Shape* in : {&o.a_strides, &o.b_strides}) {
      const int64_t style = rnd(0, 3);
      *in = style == 0 ? o.out_strides : dense(o.shape);
      for (std::size_t d = 0; d < in->size(); ++d) {
        const int64_t r = rnd(0, 9);
        if (r < 2) (*in)[d] = 0;
        else if (r < 3) (*in)[d] = -(*in)[d];
        else if (r < 4 && style == 3) (*in)[d] *= 2;
      }
    }
    const Plan p = make_plan(o.converted());
    SCOPED_TRACE("shape " + str(o.shape) + " out " + str(o.out_strides) + " a " + str(o.a_strides) + " b " +
                 str(o.b_strides) + " -> " + plan_str(p));
    int64_t n = 1, non_unit = 0;
    for (int64_t d : o.shape) {
      n *= d;
      non_unit += d != 1;
    }
    ASSERT_EQ(p.element_count, n);
    if (n == 0) {
      EXPECT_EQ(p.rank, 0);
      continue;
    }
    ASSERT_GE(p.rank, 1);
    ASSERT_LE(p.rank, std::max<int64_t>(non_unit, 1));
    for (int d = 0; d < p.rank; ++d) {
      const auto u = static_cast<std::size_t>(d);
      if (n > 1) {
        EXPECT_GE(p.size[u], 2) << "dim " << d;
        EXPECT_GT(p.stride_out[u], 0) << "dim " << d << ": output not walked forwards";
      }
      if (d > 0) {
        EXPECT_GT(p.stride_out[u - 1], p.stride_out[u]) << "dims not ordered by output stride";
        const auto o_ = u - 1;
        const bool mergeable = p.stride_out[o_] == p.stride_out[u] * p.size[u] &&
                               p.stride_a[o_] == p.stride_a[u] * p.size[u] &&
                               p.stride_b[o_] == p.stride_b[u] * p.size[u];
        EXPECT_FALSE(mergeable) << "dims " << d - 1 << " and " << d << " could have merged";
      }
    }
    const auto in = static_cast<std::size_t>(p.rank - 1);
    const Triple inner{p.stride_out[in], p.stride_a[in], p.stride_b[in]};
    RowKind want = RowKind::strided;
    if (inner == Triple{1, 1, 1}) want = RowKind::vv;
    else if (inner == Triple{1, 1, 0}) want = p.period != 0 ? RowKind::vp : RowKind::vs;
    else if (inner == Triple{1, 0, 1}) want = p.period != 0 ? RowKind::pv : RowKind::sv;
    if (n > 1) {
      EXPECT_EQ(kind_name(p.row_kind), std::string(kind_name(want)));
    }
    std::vector<Triple> x = visit_operands(o.converted()), y = visit_plan(p);
    std::sort(x.begin(), x.end());
    std::sort(y.begin(), y.end());
    ASSERT_EQ(x, y) << "the plan visits different elements";
    ++checked;
  }
  EXPECT_GT(checked, 2000);
}

}  // namespace
