// `sqdiff run`'s options for quantized data (SPEC 9): --quant-a S,ZP,
// --quant-b S,ZP, --quant-out S,ZP, --activation, --rounding and
// --pot-scale-int16. Their text is checked as the command line is read
// (status 2); whether a zero point suits the files' type is the library's
// check when the job runs (status 1).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "sqdiff/sqdiff.hpp"

namespace sqdiff::tools {

// The options as given; "" where one was left out.
struct QuantOptionText {
  std::string a;           // "S,ZP"
  std::string b;
  std::string out;
  std::string activation;  // none, relu, relu6, relu_n1_to_1
  std::string rounding;    // double, single
  std::string pot_scale_int16;  // on, off
};

// What a quantized run passes to sqdiff::quantized_squared_difference or
// quantized_subtract (the broadcast mode and threads are filled in by run).
struct QuantizedRun {
  sqdiff::QuantParams a;
  sqdiff::QuantParams b;
  sqdiff::QuantParams out;
  sqdiff::QuantizedOptions options;
};

// "0.5,-3" -> {0.5f, -3}: a scale that rounds to a positive finite float32
// (decimal, e.g. 0.5 or 3.9e-3) and a decimal zero point that fits int32.
// Returns what is wrong with `text`, or "" when it is well-formed.
std::string quant_params_problem(const std::string& text);
sqdiff::QuantParams parse_quant_params(const std::string& text);  // throws sqdiff::Error

// Adds the six options to `run`, storing their text in `text`.
void add_quant_options(CLI::App& run, QuantOptionText& text);

// The quantized run the options ask for, or nullopt when none of them was
// given. Throws CLI::ValidationError (a command-line mistake) for a partial
// set (--quant-a, --quant-b and --quant-out go together), --activation,
// --rounding or --pot-scale-int16 without them, an activation other than none
// on squared_difference, and any of them with --reduce (`reduce` true).
std::optional<QuantizedRun> quantized_run(const QuantOptionText& text, const std::string& op, bool reduce);

}  // namespace sqdiff::tools
