// Checking one operator of a .tflite model before anything runs: the checks
// every operator kind (operator_kind.hpp) composes, each problem a sentence
// that names the operator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "tflite/tflite_model.hpp"

namespace sqdiff::tools::tflite {

// What the check found for one operator.
struct OpCheck {
  std::size_t op = 0;                 // index into Model::operators
  bool supported = false;             // a kind sqdiff tflite runs
  std::string summary;                // "INT8 [2,3] (scale 0.5, zero point 1) - ... -> ..."
  std::vector<std::string> problems;  // each a full sentence naming the operator
  bool ok() const { return supported && problems.empty(); }
};

// "INT8 [2,3] (scale 0.5, zero point -1) constant"
std::string tensor_summary(const TensorInfo& t);
// "[2,3]"
std::string shape_text(const sqdiff::Shape& shape);
// A float32 in 9 significant digits, which read back as it ("0.0500000007").
std::string float_text(float v);
// LiteRT's name of an activation ("RELU6").
std::string activation_name(FusedActivation activation);

class OperatorCheck {
 public:
  OperatorCheck(const Model& model, const OperatorInfo& op, OpCheck& result)
      : model_(model), op_(op), result_(result), where_(op.describe() + ": ") {}

  const Model& model() const { return model_; }
  const OperatorInfo& op() const { return op_; }
  // Input i and the output (only after operands() held).
  const TensorInfo& input(std::size_t i) const { return tensor(op_.inputs[i]); }
  const TensorInfo& output() const { return tensor(op_.outputs[0]); }
  const TensorInfo& tensor(int32_t index) const { return model_.tensors[static_cast<std::size_t>(index)]; }

  void problem(const std::string& what) { result_.problems.push_back(where_ + what); }
  bool failed() const { return !result_.problems.empty(); }
  void summary(std::string text) { result_.summary = std::move(text); }

  // `inputs` inputs and one output, none of them left out (index -1); the
  // output not a constant and no operand a variable tensor.
  bool operands(std::size_t inputs);
  // The tensor's type is one of `types` (LiteRT's TensorType values); `what`
  // names it in the message ("the input").
  bool type_in(const TensorInfo& t, std::initializer_list<int32_t> types, const std::string& what);
  // The inputs and the output have one type, one of `types`.
  bool one_type(std::initializer_list<int32_t> types);
  // Inputs 0 and 1 broadcast (NumPy's rules, as TFLite's) to the output's shape.
  void broadcast_to_output();
  // The tensor has the output's shape.
  void shape_of_output(const TensorInfo& t, const std::string& what);
  // Each of these tensors has one scale and one zero point (per-axis
  // quantization and missing parameters refused).
  bool quantized(std::initializer_list<int32_t> tensors);
  // The options table, when there is one, is `expected` (its BuiltinOptions
  // value), named `name` in the message.
  void options(uint8_t expected, const char* name);
  // The fused activation is one the kinds here apply.
  void activation_runs();

 private:
  const Model& model_;
  const OperatorInfo& op_;
  OpCheck& result_;
  std::string where_;
};

// LiteRT's TensorType values.
namespace tensor_type {
inline constexpr int32_t kFloat32 = 0, kFloat16 = 1, kInt32 = 2, kUint8 = 3, kInt64 = 4, kInt16 = 7, kInt8 = 9;
}  // namespace tensor_type

}  // namespace sqdiff::tools::tflite
