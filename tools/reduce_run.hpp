// `sqdiff run --reduce sum|mean`: the sum or mean of (a - b)^2 over axes of
// the broadcast shape (sqdiff::sum_ / mean_squared_difference, SPEC 7),
// written to a .npy file under the same output-target rules as `run`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sqdiff/sqdiff.hpp"

namespace sqdiff::tools {

struct ReduceRequest {
  std::string kind;  // "sum" or "mean"
  std::string a_path;
  std::string b_path;
  std::string out_path;
  sqdiff::Broadcast broadcast = {};
  std::optional<std::string> axes;  // "0,2", "-1"; "none" reduces nothing; nullopt: all axes
  bool keepdims = false;
  std::string dtype;      // the inputs' dtype, as for run's --dtype
  std::string out_dtype;  // "" = NumPy's default (SPEC 7's Python default column)
  int threads = 0;
};

// Throws sqdiff::Error; the output appears complete or not at all.
void run_reduction(const ReduceRequest& request);

// "0,2" -> {0, 2}, "none" -> {}; throws sqdiff::Error naming --axes otherwise.
sqdiff::Shape parse_axes(const std::string& text);

// What is wrong with --axes TEXT (not a list of integers, an axis beyond
// int64), or "" when parse_axes takes it: for the command line's check.
std::string axes_problem(const std::string& text);

// The names --out-dtype takes: the output types of SPEC 7's table (and the
// alias bfloat16). Which of them suits the inputs is the library's check.
std::vector<std::string> out_dtype_names();

}  // namespace sqdiff::tools
