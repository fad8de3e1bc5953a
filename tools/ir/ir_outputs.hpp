// A run's tensors staged for the user: the file names they are written under
// (`sqdiff ir -o`, and `sqdiff tflite -o` through unique_file_names), the .npy
// writing of strided ones, and their first values as text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/ir_model.hpp"
#include "ir/ir_run.hpp"

namespace sqdiff::tools::ir {

// A file-name-safe version of a layer name: letters, digits, '.', '_' and '-'
// kept, anything else replaced by '_'; a leading '.' gets a '_' prefix; empty
// names become "result". At most 200 characters.
std::string sanitize_file_name(std::string_view name);

// One file name (without directory) per layer: sanitize_file_name(name) +
// ".npy", with "_<layer id>" added before ".npy" when two layers' names
// sanitize alike (or repeat), so that no two layers share a file.
std::vector<std::string> unique_file_names(const Model& model, const std::vector<std::size_t>& layers);

// The same for any named things, each with an id that tells apart those whose
// names sanitize alike (`sqdiff tflite` passes tensor names and indices).
std::vector<std::string> unique_file_names(const std::vector<std::pair<std::string, int64_t>>& named);

// unique_file_names of the Results in `output.results`, in that order.
std::vector<std::string> result_file_names(const Model& model, const RunOutput& output);

// unique_file_names of the random inputs in `output.inputs` (those with
// `random` set), in that order: where --random inputs are saved.
std::vector<std::string> random_input_file_names(const Model& model, const RunOutput& output);

// Writes `value` to `path` as .npy, atomically (bf16 as "<u2").
void write_tensor(const std::string& path, const Tensor& value);

// The first `count` values in row-major order, e.g. "0.25 1 -3.5 ...".
std::string format_values(const Tensor& value, std::size_t count);

}  // namespace sqdiff::tools::ir
