// The sum of (a - b)^2 of a comparison (sqdiff/compare.hpp), chunk by chunk: the one place
// that says how a chunk's squares are summed, kept apart from the per-pair
// statistics (difference_stats.hpp). Float inputs are summed into the
// library's bounded partial states (the eager fast path's sums with their
// error bounds, bounded_partial_sums.hpp), which finish() rounds when the
// bound decides; when it does not (rare: a sum on a rounding boundary), the
// caller sums the chunks again with exact states (`exact`: the library's
// exact partial states, which integer inputs always use). Contiguous float32
// chunks of finite pairs are summed by the statistics' pass itself
// (difference_stats_and_squares), and their sums join the totals here.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sqdiff/broadcast.hpp"
#include "sqdiff/dtype.hpp"

namespace sqdiff::detail {

struct SquareSums;

class ChunkSquares {
 public:
  ChunkSquares(DType dtype, bool exact);

  // A total holding the sum of nothing, to add chunks into.
  std::vector<uint64_t> empty_total() const { return empty_; }
  // total += the sum over the chunk: `shape` walked from `a` and `b` with
  // strides in elements (0 on broadcast dims).
  void add_chunk(std::vector<uint64_t>& total, const void* a, const Shape& a_strides, const void* b,
                 const Shape& b_strides, const Shape& shape);
  // The same over the chunk's pairs where a and b are both finite only (the
  // others are skipped; called for the few chunks that hold a NaN or an inf).
  void add_finite_pairs(std::vector<uint64_t>& total, const void* a, const Shape& a_strides, const void* b,
                        const Shape& b_strides, const Shape& shape);
  // total += a float32 chunk's sum as the fused pass over its statistics
  // made it (difference_stats_and_squares), bounded as SquareRowDouble's
  // sums are. Bounded totals only.
  void add_fused_squares(std::vector<uint64_t>& total, const SquareSums& sums);
  // into += from (totals of other chunks).
  void combine(std::vector<uint64_t>& into, const std::vector<uint64_t>& from) const;
  // The sum, or the mean over `count` pairs, rounded once to f64; nullopt
  // when a bounded total's bound leaves the rounding undecided (then only
  // exact totals decide). Exact totals always give a value.
  std::optional<double> finish(const std::vector<uint64_t>& total, int64_t count, bool mean) const;

 private:
  DType dtype_;
  bool exact_;
  std::vector<uint64_t> empty_;
  std::vector<uint64_t> scratch_;                // one chunk's partial state
  std::vector<unsigned char> a_pairs_, b_pairs_;  // add_finite_pairs' compacted inputs
};

}  // namespace sqdiff::detail
