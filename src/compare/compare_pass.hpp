// One pass of a comparison over two tensors aligned to the compared shape:
// the positions split into chunks of consecutive row-major positions
// (sqdiff/chunk_plan.hpp), taken by worker threads, each chunk's statistics
// (difference_stats.hpp) and sums of squares (chunk_squares.hpp) merged into
// totals that do not depend on which worker took which chunk.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "compare/difference_stats.hpp"
#include "sqdiff/broadcast.hpp"
#include "sqdiff/dtype.hpp"

namespace sqdiff::detail {

// Two tensors of one dtype, each with strides in elements over `shape` (0 on
// the dims where it is broadcast).
struct AlignedPair {
  DType dtype = DType::f32;
  Shape shape;
  const void* a = nullptr;
  Shape a_strides;
  const void* b = nullptr;
  Shape b_strides;
};

struct PassSettings {
  Tolerance tolerance;
  bool exact = false;  // exact partial states, else bounded ones (chunk_squares.hpp)
  int threads = 1;     // workers, at most one per chunk
  int64_t chunk_elements = 1;
  int64_t first = 0;   // the compared position of the pair's first element (a streamed chunk's offset)
  // Called after each chunk with its first position (offset by `first`) and element count.
  std::function<void(int64_t first, int64_t count)> on_chunk;
};

// The pass's statistics and partial states (of all pairs, and of the pairs
// where both are finite), in ChunkSquares' layout for the dtype and `exact`.
struct PassTotals {
  DifferenceStats stats;
  std::vector<uint64_t> all;
  std::vector<uint64_t> finite;
};

// The sums and means rounded once to f64; nullopt where a bounded state's
// bound leaves the rounding undecided.
struct RoundedSums {
  std::optional<double> sum, mean, finite_sum, finite_mean;
  bool decided() const { return sum && mean && finite_sum && finite_mean; }
};

PassTotals compare_pass(const AlignedPair& pair, const PassSettings& settings);

// totals with nothing in them, to merge passes into (Comparison's running totals).
PassTotals empty_totals(DType dtype, bool exact);
// into += from, both of `dtype` and `exact`.
void merge_totals(DType dtype, bool exact, PassTotals& into, const PassTotals& from);
// The totals' sums over `elements` pairs (and their finite pairs), rounded.
RoundedSums round_sums(DType dtype, bool exact, const PassTotals& totals, int64_t elements);

}  // namespace sqdiff::detail
