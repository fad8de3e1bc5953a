#include "elementwise/plan.hpp"

#include <algorithm>
#include <cstddef>

namespace sqdiff::detail {
namespace {

struct Dim {
  int64_t size;
  int64_t a;
  int64_t b;
  int64_t out;
};

// dims[i] (outer) and dims[i+1] (inner) walk memory as one dim in all three tensors.
bool contiguous(const Dim& outer, const Dim& inner) {
  return outer.a == inner.a * inner.size && outer.b == inner.b * inner.size &&
         outer.out == inner.out * inner.size;
}

// Rows of 2, 4, 8 or 16 elements fold into a periodic row when one input
// repeats: such a period divides the vector length (f32 on AVX2 and up), so
// the repeating input becomes one constant vector. Other short rows gain
// nothing from folding and stay 2-D.
constexpr int64_t kMaxPeriod = 16;

// [outer, row] with a row of both inputs contiguous, where one input repeats
// the same row for every outer index while the other input and the output run
// on contiguously: one row of outer.size * row.size with a periodic operand.
RowKind periodic_kind(const Dim& outer, const Dim& row) {
  const bool power_of_two = (row.size & (row.size - 1)) == 0;
  if (row.size > kMaxPeriod || !power_of_two || row.a != 1 || row.b != 1 || row.out != 1) return RowKind::strided;
  if (outer.out != row.size) return RowKind::strided;
  if (outer.a == row.size && outer.b == 0) return RowKind::vp;
  if (outer.b == row.size && outer.a == 0) return RowKind::pv;
  return RowKind::strided;  // not periodic
}

RowKind row_kind(const Dim& row) {
  if (row.out != 1) return RowKind::strided;
  if (row.a == 1 && row.b == 1) return RowKind::vv;
  if (row.a == 1 && row.b == 0) return RowKind::vs;
  if (row.a == 0 && row.b == 1) return RowKind::sv;
  return RowKind::strided;
}

}  // namespace

// A field added to Plan changes its size: copy_plan must copy it too.
static_assert(sizeof(Plan) == 16 + 4 * sizeof(std::array<int64_t, kMaxPlanRank>) + 9 * 8 || sizeof(void*) != 8,
              "Plan changed: update copy_plan");

void copy_plan(const Plan& from, Plan& to) {
  to.rank = from.rank;
  to.element_count = from.element_count;
  const auto used = static_cast<std::size_t>(from.rank);
  std::copy_n(from.size.begin(), used, to.size.begin());
  std::copy_n(from.stride_a.begin(), used, to.stride_a.begin());
  std::copy_n(from.stride_b.begin(), used, to.stride_b.begin());
  std::copy_n(from.stride_out.begin(), used, to.stride_out.begin());
  to.offset_a = from.offset_a;
  to.offset_b = from.offset_b;
  to.offset_out = from.offset_out;
  to.row_kind = from.row_kind;
  to.period = from.period;
  to.index_a = from.index_a;
  to.index_b = from.index_b;
  to.span_a = from.span_a;
  to.span_b = from.span_b;
}

Plan make_plan(const BroadcastOperands& operands) {
  Plan plan;
  plan.element_count = 1;
  for (const int64_t size : operands.shape) plan.element_count *= size;
  if (plan.element_count == 0) return plan;

  // Size-1 dims move nothing; at most 62 dims of size >= 2 fit in int64.
  std::array<Dim, kMaxPlanRank> dims;  // the first `rank` are set
  int rank = 0;
  for (std::size_t i = 0; i < operands.shape.size(); ++i) {
    if (operands.shape[i] == 1) continue;
    Dim dim{operands.shape[i], operands.a_strides[i], operands.b_strides[i], operands.out_strides[i]};
    // Walk the output forwards: reverse a dim whose output stride is negative.
    if (dim.out < 0) {
      plan.offset_a += dim.a * (dim.size - 1);
      plan.offset_b += dim.b * (dim.size - 1);
      plan.offset_out += dim.out * (dim.size - 1);
      dim.a = -dim.a;
      dim.b = -dim.b;
      dim.out = -dim.out;
    }
    dims[static_cast<std::size_t>(rank++)] = dim;
  }
  if (rank == 0) {  // a single element
    dims[0] = Dim{1, 1, 1, 1};
    rank = 1;
  }

  // Outer dims first, by output stride, so the row is the output's densest dim
  // (a transposed output is then walked in memory order). Stable: ties keep
  // the caller's order. Insertion sort: a handful of dims, usually in order
  // already, and std::stable_sort would allocate a buffer.
  for (int i = 1; i < rank; ++i) {
    const Dim dim = dims[static_cast<std::size_t>(i)];
    int j = i;
    for (; j > 0 && dims[static_cast<std::size_t>(j - 1)].out < dim.out; --j) {
      dims[static_cast<std::size_t>(j)] = dims[static_cast<std::size_t>(j - 1)];
    }
    dims[static_cast<std::size_t>(j)] = dim;
  }

  int merged = 0;
  for (int i = 0; i < rank; ++i) {
    const Dim& dim = dims[static_cast<std::size_t>(i)];
    if (merged > 0 && contiguous(dims[static_cast<std::size_t>(merged - 1)], dim)) {
      Dim& outer = dims[static_cast<std::size_t>(merged - 1)];
      outer = Dim{outer.size * dim.size, dim.a, dim.b, dim.out};
    } else {
      dims[static_cast<std::size_t>(merged++)] = dim;
    }
  }

  // The row kind; a repeated short row folds into its outer dim instead.
  RowKind kind = merged >= 2 ? periodic_kind(dims[static_cast<std::size_t>(merged - 2)],
                                             dims[static_cast<std::size_t>(merged - 1)])
                             : RowKind::strided;
  if (kind == RowKind::vp || kind == RowKind::pv) {
    const Dim& outer = dims[static_cast<std::size_t>(merged - 2)];
    const Dim& row = dims[static_cast<std::size_t>(merged - 1)];
    plan.period = row.size;
    // The repeating input stays on its row (stride 0); the others walk on.
    dims[static_cast<std::size_t>(merged - 2)] =
        Dim{outer.size * row.size, kind == RowKind::vp ? 1 : 0, kind == RowKind::pv ? 1 : 0, 1};
    --merged;
  } else {
    kind = row_kind(dims[static_cast<std::size_t>(merged - 1)]);
  }

  plan.rank = merged;
  for (int i = 0; i < merged; ++i) {
    const auto& dim = dims[static_cast<std::size_t>(i)];
    const auto k = static_cast<std::size_t>(i);
    plan.size[k] = dim.size;
    plan.stride_a[k] = dim.a;
    plan.stride_b[k] = dim.b;
    plan.stride_out[k] = dim.out;
  }
  plan.row_kind = kind;
  return plan;
}

}  // namespace sqdiff::detail
