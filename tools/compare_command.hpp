// The `sqdiff compare` subcommand: how far apart two .npy arrays are (sum of
// squares, MSE, RMSE, PSNR, the largest |a - b| and where, NaN and inf counts
// and first positions, the same over the finite pairs), with gates a CI job
// can use (--atol/--rtol, --fail-above), in one streaming pass over
// memory-mapped files of any size; or two sets of arrays (.npz files or
// folders of .npy files) compared tensor by tensor by name. The statistics
// are the library's (sqdiff/compare.hpp), the report compare_report.hpp's,
// which the Python module shares.
#pragma once

#include <CLI/CLI.hpp>

namespace sqdiff::tools {

// Exit status when a gate fails (--atol/--rtol, --fail-above, names missing
// from a set); 1 and 2 are errors (main.cpp).
inline constexpr int kExitGateFailed = 3;

void register_compare_command(CLI::App& app);

}  // namespace sqdiff::tools
