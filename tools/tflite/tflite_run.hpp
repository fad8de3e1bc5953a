// Checking and running a .tflite model's SQUARED_DIFFERENCE and SUB operators
// with the sqdiff library: float32 and int32 through sqdiff::squared_difference
// and sqdiff::subtract, int8, uint8 and int16 through the quantized ops (SPEC 9).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/ir_run.hpp"
#include "tflite/tflite_model.hpp"

namespace sqdiff::tools::tflite {

// What the check found for one operator.
struct OpCheck {
  std::size_t op = 0;                 // index into Model::operators
  bool supported = false;             // a SQUARED_DIFFERENCE or SUB
  std::string summary;                // "int8 [2,3] (scale 0.5, zero point 1) - ... -> ..."
  std::vector<std::string> problems;  // each a full sentence naming the operator
  bool ok() const { return supported && problems.empty(); }
};

struct CheckReport {
  std::vector<OpCheck> ops;                 // one per operator, in the model's order
  std::vector<std::string> graph_problems;  // tensors without a value, cycles, tensors written twice
  std::vector<std::size_t> order;           // the operators in an order that runs (when there is one)

  std::size_t unsupported_count() const;
  // Problems of supported operators and of the graph: a model with any cannot run.
  std::size_t problem_count() const;
  bool runnable() const { return unsupported_count() == 0 && problem_count() == 0; }
};

// Checks every operator (types, shapes, quantization, options) and the graph.
CheckReport check_model(const Model& model);

// One line per unsupported operator: "operator 1 (ADD): sqdiff tflite runs only SQUARED_DIFFERENCE and SUB".
std::vector<std::string> unsupported_messages(const Model& model, const CheckReport& report);

struct RunOptions {
  // NAME=FILE.npy pairs: the subgraph input tensor called NAME reads FILE.npy.
  std::vector<std::pair<std::string, std::string>> inputs;
  // Random data for every input without a file.
  std::optional<uint64_t> seed;
  int threads = 0;
  // No tensor the run creates may be larger than this; random inputs are
  // also limited to 1 GiB.
  int64_t max_tensor_bytes = int64_t{1} << 34;
};

struct InputValue {
  int32_t tensor = 0;
  bool random = false;  // false: read from `file`
  std::string file;
  ir::Tensor value;
};

struct OutputValue {
  int32_t tensor = 0;
  ir::Tensor value;
};

// One entry per distinct tensor, in the subgraph's order: a tensor listed twice
// as an input or output has one value (one random draw), under its first position.
struct RunOutput {
  std::vector<InputValue> inputs;
  std::vector<OutputValue> outputs;
};

// Runs the model. Throws TfliteError naming every operator it cannot run (when
// any), or the first problem of the check, or what is wrong with an input:
// --input naming no input tensor (or one twice), an input with neither a file
// nor a seed, a file whose dtype or shape is not the tensor's.
RunOutput run_model(const Model& model, const CheckReport& report, const RunOptions& options);

// Where the outputs and the random inputs go in an output directory: file
// names as `sqdiff ir -o` chooses them (ir::unique_file_names), from tensor
// names, with "_<tensor index>" added where two names sanitize alike.
std::vector<std::string> output_file_names(const Model& model, const RunOutput& output);
std::vector<std::string> random_input_file_names(const Model& model, const RunOutput& output);

}  // namespace sqdiff::tools::tflite
