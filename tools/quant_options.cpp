#include "quant_options.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <system_error>

namespace sqdiff::tools {
namespace {

constexpr const char* kFormat = "a scale and a zero point, e.g. 0.5,-3";

// Reads the whole of [first, last) as a T (from_chars: decimal only, no
// spaces; a leading '+' is allowed as integer_in allows it). Returns
// std::errc::invalid_argument for text that is not one number, else the
// from_chars error (result_out_of_range for a number beyond T).
template <typename T>
std::errc read_whole(const char* first, const char* last, T& value) {
  if (first != last && *first == '+' && first + 1 != last && first[1] != '-' && first[1] != '+') ++first;
  const auto [end, error] = std::from_chars(first, last, value);
  return end == last ? error : std::errc::invalid_argument;
}

// Parses "S,ZP" into `params`; returns what is wrong with `text`, or "".
std::string read_quant_params(const std::string& text, QuantParams& params) {
  const std::size_t comma = text.find(',');
  if (comma == std::string::npos || text.find(',', comma + 1) != std::string::npos) {
    return "\"" + text + "\" is not S,ZP (" + kFormat + ")";
  }
  const std::string scale_text = text.substr(0, comma);
  const std::string zero_point_text = text.substr(comma + 1);

  // from_chars rounds the decimal once, to the nearest float32: the scale the
  // library gets is the float32 a model file would hold for this text.
  float scale = 0.0f;
  const std::errc scale_error = read_whole(scale_text.data(), scale_text.data() + scale_text.size(), scale);
  const double wide = scale_error == std::errc::result_out_of_range ? std::strtod(scale_text.c_str(), nullptr) : 0.0;
  if (wide > 0.0) {
    // A positive decimal too large for float32, or so small that it rounds to 0.
    const bool too_large = wide > 1.0;
    return "the scale " + scale_text +
           (too_large ? " overflows float32 (at most 3.40282347e+38)" : " rounds to 0 as a float32") +
           "; a scale must be a positive finite float32";
  }
  if (scale_error != std::errc() || !std::isfinite(scale) || !(scale > 0.0f)) {
    return "the scale " + (scale_text.empty() ? std::string("\"\"") : scale_text) +
           " is not a positive finite float32 (in \"" + text + "\": " + kFormat + ")";
  }

  int32_t zero_point = 0;
  const std::errc zero_point_error =
      read_whole(zero_point_text.data(), zero_point_text.data() + zero_point_text.size(), zero_point);
  if (zero_point_error == std::errc::result_out_of_range) {
    return "the zero point " + zero_point_text + " is out of range (" +
           std::to_string(std::numeric_limits<int32_t>::min()) + " to " +
           std::to_string(std::numeric_limits<int32_t>::max()) + ")";
  }
  if (zero_point_error != std::errc()) {
    return "the zero point " + (zero_point_text.empty() ? std::string("\"\"") : zero_point_text) +
           " is not an integer (in \"" + text + "\": " + kFormat + ")";
  }
  params = QuantParams{scale, zero_point};
  return "";
}

CLI::Validator quant_params_check() {
  return CLI::Validator([](std::string& text) { return quant_params_problem(text); }, "S,ZP");
}

Activation parse_activation(const std::string& name) {
  if (name.empty() || name == "none") return Activation::none;
  if (name == "relu") return Activation::relu;
  if (name == "relu6") return Activation::relu6;
  if (name == "relu_n1_to_1") return Activation::relu_n1_to_1;
  throw CLI::ValidationError("--activation", "unknown activation " + name);  // the option's check refuses it first
}

}  // namespace

std::string quant_params_problem(const std::string& text) {
  QuantParams params;
  return read_quant_params(text, params);
}

QuantParams parse_quant_params(const std::string& text) {
  QuantParams params;
  const std::string problem = read_quant_params(text, params);
  if (!problem.empty()) throw sqdiff::Error(problem);
  return params;
}

void add_quant_options(CLI::App& run, QuantOptionText& text) {
  const std::string group = "Quantized int8, uint8 and int16 data (SPEC 9; all three --quant-* or none)";
  run.add_option("--quant-a", text.a,
                 "The quantization of a: scale and zero point (a stored q stands for scale * (q - zero_point)), "
                 "e.g. 0.5,-3")
      ->group(group)
      ->check(quant_params_check());
  run.add_option("--quant-b", text.b, "The quantization of b: scale and zero point")
      ->group(group)
      ->check(quant_params_check());
  run.add_option("--quant-out", text.out, "The quantization of the output: scale and zero point")
      ->group(group)
      ->check(quant_params_check());
  run.add_option("--activation", text.activation,
                 "subtract only: TFLite's fused activation clamping the output: none (default), relu, relu6 or "
                 "relu_n1_to_1")
      ->group(group)
      ->check(CLI::IsMember({"none", "relu", "relu6", "relu_n1_to_1"}));
  run.add_option("--rounding", text.rounding,
                 "The fixed-point rounding: double (default; LiteRT's default build) or single (its "
                 "TFLITE_SINGLE_ROUNDING=1 build)")
      ->group(group)
      ->check(CLI::IsMember({"double", "single"}));
  run.add_option("--pot-scale-int16", text.pot_scale_int16,
                 "subtract on int16: on (default) takes LiteRT's power-of-two path when all three scales are "
                 "powers of two; off always takes the general path")
      ->group(group)
      ->check(CLI::IsMember({"on", "off"}));
}

std::optional<QuantizedRun> quantized_run(const QuantOptionText& text, const std::string& op, bool reduce) {
  const int params_given = !text.a.empty() + !text.b.empty() + !text.out.empty();
  const bool options_given = !text.activation.empty() || !text.rounding.empty() || !text.pot_scale_int16.empty();
  if (params_given == 0) {
    if (options_given) {
      throw CLI::ValidationError("--activation, --rounding and --pot-scale-int16",
                                 "they go with --quant-a, --quant-b and --quant-out");
    }
    return std::nullopt;
  }
  if (reduce) {
    throw CLI::ValidationError("--quant-a, --quant-b and --quant-out",
                               "quantized data runs with --op squared_difference or subtract, not --reduce");
  }
  if (params_given != 3) {
    std::string missing;
    const auto note_missing = [&missing](const std::string& value, const char* name) {
      if (value.empty()) missing += std::string(missing.empty() ? "" : " and ") + name;
    };
    note_missing(text.a, "--quant-a");
    note_missing(text.b, "--quant-b");
    note_missing(text.out, "--quant-out");
    throw CLI::ValidationError("--quant-a, --quant-b and --quant-out",
                               "they go together (quantized data needs all three); missing " + missing);
  }
  QuantizedRun run;
  run.a = parse_quant_params(text.a);
  run.b = parse_quant_params(text.b);
  run.out = parse_quant_params(text.out);
  run.options.activation = parse_activation(text.activation);
  if (run.options.activation != Activation::none && op != "subtract") {
    throw CLI::ValidationError("--activation", "squared_difference has no fused activation (SPEC 9): --activation " +
                                                   text.activation + " goes with --op subtract");
  }
  run.options.rounding = text.rounding == "single" ? Requantize::single_rounding : Requantize::double_rounding;
  run.options.pot_scale_int16 = text.pot_scale_int16 != "off";
  return run;
}

}  // namespace sqdiff::tools
