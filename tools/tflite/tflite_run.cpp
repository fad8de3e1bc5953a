#include "tflite/tflite_run.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <numbers>
#include <new>
#include <set>
#include <type_traits>

#include "npy.hpp"
#include "shape_count.hpp"
#include "sqdiff/broadcast.hpp"
#include "sqdiff/ops.hpp"
#include "sqdiff/quantized.hpp"
#include "split_mix64.hpp"

namespace sqdiff::tools::tflite {
namespace {

// Random inputs larger than this are refused (pass an --input file instead).
constexpr int64_t kMaxRandomBytes = int64_t{1} << 30;

std::string in_quotes(const std::string& s) { return "\"" + s + "\""; }

std::string shape_text(const sqdiff::Shape& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

bool is_quantized(sqdiff::DType dtype) {
  return dtype == sqdiff::DType::i8 || dtype == sqdiff::DType::u8 || dtype == sqdiff::DType::i16;
}

std::string float_text(float v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", static_cast<double>(v));
  return buffer;
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

sqdiff::Activation library_activation(FusedActivation a) {
  switch (a) {
    case FusedActivation::relu: return sqdiff::Activation::relu;
    case FusedActivation::relu6: return sqdiff::Activation::relu6;
    case FusedActivation::relu_n1_to_1: return sqdiff::Activation::relu_n1_to_1;
    default: return sqdiff::Activation::none;
  }
}

// Uninitialised storage, 64-byte aligned, owned by a shared_ptr.
std::shared_ptr<void> allocate(std::size_t bytes) {
  void* p = ::operator new(std::max<std::size_t>(bytes, 1), std::align_val_t{64});
  return std::shared_ptr<void>(p, [](void* q) { ::operator delete(q, std::align_val_t{64}); });
}

ir::Tensor dense_tensor(sqdiff::DType dtype, const sqdiff::Shape& shape, std::shared_ptr<const void> storage) {
  ir::Tensor t;
  t.dtype = dtype;
  t.shape = shape;
  t.data = storage.get();
  t.owner = std::move(storage);
  return t;
}

// "int8 [2,3] (scale 0.5, zero point -1)"
std::string tensor_summary(const TensorInfo& t) {
  std::string s = tensor_type_name(t.type) + " " + shape_text(t.shape);
  if (t.quant) s += " (scale " + float_text(t.quant->scale) + ", zero point " + std::to_string(t.quant->zero_point) + ")";
  if (t.per_axis) s += " (" + std::to_string(t.scale_count) + " scales)";
  if (t.constant) s += " constant";
  return s;
}

// The checks of one SQUARED_DIFFERENCE or SUB operator; `problems` gets a
// message per problem, each naming the operator.
class OperatorChecker {
 public:
  OperatorChecker(const Model& model, const OperatorInfo& op, OpCheck& check)
      : model_(model), op_(op), check_(check), where_(op.describe() + ": ") {}

  void run() {
    if (op_.inputs.size() != 2 || op_.outputs.size() != 1) {
      problem("has " + std::to_string(op_.inputs.size()) + " inputs and " + std::to_string(op_.outputs.size()) +
              " outputs, expected 2 and 1");
      return;
    }
    for (const int32_t t : {op_.inputs[0], op_.inputs[1], op_.outputs[0]}) {
      if (t < 0) {
        problem("an operand is left out (tensor index -1)");
        return;
      }
    }
    const TensorInfo& a = tensor(op_.inputs[0]);
    const TensorInfo& b = tensor(op_.inputs[1]);
    const TensorInfo& out = tensor(op_.outputs[0]);
    check_.summary = tensor_summary(a) + (op_.is_sub() ? " - " : " vs ") + tensor_summary(b) + " -> " +
                     tensor_summary(out) + (op_.is_sub() ? ", activation " + activation_name(op_.activation) : "");
    if (!check_types(a, b, out)) return;
    check_shapes(a, b, out);
    check_options();
    if (is_quantized(*a.dtype)) check_quantization(a, b, out);
  }

 private:
  const TensorInfo& tensor(int32_t index) const { return model_.tensors[static_cast<std::size_t>(index)]; }
  void problem(const std::string& what) { check_.problems.push_back(where_ + what); }

  bool check_types(const TensorInfo& a, const TensorInfo& b, const TensorInfo& out) {
    if (a.type != b.type || a.type != out.type) {
      problem("its tensors' types differ (" + tensor_type_name(a.type) + ", " + tensor_type_name(b.type) + " -> " +
              tensor_type_name(out.type) + "): TFLite takes one type for both inputs and the output");
      return false;
    }
    const bool runs = a.dtype && *a.dtype != sqdiff::DType::i64;
    if (!runs) {
      problem("type " + tensor_type_name(a.type) +
              " is not one sqdiff tflite runs (FLOAT32, INT32, INT8, UINT8, INT16)");
      return false;
    }
    return true;
  }

  void check_shapes(const TensorInfo& a, const TensorInfo& b, const TensorInfo& out) {
    try {
      const sqdiff::Shape shape = sqdiff::broadcast_shape(a.shape, b.shape);
      if (shape != out.shape) {
        problem("the inputs " + shape_text(a.shape) + " and " + shape_text(b.shape) + " broadcast to " +
                shape_text(shape) + ", but the output tensor " + in_quotes(out.name) + " has shape " +
                shape_text(out.shape));
      }
    } catch (const sqdiff::Error&) {
      problem("the input shapes " + shape_text(a.shape) + " and " + shape_text(b.shape) +
              " do not broadcast (NumPy rules, as TFLite's)");
    }
    if (out.has_data) problem("its output tensor " + in_quotes(out.name) + " is a constant");
    for (const int32_t t : {op_.inputs[0], op_.inputs[1], op_.outputs[0]}) {
      if (tensor(t).is_variable) problem(model_.describe_tensor(t) + " is a variable tensor, which sqdiff does not run");
    }
  }

  void check_options() {
    // An options table of another operator's kind is LiteRT's "wrong options" model error.
    const uint8_t expected = op_.is_sub() ? 28 : 76;
    if (op_.options_type != 0 && op_.options_type != expected) {
      problem("its builtin options are of type " + std::to_string(op_.options_type) + ", not " +
              (op_.is_sub() ? "SubOptions (28)" : "SquaredDifferenceOptions (76)"));
    }
    if (!op_.is_sub()) return;
    switch (op_.activation) {
      case FusedActivation::none:
      case FusedActivation::relu:
      case FusedActivation::relu_n1_to_1:
      case FusedActivation::relu6: break;
      default:
        problem("fused activation " + activation_name(op_.activation) +
                " is not one sqdiff runs (NONE, RELU, RELU_N1_TO_1, RELU6)");
    }
  }

  void check_quantization(const TensorInfo& a, const TensorInfo& b, const TensorInfo& out) {
    bool complete = true;
    for (const int32_t t : {op_.inputs[0], op_.inputs[1], op_.outputs[0]}) {
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
    if (!complete || !check_.problems.empty()) return;
    // The library checks the parameters (scales, zero points, multipliers,
    // SPEC 9's list) before it computes anything: a one-element call finds
    // what the real run would refuse, with the library's message.
    const sqdiff::DType dtype = *a.dtype;
    alignas(8) unsigned char x[8] = {}, y[8] = {}, z[8] = {};
    const sqdiff::Shape one{1};
    sqdiff::QuantizedOptions options;
    options.activation = library_activation(op_.activation);
    options.pot_scale_int16 = op_.pot_scale_int16;
    options.threads = 1;
    try {
      if (op_.is_sub()) {
        sqdiff::quantized_subtract({x, dtype, one}, *a.quant, {y, dtype, one}, *b.quant, {z, dtype, one}, *out.quant,
                                   options);
      } else {
        sqdiff::quantized_squared_difference({x, dtype, one}, *a.quant, {y, dtype, one}, *b.quant, {z, dtype, one},
                                             *out.quant, options);
      }
    } catch (const sqdiff::Error& e) {
      problem(e.what());
    }
  }

  const Model& model_;
  const OperatorInfo& op_;
  OpCheck& check_;
  std::string where_;
};

// The graph: every operand has a value (a model input, a constant or an
// earlier operator's output), no tensor is written twice, no cycle.
void check_graph(const Model& model, CheckReport& report) {
  const std::size_t n = model.tensors.size();
  std::vector<int64_t> producer(n, -1);
  std::vector<bool> is_input(n, false);
  for (const int32_t t : model.inputs) is_input[static_cast<std::size_t>(t)] = true;
  for (const OperatorInfo& op : model.operators) {
    for (const int32_t t : op.outputs) {
      if (t < 0) continue;
      const auto i = static_cast<std::size_t>(t);
      if (is_input[i]) {
        report.graph_problems.push_back(op.describe() + ": writes " + model.describe_tensor(t) +
                                        ", an input of the model");
      } else if (producer[i] >= 0) {
        report.graph_problems.push_back(op.describe() + ": writes " + model.describe_tensor(t) + ", which " +
                                        model.operators[static_cast<std::size_t>(producer[i])].describe() +
                                        " writes too");
      } else {
        producer[i] = static_cast<int64_t>(op.index);
      }
    }
  }
  auto has_source = [&](int32_t t) {
    const auto i = static_cast<std::size_t>(t);
    return is_input[i] || model.tensors[i].has_data || producer[i] >= 0;
  };
  for (const OperatorInfo& op : model.operators) {
    for (const int32_t t : op.inputs) {
      if (t >= 0 && !has_source(t)) {
        report.graph_problems.push_back(op.describe() + ": reads " + model.describe_tensor(t) +
                                        ", which has no value (not a model input, a constant, nor an operator's "
                                        "output)");
      }
    }
  }
  for (const int32_t t : model.outputs) {
    if (!has_source(t)) {
      report.graph_problems.push_back("the model's output " + model.describe_tensor(t) +
                                      " has no value (not a model input, a constant, nor an operator's output)");
    }
  }
  // Kahn's algorithm over the operators, lowest index first: a model stored
  // in execution order (as LiteRT writes it) keeps its order.
  const std::size_t ops = model.operators.size();
  std::vector<std::size_t> waiting(ops, 0);
  std::vector<std::vector<std::size_t>> consumers(ops);
  for (const OperatorInfo& op : model.operators) {
    std::set<std::size_t> from;
    for (const int32_t t : op.inputs) {
      if (t >= 0 && producer[static_cast<std::size_t>(t)] >= 0) {
        from.insert(static_cast<std::size_t>(producer[static_cast<std::size_t>(t)]));
      }
    }
    waiting[op.index] = from.size();
    for (const std::size_t p : from) consumers[p].push_back(op.index);
  }
  std::set<std::size_t> ready;
  for (std::size_t i = 0; i < ops; ++i) {
    if (waiting[i] == 0) ready.insert(i);
  }
  while (!ready.empty()) {
    const std::size_t i = *ready.begin();
    ready.erase(ready.begin());
    report.order.push_back(i);
    for (const std::size_t c : consumers[i]) {
      if (--waiting[c] == 0) ready.insert(c);
    }
  }
  if (report.order.size() != ops) {
    std::string names;
    for (std::size_t i = 0; i < ops; ++i) {
      if (waiting[i] != 0) names += (names.empty() ? "" : ", ") + model.operators[i].describe();
    }
    report.graph_problems.push_back("the operators form a cycle: " + names + " wait on each other");
    report.order.clear();
  }
}

// float32: standard normal (Box-Muller on two uniform doubles); integers:
// uniform over the type's whole range (the low bits of one draw each).
void fill_random(void* data, sqdiff::DType dtype, int64_t count, SplitMix64& rng) {
  switch (dtype) {
    case sqdiff::DType::f32: {
      auto* p = static_cast<float*>(data);
      for (int64_t i = 0; i < count; ++i) {
        const double u1 = 1.0 - rng.unit();  // (0, 1]: log() is finite
        const double u2 = rng.unit();
        p[i] = static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2));
      }
      break;
    }
    default: {
      const std::size_t size = sqdiff::dtype_size(dtype);
      auto* p = static_cast<unsigned char*>(data);
      for (int64_t i = 0; i < count; ++i) {
        const uint64_t v = rng.next();
        std::memcpy(p + static_cast<std::size_t>(i) * size, &v, size);  // little-endian: the low bytes
      }
    }
  }
}

// TFLite's fused activation on float32 and int32 SUB: the library's float and
// int32 ops have no activation, so the tool clamps after the op as TFLite's
// kernels do (ActivationFunctionWithMinMax: min(max(x, lo), hi), NaN kept).
// NONE's range is [lowest, max] (CalculateActivationRange), so a float32
// difference that overflowed, or an infinite input, gives +-FLT_MAX, not inf.
template <typename T>
void clamp_activation(void* data, int64_t count, FusedActivation activation) {
  T lo = std::numeric_limits<T>::lowest();
  T hi = std::numeric_limits<T>::max();
  switch (activation) {
    case FusedActivation::none:
      if constexpr (std::is_integral_v<T>) return;  // every int32 lies in [lowest, max] already
      break;
    case FusedActivation::relu: lo = 0; break;
    case FusedActivation::relu6: lo = 0; hi = 6; break;
    case FusedActivation::relu_n1_to_1: lo = -1; hi = 1; break;
    default: return;  // the check refuses the others
  }
  auto* p = static_cast<T*>(data);
  for (int64_t i = 0; i < count; ++i) p[i] = std::min(std::max(p[i], lo), hi);
}

class Runner {
 public:
  Runner(const Model& model, const CheckReport& report, const RunOptions& options)
      : model_(model), report_(report), options_(options), values_(model.tensors.size()) {}

  RunOutput run() {
    if (const auto unsupported = unsupported_messages(model_, report_); !unsupported.empty()) {
      std::string message = model_.path + ": cannot run " + std::to_string(unsupported.size()) + " operator" +
                            (unsupported.size() == 1 ? "" : "s") + ": ";
      for (std::size_t i = 0; i < unsupported.size(); ++i) message += (i ? "; " : "") + unsupported[i];
      throw TfliteError(message);
    }
    if (report_.problem_count() != 0) throw TfliteError(model_.path + ": the check failed; not running the model");
    map_inputs();
    for (const std::size_t k : input_positions_) input(k);
    for (std::size_t i = 0; i < model_.tensors.size(); ++i) {
      const TensorInfo& t = model_.tensors[i];
      if (t.constant && !values_[i]) values_[i] = dense_tensor(*t.dtype, t.shape, t.constant);
    }
    for (const std::size_t i : report_.order) op(model_.operators[i]);
    for (const std::size_t k : first_positions(model_.outputs)) {
      output_.outputs.push_back({model_.outputs[k], value(model_.outputs[k])});
    }
    return std::move(output_);
  }

 private:
  const ir::Tensor& value(int32_t t) const {
    const std::optional<ir::Tensor>& v = values_[static_cast<std::size_t>(t)];
    // The check makes sure every operand has a value; a constant of a type
    // sqdiff does not read is the one that can still lack one here.
    if (!v) {
      throw TfliteError(model_.path + ": " + model_.describe_tensor(t) + " holds " +
                        tensor_type_name(model_.tensors[static_cast<std::size_t>(t)].type) +
                        " data, which sqdiff tflite does not read");
    }
    return *v;
  }

  // A tensor the subgraph lists twice as an input (or output) is one tensor:
  // one value, one random draw, one file, under its first position.
  static std::vector<std::size_t> first_positions(const std::vector<int32_t>& tensors) {
    std::vector<std::size_t> positions;
    std::set<int32_t> seen;
    for (std::size_t k = 0; k < tensors.size(); ++k) {
      if (seen.insert(tensors[k]).second) positions.push_back(k);
    }
    return positions;
  }

  void map_inputs() {
    input_positions_ = first_positions(model_.inputs);
    std::multimap<std::string, std::size_t> by_name;
    for (const std::size_t k : input_positions_) {
      by_name.emplace(model_.tensors[static_cast<std::size_t>(model_.inputs[k])].name, k);
    }
    for (const auto& [name, file] : options_.inputs) {
      const auto [first, last] = by_name.equal_range(name);
      if (first == last) {
        std::string names;
        for (const std::size_t k : input_positions_) {
          names += (names.empty() ? "" : ", ") + in_quotes(model_.tensors[static_cast<std::size_t>(model_.inputs[k])].name);
        }
        throw TfliteError("--input " + name + "=" + file + ": the model has no input tensor called " +
                          in_quotes(name) + " (its inputs: " + (names.empty() ? "none" : names) + ")");
      }
      if (std::next(first) != last) {
        throw TfliteError("--input " + name + "=" + file + ": " +
                          model_.describe_tensor(model_.inputs[first->second]) + " and " +
                          model_.describe_tensor(model_.inputs[std::next(first)->second]) +
                          " share the name; --input cannot tell them apart");
      }
      if (!files_.emplace(first->second, file).second) throw TfliteError("--input " + name + "=...: given twice");
    }
  }

  void input(std::size_t k) {
    const int32_t index = model_.inputs[k];
    const TensorInfo& t = model_.tensors[static_cast<std::size_t>(index)];
    const std::string where = "input " + model_.describe_tensor(index) + ": ";
    InputValue in;
    in.tensor = index;
    const bool runs = t.dtype && *t.dtype != sqdiff::DType::i64;
    if (!runs) throw TfliteError(where + "type " + tensor_type_name(t.type) + " is not one sqdiff tflite runs");
    if (const auto it = files_.find(k); it != files_.end()) {
      in.file = it->second;
      auto array = std::make_shared<NpyArray>(NpyArray::open(it->second));
      if (array->dtype() != *t.dtype) {
        throw TfliteError(where + it->second + " holds " + std::string(sqdiff::dtype_name(array->dtype())) +
                          " but the tensor is " + tensor_type_name(t.type) + " (" + std::string(sqdiff::dtype_name(*t.dtype)) + ")");
      }
      if (array->shape() != t.shape) {
        throw TfliteError(where + it->second + " has shape " + shape_text(array->shape()) + " but the tensor has " +
                          shape_text(t.shape));
      }
      in.value = ir::Tensor::of_array(std::move(array));
    } else if (options_.seed) {
      in.random = true;
      const std::optional<int64_t> bytes = byte_count(t.shape, sqdiff::dtype_size(*t.dtype));
      const int64_t limit = std::min(kMaxRandomBytes, options_.max_tensor_bytes);
      if (!bytes || *bytes > limit) {
        throw TfliteError(where + "random data of shape " + shape_text(t.shape) + " would be larger than " +
                          std::to_string(limit) + " bytes; pass --input " + t.name + "=FILE.npy");
      }
      auto storage = allocate_checked(static_cast<std::size_t>(*bytes), where);
      // Input k of the subgraph has its own stream: the same seed gives it
      // the same data whatever the other inputs are.
      SplitMix64 rng{*options_.seed + 0xD1B54A32D192ED03ull * (k + 1)};
      fill_random(storage.get(), *t.dtype, *element_count(t.shape), rng);
      in.value = dense_tensor(*t.dtype, t.shape, std::move(storage));
    } else {
      throw TfliteError(where + "needs data: pass --input " + t.name + "=FILE.npy, or --random SEED");
    }
    values_[static_cast<std::size_t>(index)] = in.value;
    output_.inputs.push_back(std::move(in));
  }

  std::shared_ptr<void> allocate_checked(std::size_t bytes, const std::string& where) const {
    try {
      return allocate(bytes);
    } catch (const std::bad_alloc&) {
      throw TfliteError(where + "out of memory for " + std::to_string(bytes) + " bytes");
    }
  }

  void op(const OperatorInfo& op) {
    const std::string where = model_.path + ": " + op.describe() + ": ";
    const ir::Tensor& a = value(op.inputs[0]);
    const ir::Tensor& b = value(op.inputs[1]);
    const TensorInfo& out_info = model_.tensors[static_cast<std::size_t>(op.outputs[0])];
    const sqdiff::DType dtype = *out_info.dtype;
    const std::optional<int64_t> bytes = byte_count(out_info.shape, sqdiff::dtype_size(dtype));
    if (!bytes || *bytes > options_.max_tensor_bytes) {
      throw TfliteError(where + "the output " + shape_text(out_info.shape) + " is larger than the limit of " +
                        std::to_string(options_.max_tensor_bytes) + " bytes");
    }
    auto storage = allocate_checked(static_cast<std::size_t>(*bytes), where);
    const sqdiff::TensorView out{storage.get(), dtype, out_info.shape, {}};
    try {
      if (is_quantized(dtype)) {
        const TensorInfo& qa = model_.tensors[static_cast<std::size_t>(op.inputs[0])];
        const TensorInfo& qb = model_.tensors[static_cast<std::size_t>(op.inputs[1])];
        sqdiff::QuantizedOptions options;
        options.activation = library_activation(op.activation);
        options.pot_scale_int16 = op.pot_scale_int16;
        options.threads = options_.threads;
        if (op.is_sub()) {
          sqdiff::quantized_subtract(a.view(), *qa.quant, b.view(), *qb.quant, out, *out_info.quant, options);
        } else {
          sqdiff::quantized_squared_difference(a.view(), *qa.quant, b.view(), *qb.quant, out, *out_info.quant, options);
        }
      } else {
        sqdiff::Options options;
        options.threads = options_.threads;
        if (op.is_sub()) {
          sqdiff::subtract(a.view(), b.view(), out, options);
          const int64_t count = *element_count(out_info.shape);
          if (dtype == sqdiff::DType::f32) clamp_activation<float>(storage.get(), count, op.activation);
          if (dtype == sqdiff::DType::i32) clamp_activation<int32_t>(storage.get(), count, op.activation);
        } else {
          sqdiff::squared_difference(a.view(), b.view(), out, options);
        }
      }
    } catch (const sqdiff::Error& e) {
      throw TfliteError(where + e.what());
    }
    values_[static_cast<std::size_t>(op.outputs[0])] = dense_tensor(dtype, out_info.shape, std::move(storage));
  }

  const Model& model_;
  const CheckReport& report_;
  const RunOptions& options_;
  std::vector<std::optional<ir::Tensor>> values_;
  std::vector<std::size_t> input_positions_;  // the first position of each distinct input tensor
  std::map<std::size_t, std::string> files_;  // subgraph input position -> file
  RunOutput output_;
};

std::vector<std::string> file_names(const Model& model, const std::vector<int32_t>& tensors) {
  std::vector<std::pair<std::string, int64_t>> named;
  for (const int32_t t : tensors) named.emplace_back(model.tensors[static_cast<std::size_t>(t)].name, t);
  return ir::unique_file_names(named);
}

}  // namespace

std::size_t CheckReport::unsupported_count() const {
  return static_cast<std::size_t>(std::count_if(ops.begin(), ops.end(), [](const OpCheck& c) { return !c.supported; }));
}

std::size_t CheckReport::problem_count() const {
  std::size_t count = graph_problems.size();
  for (const OpCheck& c : ops) count += c.problems.size();
  return count;
}

CheckReport check_model(const Model& model) {
  CheckReport report;
  for (const OperatorInfo& op : model.operators) {
    OpCheck check;
    check.op = op.index;
    check.supported = op.is_sub() || op.is_squared_difference();
    if (check.supported) OperatorChecker(model, op, check).run();
    report.ops.push_back(std::move(check));
  }
  check_graph(model, report);
  return report;
}

std::vector<std::string> unsupported_messages(const Model& model, const CheckReport& report) {
  std::vector<std::string> messages;
  for (const OpCheck& check : report.ops) {
    if (check.supported) continue;
    messages.push_back(model.operators[check.op].describe() +
                       " is not run by sqdiff tflite, which runs SQUARED_DIFFERENCE and SUB only");
  }
  return messages;
}

RunOutput run_model(const Model& model, const CheckReport& report, const RunOptions& options) {
  return Runner(model, report, options).run();
}

std::vector<std::string> output_file_names(const Model& model, const RunOutput& output) {
  std::vector<int32_t> tensors;
  for (const OutputValue& v : output.outputs) tensors.push_back(v.tensor);
  return file_names(model, tensors);
}

std::vector<std::string> random_input_file_names(const Model& model, const RunOutput& output) {
  std::vector<int32_t> tensors;
  for (const InputValue& in : output.inputs) {
    if (in.random) tensors.push_back(in.tensor);
  }
  return file_names(model, tensors);
}

}  // namespace sqdiff::tools::tflite
