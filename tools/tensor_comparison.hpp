// The core of `sqdiff compare` and sqdiff.compare(): the report over two
// tensors in memory (memory-mapped files for the program, arrays for Python),
// aligned to their broadcast shape. Built into one static library that the
// program and the Python module both link (tools/compare_core.cmake), so the
// two give the same report by construction.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "difference_stats.hpp"
#include "sqdiff/broadcast.hpp"
#include "sqdiff/dtype.hpp"

namespace sqdiff::tools {

// Two tensors of one dtype, each with strides in elements aligned to `shape`
// (0 on the dims where it is broadcast).
struct AlignedPair {
  sqdiff::DType dtype = sqdiff::DType::f32;
  sqdiff::Shape a_shape;  // the inputs' own shapes
  sqdiff::Shape b_shape;
  sqdiff::Shape shape;  // the broadcast shape: the compared positions
  sqdiff::Broadcast mode;
  const void* a = nullptr;
  sqdiff::Shape a_strides;
  const void* b = nullptr;
  sqdiff::Shape b_strides;
};

struct CompareOptions {
  std::optional<Tolerance> tolerance;  // the allclose gate, when asked for
  std::optional<double> fail_above;    // the MSE gate, when asked for
  std::optional<double> peak;          // PSNR's peak; integer types default to their range
  int threads = 0;                     // 0: one per core
  int64_t chunk_elements = int64_t{4} << 20;  // positions of the broadcast shape per chunk
};

// NumPy's np.allclose defaults, taken by the one of --atol/--rtol (atol=/rtol=)
// not given when the other is.
inline constexpr double kDefaultAtol = 1e-8;
inline constexpr double kDefaultRtol = 1e-5;

struct TensorComparison {
  sqdiff::DType dtype = sqdiff::DType::f32;
  sqdiff::Shape a_shape;
  sqdiff::Shape b_shape;
  sqdiff::Shape shape;
  sqdiff::Broadcast mode;
  bool broadcasted = false;  // an input's shape differs from `shape`
  int64_t elements = 0;
  // The exact sum of (a - b)^2 and the exact mean, each rounded once to f64:
  // bit for bit sqdiff::sum_ / mean_squared_difference with an f64 output.
  double sum_of_squares = 0;
  double mse = 0;
  double rmse = 0;             // sqrt(mse)
  std::optional<double> peak;  // nullopt for floats without a peak
  std::optional<double> psnr;  // 20 log10(peak) - 10 log10(mse); +inf when mse is 0
  DifferenceStats stats;
  // The same sums over the pairs where a and b are both finite (stats.finite_pairs).
  double finite_sum_of_squares = 0;
  double finite_mse = 0;
  double finite_rmse = 0;
  bool identical = false;  // same shapes and no differing pair
  std::optional<Tolerance> tolerance;
  std::optional<double> fail_above;
  bool passed = true;  // every gate asked for holds (no gate: true)
};

// Throws sqdiff::Error for options out of range (check_compare_options).
// `on_chunk` (optional) is called from the worker threads after each chunk
// with the chunk's first elements in a and b and its element count.
TensorComparison compare_tensors(const AlignedPair& pair, const CompareOptions& options,
                                 const std::function<void(const void* a, const void* b, int64_t elements)>& on_chunk = {});

// Throws sqdiff::Error naming what is wrong: threads < 0, a peak that is not
// finite and > 0, atol/rtol not finite and >= 0, fail_above NaN or < 0.
void check_compare_options(const CompareOptions& options);

// The whole-set verdict: the tensors compared by name, and the names only one
// side holds (both fail the gate).
bool set_passed(const std::vector<TensorComparison>& tensors, std::size_t missing, std::size_t extra);

}  // namespace sqdiff::tools
