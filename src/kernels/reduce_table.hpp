// The table of shape-free kernels that sum squared differences of float
// inputs approximately, for the SIMD target chosen at run time. Each kernel
// widens its inputs to f64 exactly and accumulates in a fixed structure whose
// rounding error the caller bounds (reduce/square_bounds.hpp): that bound, not
// the order of the additions, is what lets the caller round correctly.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sqdiff/dtype.hpp"

namespace sqdiff::detail {

// A double-double sum of block sums: hi + lo, and how many double-double
// additions made it (the bound grows with them). `needs_exact` is set when an
// f64 operand is too large or too small (or not finite) for the bound; the
// caller then sums that output exactly.
struct SquareSums {
  double hi = 0;
  double lo = 0;
  int64_t additions = 0;
  bool needs_exact = false;
};

// Most terms any f64 lane chains by FMA before its block is folded into the
// double-double, and the deepest lane tree of a fold: the single-precision
// kernels' rounding error per term is at most (kChain + kTree + 2) units.
inline constexpr int kChain = 64;
inline constexpr int kTree = 16;

// The operands of a row or column: both read along it (vv), or one of them
// one element for the whole row (vs: b; sv: a).
enum class Operands : uint8_t { vv, vs, sv };
inline constexpr int kOperandKinds = 3;

// Adds the n terms (a[i] - b[i])^2 of one row to `sums`. Single precision: f64
// FMA chains in lanes; double: exact-product terms in double-double lanes
// (for f64 outputs, whose rounding needs the error ~2^-90).
using SquareRowKernel = void (*)(const void* a, const void* b, std::size_t n, SquareSums* sums);

// acc[i] += (a[i] - b[i])^2 for i < n, one FMA per column (single precision);
// the caller ends every chain of kChain rows with the fold kernel below.
using SquareColumnKernel = void (*)(const void* a, const void* b, std::size_t n, double* acc, bool* needs_exact);

// The row that ends a chain: acc[i] + (a[i] - b[i])^2 added to (hi[i], lo[i])
// by TwoSum (hi the rounded sum, lo += its error), and acc[i] set to 0.
using SquareColumnFoldKernel = void (*)(const void* a, const void* b, std::size_t n, double* acc, double* hi,
                                        double* lo, bool* needs_exact);

// (hi[i], lo[i]) += (a[i] - b[i])^2 in double-double, per column (double precision).
using SquareColumnDoubleKernel = void (*)(const void* a, const void* b, std::size_t n, double* hi, double* lo,
                                          bool* needs_exact);

// sums[m * n_count + n] = sum over k < k_count of (x[m][k] - y[n][k])^2 in
// single precision (f64 lanes, chains of at most kChain per lane: k_count at
// most kChain * lanes), for m < m_count, n < n_count. Rows are contiguous;
// row m of x starts x_row_stride elements after row m - 1.
using PairwiseKernel = void (*)(const void* x, int64_t x_row_stride, std::size_t m_count, const void* y,
                                int64_t y_row_stride, std::size_t n_count, std::size_t k_count, double* sums);

// The pairwise layout for few terms per output (K up to kChain) and for f64
// outputs: one output per f64 lane instead of K across the lanes. y is
// packed transposed into panels of kPanelVectors vectors of outputs: panel p
// holds yt[(p * k_count + k) * width + w] = y[p * width + w][k] as doubles
// (width = kPanelVectors * lanes, `lanes` below: the x86 and fixed-width
// targets' vectors are always that wide; rows past n_count are zeros), and
// row m of the sums is panels * width doubles.
inline constexpr std::size_t kPanelVectors = 4;

// sums[m * n_stride + n] = sum over k < k_count of (x[m][k] - y[n][k])^2, one
// f64 FMA chain of k_count (at most kChain) terms per lane: the single
// precision bound of the blocked kernel holds. n_stride = panels * width.
using PairwiseLanesKernel = void (*)(const void* x, int64_t x_row_stride, std::size_t m_count, const double* panels,
                                     std::size_t panel_count, std::size_t k_count, double* sums);

// The same sums in double-double lanes (hi + lo, exact-product terms as the
// double-precision rows'): k_count terms per lane, bounded by bound_double
// with chain k_count (reduce/square_bounds.hpp). f64 inputs must lie within
// the fast bound's range (the caller checks: these kernels do not flag).
using PairwiseLanesDoubleKernel = void (*)(const void* x, int64_t x_row_stride, std::size_t m_count,
                                           const double* panels, std::size_t panel_count, std::size_t k_count,
                                           double* hi, double* lo);

// The f64 pairwise expansion (reduce-inl.h, where the bound is derived):
// per row of `row_count` rows of k_count elements (row_stride apart), the
// split v1, r (and v itself when parts is 3) at split[i / group * group_stride
// + i % group + k * k_stride + part * part_stride], and the row's constants
// (sh, sl, R, n1, nr, n) at consts[i * consts_row + j * consts_part].
using ExpansionPackKernel = void (*)(const void* rows, int64_t row_stride, std::size_t row_count,
                                     std::size_t k_count, double* split, std::size_t parts, std::size_t group,
                                     std::size_t group_stride, std::size_t k_stride, std::size_t part_stride,
                                     double* consts, std::size_t consts_row, std::size_t consts_part);

// x's packed rows (x_split 2 k_count doubles a row: x1, rx pairs; x_consts 8
// doubles a row) against y's groups of kExpansionVectors vectors of outputs
// (each k_count runs of y1, ry, y of kExpansionVectors * lanes doubles, one
// group after the other: read front to back by each block of rows; y_consts
// six arrays of n_stride = panel_count * kPanelVectors * lanes): out[m *
// n_stride + n] the correctly rounded f64 output, or NaN where the bound does
// not decide it; undecided[m] how many of row m's n_stride are NaN (the
// columns past N included).
inline constexpr std::size_t kExpansionVectors = 2;
using PairwiseExpansionKernel = void (*)(const double* x_split, const double* x_consts, std::size_t m_count,
                                         const double* y_panels, const double* y_consts, std::size_t panel_count,
                                         std::size_t k_count, double* out, uint32_t* undecided);

struct SquareKernels {
  SquareRowKernel row[kOperandKinds];
  SquareRowKernel row_double[kOperandKinds];
  SquareColumnKernel column[kOperandKinds];
  SquareColumnFoldKernel column_fold[kOperandKinds];
  SquareColumnDoubleKernel column_double[kOperandKinds];
  PairwiseKernel pairwise;
  PairwiseLanesKernel pairwise_lanes;
  PairwiseLanesDoubleKernel pairwise_lanes_double;
  ExpansionPackKernel expansion_pack;
  std::size_t lanes;  // f64 lanes of a vector: a pairwise k_count may be up to kChain * lanes
};

// round_single_block_to_f32 (reduce/square_bounds.hpp) on n sums: out[i] the
// f32 each decided sum rounds to; returns how many were undecided and writes
// their indices to `undecided` (room for n), whose outputs hold garbage.
using RoundToF32Kernel = std::size_t (*)(const double* sums, std::size_t n, double relative, float* out,
                                         uint32_t* undecided);

// round_double_lanes_to_f64 (reduce/square_bounds.hpp) on n double-double
// sums hi[i] + lo[i]: out[i] the f64 each decided sum rounds to; returns how
// many were undecided and writes their indices to `undecided` (room for n).
using RoundToF64Kernel = std::size_t (*)(const double* hi, const double* lo, std::size_t n, double relative,
                                         double* out, uint32_t* undecided);

struct ReduceKernelTable {
  int64_t target;
  SquareKernels squares[4];  // f16, bf16, f32, f64
  RoundToF32Kernel round_to_f32;
  RoundToF64Kernel round_to_f64;
  PairwiseExpansionKernel pairwise_expansion;

  const SquareKernels& for_input(DType dtype) const { return squares[static_cast<int>(dtype)]; }
};

// The table for the best target the CPU supports (honours hwy's
// SetSupportedTargetsForTest, so tests can run every target).
const ReduceKernelTable& reduce_kernel_table();

}  // namespace sqdiff::detail
