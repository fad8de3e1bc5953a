// Checking and running a .tflite model with the operator kinds of
// operator_kind.hpp: the check of every operator and of the graph, and the
// run, in the graph's order, on input files or random inputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/ir_run.hpp"
#include "tflite/operator_check.hpp"
#include "tflite/tflite_model.hpp"

namespace sqdiff::tools::tflite {

// The operators of one kind that sqdiff tflite does not run.
struct UnsupportedKind {
  std::string name;                    // "CONV_2D", "CUSTOM \"MyNorm\""
  std::vector<std::size_t> operators;  // their indices, in the model's order
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

// The operators sqdiff tflite does not run, grouped by kind, kinds in the
// order of their first operator.
std::vector<UnsupportedKind> unsupported_kinds(const Model& model, const CheckReport& report);

// One line per kind: "CONV_2D x 35 (operators 0, 4, 8, 12, 16, 20, 24, 28 and 27 more)".
std::vector<std::string> unsupported_messages(const Model& model, const CheckReport& report);

// "cannot run 36 operators of 2 kinds (CONV_2D x 35, CUSTOM \"MyNorm\" x 1); sqdiff
// tflite runs DEQUANTIZE, ...": the one line that refuses the model.
std::string unsupported_summary(const Model& model, const CheckReport& report);

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
  // Where the run's time went (wall clock): the inputs read or drawn, and the
  // operators (their outputs' allocation included).
  double input_seconds = 0;
  double operator_seconds = 0;
};

// Runs the model. Throws TfliteError naming the operators it cannot run (when
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
