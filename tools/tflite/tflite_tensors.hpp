// `sqdiff tflite MODEL --tensors DIR`: every operator sqdiff runs, computed
// from tensor values given as files (DIR/<tensor index>.npy) instead of from
// the run's own, one operator at a time: what a runtime's intermediate tensors
// are checked against (sqdiff.verify, docs/verify.md). The operators are the
// kinds of operator_kind.hpp, checked by the same check as a run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/ir_run.hpp"
#include "tflite/tflite_model.hpp"
#include "tflite/tflite_run.hpp"

namespace sqdiff::tools::tflite {

// What became of one operator of the model.
enum class TensorsStatus {
  computed,  // every input was in DIR or a constant: computed
  ready,     // the same, when only asked which operators could be computed (TensorsOptions::compute false)
  skipped,   // a kind sqdiff runs, but an input is in neither DIR nor the model
  refused,   // a kind sqdiff runs, but the check refuses this operator (its problems say why)
  not_run,   // a kind sqdiff tflite does not run
};

// "computed", "ready", "skipped", "refused", "not run".
const char* status_name(TensorsStatus status);

struct OperatorFromTensors {
  std::size_t op = 0;  // index into Model::operators
  TensorsStatus status = TensorsStatus::not_run;
  std::vector<int32_t> read;     // the input tensors it reads from DIR: distinct, not constants
  std::vector<int32_t> missing;  // those of `read` that DIR does not hold
};

struct TensorsOptions {
  std::string dir;       // DIR: <tensor index>.npy files
  bool compute = true;   // false: only find which operators could be computed
  int threads = 0;
  int64_t max_tensor_bytes = int64_t{1} << 34;
};

// "7.npy": the file in DIR that holds tensor 7.
std::string tensor_file_name(int32_t tensor);
// "operator_3.npy": the file that holds operator 3's output.
std::string operator_file_name(std::size_t op);

// Goes through the operators in the model's order. Each operator of a kind
// sqdiff runs whose check passes and whose inputs are all in DIR or
// constants of the model (a constant is always the model's, whatever DIR
// holds) is computed, and its output handed to `computed` before the next one
// starts. Throws TfliteError (or sqdiff::Error) for a file in DIR that is not
// the tensor's dtype and shape, or an operator that fails on its values.
std::vector<OperatorFromTensors> compute_from_tensors(
    const Model& model, const CheckReport& report, const TensorsOptions& options,
    const std::function<void(const OperatorFromTensors&, const ir::Tensor&)>& computed);

}  // namespace sqdiff::tools::tflite
