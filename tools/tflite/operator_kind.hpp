// The operators `sqdiff tflite` runs, one table of kinds: each kind checks an
// operator of the model (operands, types, shapes, quantization, options) and
// computes its output from its inputs' values, bit for bit as LiteRT's
// reference kernels (BUILTIN_REF). The reader and the runner know nothing of
// any one kind; a new operator is a new entry in operator_kinds.cpp and its
// own file in ops/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/ir_run.hpp"
#include "tflite/operator_check.hpp"
#include "tflite/tflite_model.hpp"

namespace sqdiff::tools::tflite {

// What a run gives every operator beside its inputs.
struct RunLimits {
  int threads = 0;
  int64_t max_tensor_bytes = int64_t{1} << 34;  // no output larger than this
};

// An operator's output tensor while the operator writes it.
struct OperatorOutput {
  ir::Tensor value;     // what the run keeps (dense, owns the storage)
  void* data = nullptr;  // the same storage, writable

  sqdiff::TensorView view() const { return {data, value.dtype, value.shape, {}}; }
};

// One operator being run: the model's description of it and its inputs'
// values (one per input tensor, in order; nullptr for an optional input left
// out, which the check has refused where it matters).
struct OperatorCall {
  const Model& model;
  const OperatorInfo& op;
  std::vector<const ir::Tensor*> inputs;
  RunLimits limits;

  const TensorInfo& input_info(std::size_t i) const { return model.tensors[static_cast<std::size_t>(op.inputs[i])]; }
  const TensorInfo& output_info() const { return model.tensors[static_cast<std::size_t>(op.outputs[0])]; }
  // Uninitialised storage for the output tensor, dense, of its declared type
  // and shape; throws TfliteError when it is larger than the limit or memory
  // runs out.
  OperatorOutput allocate_output() const;
  // "MODEL: operator 3 (MEAN): ": the start of a message about this call.
  std::string where() const;
};

struct OperatorKind {
  int32_t code = 0;  // LiteRT's BuiltinOperator value
  // Checks the operator; each problem goes into the check (see OperatorCheck).
  void (*check)(OperatorCheck& check) = nullptr;
  // The output tensor (every kind here has one), computed from the inputs.
  // Throws TfliteError (or sqdiff::Error) for what only the values show.
  ir::Tensor (*run)(const OperatorCall& call) = nullptr;
};

// The kind of a builtin operator, or nullptr when sqdiff tflite does not run it.
const OperatorKind* find_operator_kind(int32_t builtin_code);

// "DEQUANTIZE, MAXIMUM, ...": the names of the kinds it runs, for messages.
std::string runnable_operator_names();

}  // namespace sqdiff::tools::tflite
