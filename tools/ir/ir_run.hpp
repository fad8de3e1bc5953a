// Running an IR graph of Parameter, Const, SquaredDifference, Subtract and
// Result layers with the sqdiff library.
// What becomes of the results (file names, .npy files, values as text) is
// ir_outputs.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/ir_model.hpp"
#include "ir/ir_shapes.hpp"
#include "sqdiff/broadcast.hpp"
#include "sqdiff/dtype.hpp"
#include "sqdiff/tensor_view.hpp"

namespace sqdiff::tools {
struct NpyArray;
}

namespace sqdiff::tools::ir {

// A value flowing along an edge: a view plus whatever keeps its memory alive.
struct Tensor {
  sqdiff::DType dtype = sqdiff::DType::f32;
  sqdiff::Shape shape;
  sqdiff::Shape strides;  // in elements; empty = dense row-major
  const void* data = nullptr;
  std::shared_ptr<const void> owner;

  sqdiff::ConstTensorView view() const { return {data, dtype, shape, strides}; }
  int64_t element_count() const;
  // An opened .npy file's array, read in place (the Tensor keeps it alive).
  static Tensor of_array(std::shared_ptr<const NpyArray> array);
};

// Uninitialised storage, 64-byte aligned: the tensors a run makes, and the
// dense copies write_tensor makes of strided ones. Throws std::bad_alloc.
std::shared_ptr<void> allocate(std::size_t bytes);

struct RunOptions {
  // NAME=FILE.npy pairs: the Parameter layer called NAME reads FILE.npy.
  std::vector<std::pair<std::string, std::string>> inputs;
  // Random data for every Parameter without an input file.
  std::optional<uint64_t> seed;
  // The weights file; empty means MODEL.bin beside the XML (see default_bin_path).
  std::string bin_path;
  int threads = 0;
  // No tensor the run creates may be larger than this (random inputs: 1 GiB at most).
  int64_t max_tensor_bytes = int64_t{1} << 34;
};

struct InputValue {
  std::size_t layer = 0;  // the Parameter's index into Model::layers
  bool random = false;    // false: read from `file`
  std::string file;
  Tensor value;
};

struct ResultValue {
  std::size_t layer = 0;  // the Result's index into Model::layers
  Tensor value;
};

struct RunOutput {
  std::vector<InputValue> inputs;    // one per Parameter, in topological order
  std::vector<ResultValue> results;  // one per Result, in document order
};

// Throws IrError naming the first layer (type, id, name, line) that sqdiff ir
// cannot run: anything but Parameter, Const, SquaredDifference, Subtract and
// Result, or one of those with the wrong number of ports.
void check_runnable(const Model& model);

// MODEL.xml -> MODEL.bin (the extension replaced, or ".bin" appended).
std::string default_bin_path(const std::string& xml_path);

// Runs the graph in topological order. `report` must be check_shapes(model)
// and ok(). Throws IrError (or sqdiff::Error from .npy reading) for: a layer
// that cannot run, an --input naming no Parameter (or one twice), a Parameter
// without input and without seed, an input file whose dtype or shape does not
// fit the Parameter, a missing or short .bin file, a Const whose size does not
// match its shape and type.
RunOutput run_model(const Model& model, const ShapeReport& report, const RunOptions& options);

// The check of every Const layer (static shape, one of the twelve types)
// against the .bin file, without reading it: offset and size present, size ==
// element count x element size, the range inside the file. Returns one message
// per problem (a missing file is one problem).
std::vector<std::string> check_weights(const Model& model, const ShapeReport& report, const std::string& bin_path);

// With --random: the size chosen for a dynamic dimension, the smallest
// positive size its interval allows (1 for "?", lo for "lo..hi" with lo >= 1,
// 0 for "0..0").
int64_t random_size_for(const Dim& dim);

}  // namespace sqdiff::tools::ir
