#include "elementwise/short_rows.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include "kernels/kernel_table.hpp"

namespace sqdiff::detail {
namespace {

// Rows of fewer bytes than this use part of one vector per kernel call.
constexpr std::size_t kShortRowBytes = 64;
// The widened row stays within L1 alongside its operands.
constexpr int64_t kMaxBlockElements = 1024;
// Copies made for one call, in elements: at most half the output (so the
// copying never costs what it saves), and bounded so they stay in L1/L2.
constexpr int64_t kMaxCopiedElements = 4096;
// A block row's tables are built for every call: a few hundred entries.
constexpr int64_t kMaxLookupBlock = 256;

// How an input runs over the block of the two innermost dims.
enum class BlockLayout { contiguous, constant, copied };

BlockLayout block_layout(int64_t outer_stride, int64_t inner_stride, int64_t inner_size) {
  if (inner_stride == 1 && outer_stride == inner_size) return BlockLayout::contiguous;
  if (inner_stride == 0 && outer_stride == 0) return BlockLayout::constant;
  return BlockLayout::copied;
}

// Positions of an input over the outer dims (those it does not broadcast on).
int64_t distinct_positions(const Plan& plan, const std::array<int64_t, kMaxPlanRank>& strides, int outer_dims) {
  int64_t count = 1;
  for (int d = 0; d < outer_dims; ++d) {
    if (strides[static_cast<std::size_t>(d)] != 0) count *= plan.size[static_cast<std::size_t>(d)];
  }
  return count;
}

// One block of m x n elements of kSize bytes (a fixed size, so each copy is
// one load and one store).
template <std::size_t kSize>
std::byte* copy_block(const std::byte* source, int64_t m, int64_t n, int64_t stride_m, int64_t stride_n,
                      std::byte* target) {
  for (int64_t i = 0; i < m; ++i) {
    const std::byte* row = source + i * stride_m * static_cast<int64_t>(kSize);
    // The two layouts of a broadcast (a repeated element, a repeated row)
    // without per-element index arithmetic.
    if (stride_n == 0) {
      for (int64_t j = 0; j < n; ++j) std::memcpy(target + j * static_cast<int64_t>(kSize), row, kSize);
    } else if (stride_n == 1) {
      std::memcpy(target, row, static_cast<std::size_t>(n) * kSize);
    } else {
      for (int64_t j = 0; j < n; ++j) {
        std::memcpy(target + j * static_cast<int64_t>(kSize), row + j * stride_n * static_cast<int64_t>(kSize), kSize);
      }
    }
    target += n * static_cast<int64_t>(kSize);
  }
  return target;
}

using BlockCopy = std::byte* (*)(const std::byte*, int64_t, int64_t, int64_t, int64_t, std::byte*);

BlockCopy block_copy_for(std::size_t element_size) {
  switch (element_size) {
    case 1: return &copy_block<1>;
    case 2: return &copy_block<2>;
    case 4: return &copy_block<4>;
    default: return &copy_block<8>;
  }
}

// Copies the input's block at each of its distinct positions, in order, into
// `target`, and turns its outer strides into strides over the copies.
void copy_blocks(Plan& plan, int outer_dims, std::size_t element_size, const std::byte* source, int64_t offset,
                 std::array<int64_t, kMaxPlanRank>& strides, std::byte* target) {
  const auto rows = static_cast<std::size_t>(outer_dims);
  const int64_t m = plan.size[rows];
  const int64_t n = plan.size[rows + 1];
  const int64_t stride_m = strides[rows];
  const int64_t stride_n = strides[rows + 1];
  const auto size = static_cast<int64_t>(element_size);
  // The dims the input moves along, innermost last, and an odometer over them.
  std::array<int, kMaxPlanRank> moving{};
  int moving_count = 0;
  for (int d = 0; d < outer_dims; ++d) {
    if (strides[static_cast<std::size_t>(d)] != 0) moving[static_cast<std::size_t>(moving_count++)] = d;
  }
  const BlockCopy copy = block_copy_for(element_size);
  std::array<int64_t, kMaxPlanRank> index;  // only the outer dims are used
  std::fill_n(index.begin(), outer_dims, int64_t{0});
  int64_t base = offset;
  for (;;) {
    target = copy(source + base * size, m, n, stride_m, stride_n, target);
    int k = moving_count - 1;
    for (; k >= 0; --k) {
      const auto d = static_cast<std::size_t>(moving[static_cast<std::size_t>(k)]);
      base += strides[d];
      if (++index[d] < plan.size[d]) break;
      base -= strides[d] * plan.size[d];
      index[d] = 0;
    }
    if (k < 0) break;
  }
  // Copy c of the input starts c * m * n elements into the buffer.
  int64_t step = m * n;
  for (int k = moving_count - 1; k >= 0; --k) {
    const auto d = static_cast<std::size_t>(moving[static_cast<std::size_t>(k)]);
    strides[d] = step;
    step *= plan.size[d];
  }
}

// Elements from the first to the last an input reads in the m x n block, or
// 0 when a negative stride makes it start elsewhere.
int64_t block_span(int64_t m, int64_t n, int64_t stride_m, int64_t stride_n) {
  if (stride_m < 0 || stride_n < 0) return 0;
  return (m - 1) * stride_m + (n - 1) * stride_n + 1;
}

// Element q * n + r of the block reads element q * stride_m + r * stride_n.
int32_t* fill_index_table(int64_t m, int64_t n, int64_t stride_m, int64_t stride_n, int32_t* table) {
  // Spans fit a vector, so every index fits in int32.
  const auto step_m = static_cast<int32_t>(stride_m);
  const auto step_n = static_cast<int32_t>(stride_n);
  for (int32_t q = 0, row = 0; q < m; ++q, row += step_m) {
    for (int32_t r = 0, index = row; r < n; ++r, index += step_n) *table++ = index;
  }
  // Lanes loaded past the row's end read a valid lane and are never stored.
  return std::fill_n(table, kLookupPadding, 0);
}

// The two inner dims become the plan's row, of `kind`, the inputs stepping
// stride_a and stride_b elements along it.
void merge_inner_dims(Plan& plan, RowKind kind, int64_t stride_a, int64_t stride_b) {
  const auto m_dim = static_cast<std::size_t>(plan.rank - 2);
  plan.size[m_dim] *= plan.size[m_dim + 1];
  plan.stride_out[m_dim] = 1;
  plan.stride_a[m_dim] = stride_a;
  plan.stride_b[m_dim] = stride_b;
  plan.rank -= 1;
  plan.row_kind = kind;
  plan.period = 0;
}

// The two inner dims (m_dim, m_dim + 1) become one block row, when both
// inputs' parts of the block fit in `lookup_lanes` elements.
bool make_block_row(Plan& plan, std::size_t lookup_lanes, ShortRowScratch& scratch) {
  const auto m_dim = static_cast<std::size_t>(plan.rank - 2);
  const auto n_dim = m_dim + 1;
  const int64_t m = plan.size[m_dim];
  const int64_t n = plan.size[n_dim];
  const int64_t span_a = block_span(m, n, plan.stride_a[m_dim], plan.stride_a[n_dim]);
  const int64_t span_b = block_span(m, n, plan.stride_b[m_dim], plan.stride_b[n_dim]);
  const auto lanes = static_cast<int64_t>(lookup_lanes);
  if (m * n > kMaxLookupBlock || span_a == 0 || span_b == 0 || span_a > lanes || span_b > lanes) return false;

  const auto table_size = static_cast<std::size_t>(m * n) + kLookupPadding;
  std::vector<int32_t>& indices = scratch.indices;
  const std::array<int64_t, 6> block = {m, n, plan.stride_a[m_dim], plan.stride_a[n_dim], plan.stride_b[m_dim],
                                        plan.stride_b[n_dim]};
  if (block != scratch.indices_block) {
    indices.resize(2 * table_size);
    fill_index_table(m, n, plan.stride_a[m_dim], plan.stride_a[n_dim], indices.data());
    fill_index_table(m, n, plan.stride_b[m_dim], plan.stride_b[n_dim], indices.data() + table_size);
    scratch.indices_block = block;
  }
  plan.index_a = indices.data();
  plan.index_b = indices.data() + table_size;
  plan.span_a = span_a;
  plan.span_b = span_b;
  merge_inner_dims(plan, RowKind::block, 0, 0);  // each row's inputs start where the block does
  return true;
}

}  // namespace

bool widen_short_rows(Plan& plan, std::size_t element_size, std::size_t lookup_lanes, ShortRowInputs& inputs,
                      ShortRowScratch& scratch) {
  // A periodic row (vp/pv) already reads more than its stride says.
  if (plan.rank < 2 || plan.row_kind == RowKind::vp || plan.row_kind == RowKind::pv) return false;
  const int outer_dims = plan.rank - 2;
  const auto m_dim = static_cast<std::size_t>(outer_dims);
  const auto n_dim = m_dim + 1;
  const int64_t m = plan.size[m_dim];
  const int64_t n = plan.size[n_dim];
  if (static_cast<std::size_t>(n) * element_size >= kShortRowBytes || m * n > kMaxBlockElements) return false;
  if (plan.stride_out[n_dim] != 1 || plan.stride_out[m_dim] != n) return false;

  const BlockLayout layout_a = block_layout(plan.stride_a[m_dim], plan.stride_a[n_dim], n);
  const BlockLayout layout_b = block_layout(plan.stride_b[m_dim], plan.stride_b[n_dim], n);
  if (layout_a != BlockLayout::copied && layout_b != BlockLayout::copied) return false;
  if (make_block_row(plan, lookup_lanes, scratch)) return true;
  const int64_t copies_a = layout_a == BlockLayout::copied ? distinct_positions(plan, plan.stride_a, outer_dims) : 0;
  const int64_t copies_b = layout_b == BlockLayout::copied ? distinct_positions(plan, plan.stride_b, outer_dims) : 0;
  const int64_t copied = (copies_a + copies_b) * m * n;
  if (copied > kMaxCopiedElements || 2 * copied > plan.element_count) return false;

  scratch.copies.resize(static_cast<std::size_t>(copied) * element_size);
  std::byte* target = scratch.copies.data();
  if (layout_a == BlockLayout::copied) {
    copy_blocks(plan, outer_dims, element_size, inputs.a, plan.offset_a, plan.stride_a, target);
    inputs.a = target;
    plan.offset_a = 0;
    target += static_cast<std::size_t>(copies_a * m * n) * element_size;
  }
  if (layout_b == BlockLayout::copied) {
    copy_blocks(plan, outer_dims, element_size, inputs.b, plan.offset_b, plan.stride_b, target);
    inputs.b = target;
    plan.offset_b = 0;
  }

  // The block is now one row: contiguous in out and in every input but a
  // constant one.
  const RowKind kind = layout_a == BlockLayout::constant   ? RowKind::sv
                       : layout_b == BlockLayout::constant ? RowKind::vs
                                                           : RowKind::vv;
  merge_inner_dims(plan, kind, layout_a == BlockLayout::constant ? 0 : 1, layout_b == BlockLayout::constant ? 0 : 1);
  return true;
}

}  // namespace sqdiff::detail
