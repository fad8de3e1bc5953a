// The plan: a call's broadcasting turned into strides, simplified to the
// fewest dims, with the inner-row kind chosen. A small value that tests inspect.
#pragma once

#include <array>
#include <cstdint>

#include "shape/dim_vector.hpp"
#include "sqdiff/broadcast.hpp"

namespace sqdiff::detail {

// Every dim left in a plan has size >= 2 and the element count fits in int64,
// so a plan never has more than 62 dims: fixed storage, no heap.
inline constexpr int kMaxPlanRank = 64;

enum class RowKind : uint8_t {
  vv,       // a and b contiguous along the inner dim, out contiguous
  vs,       // a contiguous, b one scalar per row, out contiguous
  sv,       // a one scalar per row, b contiguous, out contiguous
  strided,  // anything else: operands are packed a block at a time
  vp,       // a contiguous, b repeats its first `period` elements (a short row of b
            // broadcast over the dim above, folded into one long row), out contiguous
  pv,       // the mirror: a repeats, b contiguous
  block,    // a small 2-D block made one row (short_rows.hpp): each input is
            // looked up through an index table from the first few elements at
            // its row's start, out contiguous
};

// The operands after broadcasting, all of the output's rank. Strides are in
// elements; an input's stride is 0 along every dim it is broadcast on.
struct BroadcastOperands {
  DimVector shape;
  DimVector out_strides;
  DimVector a_strides;
  DimVector b_strides;
};

struct Plan {
  int rank = 0;                // dims kept; 0 only when the output is empty
  int64_t element_count = 0;   // of the output
  // Outermost dim first; the row is dim rank-1. Entries from `rank` on are
  // left uninitialised: zeroing 2 KiB would cost a small call more than planning it.
  std::array<int64_t, kMaxPlanRank> size;
  std::array<int64_t, kMaxPlanRank> stride_a;
  std::array<int64_t, kMaxPlanRank> stride_b;
  std::array<int64_t, kMaxPlanRank> stride_out;
  // Element offsets to add to each data pointer (from reversing dims whose
  // output stride was negative, so that the output is walked forwards).
  int64_t offset_a = 0;
  int64_t offset_b = 0;
  int64_t offset_out = 0;
  RowKind row_kind = RowKind::vv;
  int64_t period = 0;  // vp / pv only: length of the repeating operand's pattern
  // block only: element i of a row reads a[index_a[i]] and b[index_b[i]] from
  // the row's start, within span_a (span_b) elements. The tables live in the
  // caller's scratch and hold kLookupPadding entries more than a row.
  const int32_t* index_a = nullptr;
  const int32_t* index_b = nullptr;
  int64_t span_a = 0;
  int64_t span_b = 0;

  int64_t row_length() const { return rank == 0 ? 0 : size[rank - 1]; }
};

// `to` becomes `from`, copying only the dims in use: a whole Plan is ~2 KB,
// almost all of it unused, and copying it all cost a call that remembers its
// plan (call_memo.hpp) tens of ns.
void copy_plan(const Plan& from, Plan& to);

// Drops size-1 dims, reverses dims with a negative output stride, orders dims
// by decreasing output stride, merges dims contiguous for all three tensors and
// picks the row kind. The operands must already be validated.
Plan make_plan(const BroadcastOperands& operands);

}  // namespace sqdiff::detail
