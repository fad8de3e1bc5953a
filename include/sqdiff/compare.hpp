// Comparing two tensors: how far apart a computed tensor is from a reference,
// and whether it is close enough. What `sqdiff compare` and Python's
// sqdiff.compare report, as a library call that both of them and C++ test
// suites use: in one pass, the count, the sum of (a - b)^2, MSE and RMSE
// (exact values rounded once to f64), PSNR, the largest |a - b| and where,
// NaN and inf counts and first positions, the same sums over the pairs where
// both are finite, and NumPy's allclose rule with its worst pair.
//
// Positions are row-major indices into the compared shape (the broadcast
// shape): CompareStats::index_of turns one into a multi-index. Every result
// is the same for any number of threads and any chunking of a streamed
// comparison: counts and sums are exact, maxima keep their first position.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "sqdiff/broadcast.hpp"
#include "sqdiff/dtype.hpp"
#include "sqdiff/tensor_view.hpp"

namespace sqdiff {

// NumPy's np.allclose defaults, taken by the one of atol/rtol not given when
// the other is.
inline constexpr double kDefaultAtol = 1e-8;
inline constexpr double kDefaultRtol = 1e-5;

struct CompareOptions {
  Broadcast broadcast = {BroadcastKind::none, -1};  // shapes must match unless a mode is given
  // The tolerance gate, when either is set: NumPy's allclose rule per pair,
  // |a - b| <= atol + rtol * |b| (the other one takes its default above).
  std::optional<double> atol, rtol;
  bool equal_nan = false;             // two NaNs at one position pass the gate (needs atol or rtol)
  std::optional<double> peak;         // PSNR's peak; integer types default to their range (255 for u8)
  std::optional<double> fail_above;   // the MSE gate: fails when the MSE is above it, or NaN
  int threads = 0;                    // 0 = library default (sqdiff::default_threads())
  int64_t chunk_elements = int64_t{4} << 20;  // positions per unit of work (and per progress call)
  // Called, from the worker threads and possibly at once from several, after
  // positions [first, first + count) of the compared shape were compared
  // (each once): a progress bar, or releasing the pages of mapped inputs.
  std::function<void(int64_t first, int64_t count)> on_progress;
};

// The tolerance rule applied, its defaults filled in.
struct CompareTolerance {
  double atol = 0;
  double rtol = 0;
  bool equal_nan = false;
};

// The largest |a - b| over some of the pairs, and where it first occurs.
struct LargestDifference {
  int64_t position = -1;  // row-major in CompareStats::shape; -1: no such pair (then value and exact are 0)
  // |a - b| in f64: for floats the difference of the inputs widened to f64,
  // rounded once; for integers the exact difference rounded once.
  double value = 0;
  uint64_t exact = 0;  // integer types: the exact |a - b|; 0 for floats
};

struct CompareStats {
  DType dtype = DType::f32;
  Shape a_shape;  // the inputs' own shapes
  Shape b_shape;
  Shape shape;    // the compared positions: the broadcast shape
  Broadcast broadcast = {BroadcastKind::none, -1};
  bool broadcasted = false;  // an input's shape differs from `shape`
  int64_t elements = 0;      // positions compared: a broadcast element counts each time it is compared

  // NaN and inf counts in each input, and the first position of each (-1: none).
  int64_t nan_a = 0, nan_b = 0, inf_a = 0, inf_b = 0;
  int64_t first_nan_a = -1, first_nan_b = -1, first_inf_a = -1, first_inf_b = -1;
  int64_t differing = 0;  // pairs that are not equal; two NaNs count as equal, +0 equals -0

  // Over all pairs: the exact sum of (a - b)^2 and mean, each rounded once to
  // f64 (bit for bit sum_/mean_squared_difference with an f64 output).
  double sum_squares = 0, mse = 0, rmse = 0;
  double max_abs_diff = 0;    // largest.value
  LargestDifference largest;  // over the pairs whose |a - b| is not NaN (an equal pair, inf vs inf too, gives 0)
  std::optional<double> peak;  // nullopt for floats without CompareOptions::peak
  std::optional<double> psnr;  // 20 log10(peak) - 10 log10(mse); +inf when mse is 0

  // The same over the pairs where a and b are both finite.
  int64_t finite_elements = 0;
  double finite_sum_squares = 0, finite_mse = 0, finite_rmse = 0;
  LargestDifference finite_largest;

  // The tolerance gate, when one was asked for: the pairs out of tolerance,
  // the one with the largest |a - b| (a NaN difference ranks above every
  // number), and its |a - b| / |b|.
  std::optional<CompareTolerance> tolerance;
  int64_t out_of_tolerance = 0;  // 0 when no tolerance is set
  LargestDifference worst;
  double worst_rel_error = 0;

  std::optional<double> fail_above;
  bool identical = false;  // same shapes and no differing pair
  bool passed = true;      // every gate asked for holds: out_of_tolerance == 0, mse <= fail_above

  // The multi-index of a row-major position of `shape`.
  Shape index_of(int64_t position) const;
};

// Throws Error naming what is wrong: threads < 0, atol/rtol not finite and
// >= 0, equal_nan without atol or rtol, a peak that is not finite and > 0,
// fail_above NaN or < 0, chunk_elements < 1. compare() and Comparison call it
// first.
void check_compare_options(const CompareOptions& options);

// Compares a with b (the reference: rtol scales |b|), of one dtype, with
// shapes that match or broadcast under options.broadcast, any strides. Throws
// Error for bad options or views (mixed dtypes, shapes that do not broadcast,
// a null pointer, an extent that does not fit) before reading anything.
CompareStats compare(const ConstTensorView& a, const ConstTensorView& b, const CompareOptions& options = {});

// The same, streamed: the tensors of `shape` arrive in chunks, each a's and
// b's next elements in row-major order (a chunk of any shape: its own
// row-major order continues the tensor's), and finish() gives what compare()
// would. For inputs larger than memory, or produced piece by piece. Each
// chunk is summed exactly (it is not read twice), so a streamed comparison
// costs more per element than compare() on the whole tensors.
class Comparison {
 public:
  // Throws Error for bad options, an invalid dtype or shape, or a broadcast
  // mode other than none (the chunks of a and b have one shape).
  Comparison(DType dtype, const Shape& shape, const CompareOptions& options = {});
  Comparison(const Comparison& other);  // copies the running totals: the copy continues on its own
  Comparison& operator=(const Comparison& other);
  Comparison(Comparison&&) noexcept;
  Comparison& operator=(Comparison&&) noexcept;
  ~Comparison();
  // Throws Error, and adds nothing, when the chunks' dtypes or shapes differ
  // from each other or from the comparison's dtype, or they hold more
  // elements than the shape has left.
  void add(const ConstTensorView& a_chunk, const ConstTensorView& b_chunk);
  int64_t elements_added() const { return added_; }
  // Throws Error until every element of the shape was added.
  CompareStats finish() const;

 private:
  DType dtype_;
  Shape shape_;
  CompareOptions options_;
  int64_t total_ = 0;
  int64_t added_ = 0;
  // The statistics and exact partial sums so far (src/compare/compare_pass.hpp).
  struct Totals;
  std::unique_ptr<Totals> totals_;
};

}  // namespace sqdiff
