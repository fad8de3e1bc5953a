#include "tflite/operator_check.hpp"

#include <algorithm>
#include <cstdio>

#include "sqdiff/broadcast.hpp"
#include "sqdiff/error.hpp"

namespace sqdiff::tools::tflite {
namespace {

std::string type_list(std::initializer_list<int32_t> types) {
  std::string text;
  for (const int32_t t : types) text += (text.empty() ? "" : ", ") + tensor_type_name(t);
  return text;
}

}  // namespace

std::string float_text(float v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", static_cast<double>(v));
  return buffer;
}

std::string shape_text(const sqdiff::Shape& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string tensor_summary(const TensorInfo& t) {
  std::string s = tensor_type_name(t.type) + " " + shape_text(t.shape);
  if (t.quant) s += " (scale " + float_text(t.quant->scale) + ", zero point " + std::to_string(t.quant->zero_point) + ")";
  if (t.per_axis) s += " (" + std::to_string(t.scale_count) + " scales)";
  if (t.constant) s += " constant";
  return s;
}

std::string activation_name(FusedActivation a) {
  switch (a) {
    case FusedActivation::none: return "NONE";
    case FusedActivation::relu: return "RELU";
    case FusedActivation::relu_n1_to_1: return "RELU_N1_TO_1";
    case FusedActivation::relu6: return "RELU6";
    case FusedActivation::tanh: return "TANH";
    case FusedActivation::sign_bit: return "SIGN_BIT";
  }
  return "activation " + std::to_string(static_cast<int>(a));
}

bool OperatorCheck::operands(std::size_t inputs) {
  if (op_.inputs.size() != inputs || op_.outputs.size() != 1) {
    problem("has " + std::to_string(op_.inputs.size()) + " inputs and " + std::to_string(op_.outputs.size()) +
            " outputs, expected " + std::to_string(inputs) + " and 1");
    return false;
  }
  const bool left_out = std::any_of(op_.inputs.begin(), op_.inputs.end(), [](int32_t t) { return t < 0; }) ||
                        op_.outputs[0] < 0;
  if (left_out) {
    problem("an operand is left out (tensor index -1)");
    return false;
  }
  if (output().has_data) problem("its output tensor " + in_quotes(output().name) + " is a constant");
  std::vector<int32_t> all = op_.inputs;
  all.push_back(op_.outputs[0]);
  for (const int32_t t : all) {
    if (tensor(t).is_variable) problem(model_.describe_tensor(t) + " is a variable tensor, which sqdiff does not run");
  }
  return !failed();
}

bool OperatorCheck::type_in(const TensorInfo& t, std::initializer_list<int32_t> types, const std::string& what) {
  if (std::find(types.begin(), types.end(), t.type) != types.end()) return true;
  problem(what + " has type " + tensor_type_name(t.type) + ", not one sqdiff tflite runs for " + op_.op_name() + " (" +
          type_list(types) + ")");
  return false;
}

bool OperatorCheck::one_type(std::initializer_list<int32_t> types) {
  const int32_t type = output().type;
  const bool same = std::all_of(op_.inputs.begin(), op_.inputs.end(), [&](int32_t t) { return tensor(t).type == type; });
  if (!same) {
    std::string list;
    for (const int32_t t : op_.inputs) list += (list.empty() ? "" : ", ") + tensor_type_name(tensor(t).type);
    problem("its tensors' types differ (" + list + " -> " + tensor_type_name(type) +
            "): TFLite takes one type for its inputs and the output");
    return false;
  }
  if (std::find(types.begin(), types.end(), type) != types.end()) return true;
  problem("type " + tensor_type_name(type) + " is not one sqdiff tflite runs for " + op_.op_name() + " (" +
          type_list(types) + ")");
  return false;
}

void OperatorCheck::broadcast_to_output() {
  const TensorInfo& a = input(0);
  const TensorInfo& b = input(1);
  try {
    const sqdiff::Shape shape = sqdiff::broadcast_shape(a.shape, b.shape);
    if (shape != output().shape) {
      problem("the inputs " + shape_text(a.shape) + " and " + shape_text(b.shape) + " broadcast to " +
              shape_text(shape) + ", but the output tensor " + in_quotes(output().name) + " has shape " +
              shape_text(output().shape));
    }
  } catch (const sqdiff::Error&) {
    problem("the input shapes " + shape_text(a.shape) + " and " + shape_text(b.shape) +
            " do not broadcast (NumPy rules, as TFLite's)");
  }
}

void OperatorCheck::shape_of_output(const TensorInfo& t, const std::string& what) {
  if (t.shape != output().shape) {
    problem(what + " has shape " + shape_text(t.shape) + ", but the output tensor " + in_quotes(output().name) +
            " has shape " + shape_text(output().shape));
  }
}

bool OperatorCheck::quantized(std::initializer_list<int32_t> tensors) {
  bool complete = true;
  for (const int32_t t : tensors) {
    const TensorInfo& info = tensor(t);
    if (info.per_axis) {
      problem(model_.describe_tensor(t) + " is quantized per axis (" + std::to_string(info.scale_count) +
              " scales along dim " + std::to_string(info.quantized_dimension) +
              "): sqdiff runs per-tensor quantization only");
      complete = false;
    } else if (!info.quant_problem.empty()) {
      problem(info.quant_problem);
      complete = false;
    } else if (!info.quant) {
      problem(model_.describe_tensor(t) + " is " + tensor_type_name(info.type) +
              " without quantization parameters (a scale and a zero point)");
      complete = false;
    }
  }
  return complete;
}

void OperatorCheck::options(uint8_t expected, const char* name) {
  // An options table of another operator's kind is LiteRT's "wrong options" model error.
  if (op_.options_type != 0 && op_.options_type != expected) {
    problem("its builtin options are of type " + std::to_string(op_.options_type) + ", not " + name + " (" +
            std::to_string(expected) + ")");
  }
}

void OperatorCheck::activation_runs() {
  switch (op_.activation) {
    case FusedActivation::none:
    case FusedActivation::relu:
    case FusedActivation::relu_n1_to_1:
    case FusedActivation::relu6: return;
    default:
      problem("fused activation " + activation_name(op_.activation) +
              " is not one sqdiff runs (NONE, RELU, RELU_N1_TO_1, RELU6)");
  }
}

}  // namespace sqdiff::tools::tflite
