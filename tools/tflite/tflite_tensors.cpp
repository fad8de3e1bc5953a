#include "tflite/tflite_tensors.hpp"

#include <algorithm>
#include <deque>
#include <filesystem>
#include <memory>
#include <system_error>

#include "npy.hpp"
#include "tflite/operator_check.hpp"
#include "tflite/operator_kind.hpp"

namespace sqdiff::tools::tflite {
namespace {

std::string in_dir(const std::string& dir, const std::string& file) {
  return (std::filesystem::path(dir) / file).string();
}

bool file_exists(const std::string& path) {
  std::error_code error;
  return std::filesystem::exists(path, error);
}

// A constant of the model as a value (its bytes stay in the mapping).
ir::Tensor constant_value(const TensorInfo& t) {
  ir::Tensor value;
  value.dtype = *t.dtype;
  value.shape = t.shape;
  value.data = t.constant.get();
  value.owner = t.constant;
  return value;
}

// DIR/<index>.npy as the value of tensor `index`: the tensor's dtype and shape exactly.
ir::Tensor file_value(const Model& model, const OperatorInfo& op, int32_t index, const std::string& path) {
  const TensorInfo& t = model.tensors[static_cast<std::size_t>(index)];
  const std::string where = model.path + ": " + op.describe() + ": " + model.describe_tensor(index) + ": ";
  if (!t.dtype) throw TfliteError(where + "type " + tensor_type_name(t.type) + " is not one sqdiff tflite reads");
  auto array = std::make_shared<NpyArray>(NpyArray::open(path));
  if (array->dtype() != *t.dtype) {
    throw TfliteError(where + path + " holds " + std::string(sqdiff::dtype_name(array->dtype())) +
                      " but the tensor is " + tensor_type_name(t.type) + " (" +
                      std::string(sqdiff::dtype_name(*t.dtype)) + ")");
  }
  if (array->shape() != t.shape) {
    throw TfliteError(where + path + " has shape " + shape_text(array->shape()) + " but the tensor has " +
                      shape_text(t.shape));
  }
  return ir::Tensor::of_array(std::move(array));
}

}  // namespace

const char* status_name(TensorsStatus status) {
  switch (status) {
    case TensorsStatus::computed: return "computed";
    case TensorsStatus::ready: return "ready";
    case TensorsStatus::skipped: return "skipped";
    case TensorsStatus::refused: return "refused";
    case TensorsStatus::not_run: return "not run";
  }
  return "?";
}

std::string tensor_file_name(int32_t tensor) { return std::to_string(tensor) + ".npy"; }

std::string operator_file_name(std::size_t op) { return "operator_" + std::to_string(op) + ".npy"; }

std::vector<OperatorFromTensors> compute_from_tensors(
    const Model& model, const CheckReport& report, const TensorsOptions& options,
    const std::function<void(const OperatorFromTensors&, const ir::Tensor&)>& computed) {
  std::vector<OperatorFromTensors> result;
  for (const OpCheck& check : report.ops) {
    const OperatorInfo& op = model.operators[check.op];
    OperatorFromTensors entry;
    entry.op = check.op;
    if (!check.supported) {
      result.push_back(entry);
      continue;
    }
    for (const int32_t t : op.inputs) {
      if (t < 0 || model.tensors[static_cast<std::size_t>(t)].has_data) continue;
      if (std::find(entry.read.begin(), entry.read.end(), t) == entry.read.end()) entry.read.push_back(t);
    }
    if (!check.ok()) {
      entry.status = TensorsStatus::refused;
      result.push_back(entry);
      continue;
    }
    for (const int32_t t : entry.read) {
      if (!file_exists(in_dir(options.dir, tensor_file_name(t)))) entry.missing.push_back(t);
    }
    entry.status = !entry.missing.empty() ? TensorsStatus::skipped
                   : options.compute     ? TensorsStatus::computed
                                         : TensorsStatus::ready;
    if (entry.status == TensorsStatus::computed && options.compute) {
      // The values live only while this operator runs: one operator's
      // tensors in memory at a time, whatever the model's size. A deque, so
      // that the call's pointers stay valid as values are added.
      std::deque<ir::Tensor> values;
      OperatorCall call{model, op, {}, {options.threads, options.max_tensor_bytes}};
      for (const int32_t t : op.inputs) {
        if (t < 0) {
          call.inputs.push_back(nullptr);
          continue;
        }
        const TensorInfo& info = model.tensors[static_cast<std::size_t>(t)];
        if (info.has_data && !info.constant) {
          throw TfliteError(call.where() + model.describe_tensor(t) + " holds " + tensor_type_name(info.type) +
                            " data, which sqdiff tflite does not read");
        }
        values.push_back(info.has_data ? constant_value(info)
                                       : file_value(model, op, t, in_dir(options.dir, tensor_file_name(t))));
        call.inputs.push_back(&values.back());
      }
      ir::Tensor output;
      try {
        output = find_operator_kind(op.builtin_code)->run(call);
      } catch (const TfliteError&) {
        throw;
      } catch (const sqdiff::Error& e) {
        throw TfliteError(call.where() + e.what());
      }
      computed(entry, output);
    }
    result.push_back(entry);
  }
  return result;
}

}  // namespace sqdiff::tools::tflite
