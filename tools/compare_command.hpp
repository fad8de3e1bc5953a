// The `sqdiff compare` subcommand: how far apart two .npy arrays are (sum of
// squares, MSE, RMSE, PSNR, the largest |a - b| and where, NaN and inf
// counts), in one streaming pass over memory-mapped files of any size.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "difference_stats.hpp"
#include "sqdiff/sqdiff.hpp"

namespace sqdiff::tools {

struct CompareRequest {
  std::string a_path;
  std::string b_path;
  sqdiff::Broadcast broadcast = {};
  std::string dtype;  // as for `run`: "" = as stored; "bf16" reads "<u2" files as bf16 bits
  int threads = 0;    // 0: one per core
  bool quiet = false;
  std::optional<double> peak;  // PSNR's peak; integer types default to their range
  int64_t chunk_elements = int64_t{4} << 20;  // positions of the broadcast shape per chunk
};

struct CompareResult {
  sqdiff::DType dtype = sqdiff::DType::f32;
  sqdiff::Shape a_shape;
  sqdiff::Shape b_shape;
  sqdiff::Shape shape;  // the broadcast shape: the compared positions
  int64_t elements = 0;
  // The exact sum of (a - b)^2 and the exact mean, each rounded once to f64:
  // bit for bit sqdiff::sum_ / mean_squared_difference with an f64 output.
  double sum_of_squares = 0;
  double mse = 0;
  double rmse = 0;                // sqrt(mse)
  std::optional<double> peak;     // nullopt for floats without --peak
  std::optional<double> psnr;     // 10 log10(peak^2 / mse); +inf when mse is 0
  DifferenceStats stats;
  bool identical = false;         // same shape and no differing pair
};

// Throws sqdiff::Error for unreadable files, mixed dtypes, shapes that do not
// broadcast and bad options.
CompareResult compare_npy(const CompareRequest& request);

void register_compare_command(CLI::App& app);

}  // namespace sqdiff::tools
