#include "tflite/tflite_run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <numbers>
#include <set>

#include "ir/ir_outputs.hpp"
#include "npy.hpp"
#include "shape_count.hpp"
#include "split_mix64.hpp"
#include "sqdiff/float16.hpp"
#include "tflite/operator_kind.hpp"
#include "tflite/tflite_graph.hpp"
#include "tflite/tensor_storage.hpp"

namespace sqdiff::tools::tflite {
namespace {

// Random inputs larger than this are refused (pass an --input file instead).
constexpr int64_t kMaxRandomBytes = int64_t{1} << 30;
// Operators named in an unsupported kind's line before "and N more".
constexpr std::size_t kOperatorsNamed = 8;

std::string plural(std::size_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

ir::Tensor dense_tensor(sqdiff::DType dtype, const sqdiff::Shape& shape, std::shared_ptr<const void> storage) {
  ir::Tensor t;
  t.dtype = dtype;
  t.shape = shape;
  t.data = storage.get();
  t.owner = std::move(storage);
  return t;
}

// A standard normal draw (Box-Muller on two uniform doubles).
double standard_normal(SplitMix64& rng) {
  const double u1 = 1.0 - rng.unit();  // (0, 1]: log() is finite
  const double u2 = rng.unit();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

// float32 and float16: standard normal; integers: uniform over the type's
// whole range (the low bits of one draw each).
void fill_random(void* data, sqdiff::DType dtype, int64_t count, SplitMix64& rng) {
  switch (dtype) {
    case sqdiff::DType::f32: {
      auto* p = static_cast<float*>(data);
      for (int64_t i = 0; i < count; ++i) p[i] = static_cast<float>(standard_normal(rng));
      break;
    }
    case sqdiff::DType::f16: {
      auto* p = static_cast<uint16_t*>(data);
      for (int64_t i = 0; i < count; ++i) p[i] = sqdiff::float16(static_cast<float>(standard_normal(rng))).bits();
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

class Runner {
 public:
  Runner(const Model& model, const CheckReport& report, const RunOptions& options)
      : model_(model), report_(report), options_(options), values_(model.tensors.size()) {}

  RunOutput run() {
    if (report_.unsupported_count() != 0) throw TfliteError(model_.path + ": " + unsupported_summary(model_, report_));
    if (report_.problem_count() != 0) throw TfliteError(model_.path + ": the check failed; not running the model");
    const auto start = std::chrono::steady_clock::now();
    map_inputs();
    for (const std::size_t k : input_positions_) input(k);
    const auto inputs_done = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < model_.tensors.size(); ++i) {
      const TensorInfo& t = model_.tensors[i];
      if (t.constant && !values_[i]) values_[i] = dense_tensor(*t.dtype, t.shape, t.constant);
    }
    for (const std::size_t i : report_.order) op(model_.operators[i]);
    const auto operators_done = std::chrono::steady_clock::now();
    output_.input_seconds = std::chrono::duration<double>(inputs_done - start).count();
    output_.operator_seconds = std::chrono::duration<double>(operators_done - inputs_done).count();
    for (const std::size_t k : first_positions(model_.outputs)) {
      output_.outputs.push_back({model_.outputs[k], value(model_.outputs[k])});
    }
    return std::move(output_);
  }

 private:
  const ir::Tensor& value(int32_t t) const {
    const std::optional<ir::Tensor>& v = values_[static_cast<std::size_t>(t)];
    // The check makes sure every operand has a value; a constant of a type
    // sqdiff does not read, or a sparse one, is what can still lack one here.
    if (!v) {
      const TensorInfo& info = model_.tensors[static_cast<std::size_t>(t)];
      if (info.sparse && info.dtype) {
        throw TfliteError(model_.path + ": " + model_.describe_tensor(t) +
                          " is a sparse constant (LiteRT's DENSIFY expands it), which sqdiff tflite does not read");
      }
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
    if (!t.dtype) throw TfliteError(where + "type " + tensor_type_name(t.type) + " is not one sqdiff tflite reads");
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
      touch_pages(in.value.data, static_cast<std::size_t>(*byte_count(t.shape, sqdiff::dtype_size(*t.dtype))));
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
      return allocate_tensor_storage(bytes);
    } catch (const std::bad_alloc&) {
      throw TfliteError(where + "out of memory for " + std::to_string(bytes) + " bytes");
    }
  }

  void op(const OperatorInfo& op) {
    // The check found a kind for every operator, or run() refused the model.
    const OperatorKind& kind = *find_operator_kind(op.builtin_code);
    OperatorCall call{model_, op, {}, {options_.threads, options_.max_tensor_bytes}};
    for (const int32_t t : op.inputs) call.inputs.push_back(t < 0 ? nullptr : &value(t));
    try {
      values_[static_cast<std::size_t>(op.outputs[0])] = kind.run(call);
    } catch (const TfliteError&) {
      throw;
    } catch (const sqdiff::Error& e) {
      throw TfliteError(call.where() + e.what());
    }
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
    if (const OperatorKind* kind = find_operator_kind(op.builtin_code); kind != nullptr) {
      check.supported = true;
      OperatorCheck checker(model, op, check);
      kind->check(checker);
    }
    report.ops.push_back(std::move(check));
  }
  GraphCheck graph = check_graph(model);
  report.graph_problems = std::move(graph.problems);
  report.order = std::move(graph.order);
  return report;
}

std::vector<UnsupportedKind> unsupported_kinds(const Model& model, const CheckReport& report) {
  std::vector<UnsupportedKind> kinds;
  std::map<std::string, std::size_t> index;
  for (const OpCheck& check : report.ops) {
    if (check.supported) continue;
    const std::string name = model.operators[check.op].op_name();
    const auto [it, added] = index.emplace(name, kinds.size());
    if (added) kinds.push_back({name, {}});
    kinds[it->second].operators.push_back(check.op);
  }
  return kinds;
}

std::vector<std::string> unsupported_messages(const Model& model, const CheckReport& report) {
  std::vector<std::string> messages;
  for (const UnsupportedKind& kind : unsupported_kinds(model, report)) {
    const std::size_t n = kind.operators.size();
    std::string line = kind.name + " x " + std::to_string(n) + " (operator" + (n == 1 ? " " : "s ");
    for (std::size_t i = 0; i < std::min(n, kOperatorsNamed); ++i) {
      line += (i ? ", " : "") + std::to_string(kind.operators[i]);
    }
    if (n > kOperatorsNamed) line += " and " + std::to_string(n - kOperatorsNamed) + " more";
    messages.push_back(line + ")");
  }
  return messages;
}

std::string unsupported_summary(const Model& model, const CheckReport& report) {
  const std::vector<UnsupportedKind> kinds = unsupported_kinds(model, report);
  std::string list;
  for (const UnsupportedKind& kind : kinds) {
    list += (list.empty() ? "" : ", ") + kind.name + " x " + std::to_string(kind.operators.size());
  }
  return "cannot run " + plural(report.unsupported_count(), "operator") + " of " + plural(kinds.size(), "kind") +
         " (" + list + "); sqdiff tflite runs " + runnable_operator_names();
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
