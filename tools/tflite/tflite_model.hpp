// Reading a .tflite (LiteRT) model: the file is mapped, the FlatBuffers
// Verifier runs over the flatbuffer first, then the main subgraph is copied
// into the plain structs below, every index, shape and buffer checked on the
// way. Only the constants' bytes are used after load_model returns: in place
// in the mapping, which they keep alive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sqdiff/dtype.hpp"
#include "sqdiff/error.hpp"
#include "sqdiff/quantized.hpp"
#include "sqdiff/tensor_view.hpp"

namespace sqdiff::tools::tflite {

// Every error of `sqdiff tflite` about the model or the run (exit status 1).
class TfliteError : public sqdiff::Error {
 public:
  using sqdiff::Error::Error;
};

// LiteRT's BuiltinOperator values the reader itself looks at (builtin_operators.hpp names them all).
constexpr int32_t kBuiltinCustom = 32;
constexpr int32_t kBuiltinMul = 18;
constexpr int32_t kBuiltinMean = 40;
constexpr int32_t kBuiltinSub = 41;

// LiteRT's ActivationFunctionType values.
enum class FusedActivation : int8_t { none = 0, relu = 1, relu_n1_to_1 = 2, relu6 = 3, tanh = 4, sign_bit = 5 };

// Limits that keep a hostile file from costing memory or time (the fuzzer
// passes smaller ones). A file is mapped, so its size costs nothing; the
// flatbuffer in it is read within its first 2 GiB (FlatBuffers' limit), and
// constants after it (Buffer.offset) anywhere in the file.
struct ReadLimits {
  int64_t max_copied_bytes = int64_t{1} << 30;  // parse_model's copy of bytes in memory
  int64_t max_tensor_bytes = int64_t{1} << 34;  // a constant's declared size (the run's own limit)
};

// Dims of a tensor: sqdiff's planner keeps up to 8 without the heap, and no
// TFLite kernel of these ops takes more than 6.
constexpr std::size_t kMaxRank = 8;

struct TensorInfo {
  std::string name;
  int32_t type = 0;                    // LiteRT's TensorType value
  std::optional<sqdiff::DType> dtype;  // set for FLOAT32, FLOAT16, INT32, UINT8, INT16, INT8, INT64
  sqdiff::Shape shape;
  // Per-tensor quantization (one scale, one zero point); `per_axis` when the
  // tensor has several scales (quantized_dimension `axis`), which sqdiff refuses.
  std::optional<sqdiff::QuantParams> quant;
  bool per_axis = false;
  int32_t quantized_dimension = 0;
  std::size_t scale_count = 0;
  std::string quant_problem;  // a zero point beyond int32, or scale and zero point counts that differ
  // A constant: its bytes (checked against shape and type), 64-byte aligned.
  std::shared_ptr<const void> constant;
  bool has_data = false;  // its buffer holds bytes (a constant, whatever its type)
  bool sparse = false;    // a sparse constant (Tensor.sparsity): its bytes are not read
  bool is_variable = false;
};

struct OperatorInfo {
  std::size_t index = 0;
  int32_t builtin_code = 0;
  std::string custom_code;  // for CUSTOM operators
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
  // The options of the kinds sqdiff runs: the fused activation of SUB and MUL,
  // SUB's pot_scale_int16 and MEAN's keep_dims. An operator without its options
  // table has LiteRT's zeroed parameters (no activation, pot_scale_int16 and
  // keep_dims false), not the schema's field defaults, which are a table's.
  FusedActivation activation = FusedActivation::none;
  bool pot_scale_int16 = false;
  bool keep_dims = false;
  // The operator's builtin_options type (LiteRT's BuiltinOptions value; 0 = none).
  uint8_t options_type = 0;

  // "SUB", "CONV_2D", "CUSTOM \"MyOp\"", "builtin operator 250".
  std::string op_name() const;
  // "operator 2 (SUB)"
  std::string describe() const;
};

struct Model {
  std::string path;
  uint32_t version = 0;
  std::string description;
  std::size_t subgraph_count = 0;
  std::string subgraph_name;
  std::vector<TensorInfo> tensors;   // of subgraph 0
  std::vector<int32_t> inputs;       // subgraph 0's input tensors
  std::vector<int32_t> outputs;      // subgraph 0's output tensors
  std::vector<OperatorInfo> operators;

  // "tensor 3 \"out\""
  std::string describe_tensor(int32_t index) const;
};

// Reads and checks a .tflite file. Throws TfliteError (or sqdiff::Error for a
// file that cannot be opened) naming the path and what is wrong.
Model load_model(const std::string& path, const ReadLimits& limits = {});

// The same from bytes in memory (the fuzzer), copied first; `path` names them
// in messages. Buffers stored outside the flatbuffer (Buffer.offset) are read
// from `bytes`.
Model parse_model(const void* bytes, std::size_t size, const std::string& path, const ReadLimits& limits = {});

// "\"name\"": a name from the file in quotes, for messages (written escaped, path_text.hpp).
std::string in_quotes(const std::string& s);

// LiteRT's name of a TensorType value ("INT8"), or "type 42".
std::string tensor_type_name(int32_t type);

}  // namespace sqdiff::tools::tflite
