// Running an IR graph (ir_run.hpp): the check that sqdiff can run it, the
// weights read a Const at a time, the inputs read or drawn, the layers in
// topological order.
#include "ir/ir_run.hpp"

#include <algorithm>
#include <cinttypes>
#include <filesystem>
#include <iterator>
#include <fstream>
#include <map>
#include <new>
#include <sstream>

#include "input_file.hpp"
#include "npy.hpp"
#include "shape_count.hpp"
#include "sqdiff/bfloat16.hpp"
#include "sqdiff/float16.hpp"
#include "sqdiff/ops.hpp"
#include "split_mix64.hpp"

namespace sqdiff::tools::ir {

std::shared_ptr<void> allocate(std::size_t bytes) {
  const std::size_t size = std::max<std::size_t>(bytes, 1);
  void* p = ::operator new(size, std::align_val_t{64});
  return std::shared_ptr<void>(p, [](void* q) { ::operator delete(q, std::align_val_t{64}); });
}

namespace {

// Random inputs larger than this are refused (pass an --input file instead).
constexpr int64_t kMaxRandomBytes = int64_t{1} << 30;

std::string in_quotes(std::string_view s) { return "\"" + std::string(s) + "\""; }

Tensor dense_tensor(sqdiff::DType dtype, const sqdiff::Shape& shape, std::shared_ptr<void> storage) {
  Tensor t;
  t.dtype = dtype;
  t.shape = shape;
  t.data = storage.get();
  t.owner = std::move(storage);
  return t;
}

bool fits(const PartialShape& partial, const sqdiff::Shape& shape) {
  if (partial.dynamic_rank) return true;
  if (partial.dims.size() != shape.size()) return false;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (!partial.dims[i].contains(shape[i])) return false;
  }
  return true;
}

std::string format_shape(const sqdiff::Shape& shape) {
  return format_partial_shape(PartialShape::from_shape(shape));
}

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001B3ull;
  }
  return h;
}

template <typename T>
void fill_int(void* data, int64_t count, SplitMix64& rng, int64_t lo, int64_t hi) {
  auto* p = static_cast<T*>(data);
  for (int64_t i = 0; i < count; ++i) p[i] = static_cast<T>(rng.between(lo, hi));
}

// Floats uniform in [-10, 10); signed integers in [-5, 5]; unsigned in [0, 10].
void fill_random(void* data, sqdiff::DType dtype, int64_t count, SplitMix64& rng) {
  using sqdiff::DType;
  switch (dtype) {
    case DType::f16: {
      auto* p = static_cast<uint16_t*>(data);
      for (int64_t i = 0; i < count; ++i) p[i] = sqdiff::float16(static_cast<float>(rng.unit() * 20.0 - 10.0)).bits();
      break;
    }
    case DType::bf16: {
      auto* p = static_cast<uint16_t*>(data);
      for (int64_t i = 0; i < count; ++i) p[i] = sqdiff::bfloat16(static_cast<float>(rng.unit() * 20.0 - 10.0)).bits();
      break;
    }
    case DType::f32: {
      auto* p = static_cast<float*>(data);
      for (int64_t i = 0; i < count; ++i) p[i] = static_cast<float>(rng.unit() * 20.0 - 10.0);
      break;
    }
    case DType::f64: {
      auto* p = static_cast<double*>(data);
      for (int64_t i = 0; i < count; ++i) p[i] = rng.unit() * 20.0 - 10.0;
      break;
    }
    case DType::i8: fill_int<int8_t>(data, count, rng, -5, 5); break;
    case DType::i16: fill_int<int16_t>(data, count, rng, -5, 5); break;
    case DType::i32: fill_int<int32_t>(data, count, rng, -5, 5); break;
    case DType::i64: fill_int<int64_t>(data, count, rng, -5, 5); break;
    case DType::u8: fill_int<uint8_t>(data, count, rng, 0, 10); break;
    case DType::u16: fill_int<uint16_t>(data, count, rng, 0, 10); break;
    case DType::u32: fill_int<uint32_t>(data, count, rng, 0, 10); break;
    case DType::u64: fill_int<uint64_t>(data, count, rng, 0, 10); break;
  }
}

// The .bin file, read a Const at a time.
class Weights {
 public:
  Weights(const Model& model, std::string path, int64_t max_tensor_bytes)
      : model_(model), path_(std::move(path)), max_tensor_bytes_(max_tensor_bytes) {}

  // Checks the Const's offset and size against its shape, type and the file;
  // returns {offset, size}. Throws IrError.
  std::pair<int64_t, int64_t> locate(const Layer& layer, sqdiff::DType dtype, const sqdiff::Shape& shape) {
    const std::string where = model_.where(layer.has_data ? layer.data_line : layer.line) + model_.describe(layer) + ": ";
    const auto attr = [&](const char* key) {
      const auto text = layer.attribute(key);
      if (!text) throw IrError(where + "a Const needs " + key + " in <data>");
      const auto value = parse_int(*text);
      if (!value || *value < 0) {
        throw IrError(where + key + "=" + in_quotes(*text) + " is not a non-negative integer");
      }
      return *value;
    };
    const int64_t offset = attr("offset");
    const int64_t size = attr("size");
    const std::optional<int64_t> bytes = byte_count(shape, sqdiff::dtype_size(dtype));
    if (!bytes) throw IrError(where + "the shape " + format_shape(shape) + " is too large");
    const int64_t expected = *bytes;
    if (size != expected) {
      throw IrError(where + "size=" + std::to_string(size) + " does not match the shape " + format_shape(shape) +
                    " of " + std::string(sqdiff::dtype_name(dtype)) + " (" + std::to_string(expected) + " bytes)");
    }
    open();
    int64_t end = 0;
    if (__builtin_add_overflow(offset, size, &end) || end > file_size_) {
      throw IrError(where + "offset " + std::to_string(offset) + " + size " + std::to_string(size) + " = " +
                    (end < 0 ? std::string("overflow") : std::to_string(end)) + " bytes is beyond the end of " +
                    path_ + " (" + std::to_string(file_size_) + " bytes)");
    }
    if (size > max_tensor_bytes_) {
      throw IrError(where + "its " + std::to_string(size) + " bytes are more than the limit of " +
                    std::to_string(max_tensor_bytes_) + " bytes per tensor");
    }
    return {offset, size};
  }

  Tensor read(const Layer& layer, sqdiff::DType dtype, const sqdiff::Shape& shape) {
    const std::string where = model_.where(layer.has_data ? layer.data_line : layer.line) + model_.describe(layer) + ": ";
    const auto [offset, size] = locate(layer, dtype, shape);
    std::shared_ptr<void> storage;
    try {
      storage = allocate(static_cast<std::size_t>(size));
    } catch (const std::bad_alloc&) {
      throw IrError(where + "out of memory for its " + std::to_string(size) + " bytes");
    }
    try {
      file_->read_at(offset, size, storage.get());
    } catch (const sqdiff::Error& e) {
      throw IrError(where + e.what());
    }
    return dense_tensor(dtype, shape, std::move(storage));
  }

 private:
  void open() {
    if (file_) return;
    try {
      file_.emplace(InputFile::open(path_, "the weights file for the Const layers"));
    } catch (const sqdiff::Error& e) {
      throw IrError(std::string(e.what()) + "; pass --bin FILE");
    }
    file_size_ = file_->size();
  }

  const Model& model_;
  std::string path_;
  int64_t max_tensor_bytes_;
  std::optional<InputFile> file_;
  int64_t file_size_ = 0;
};

class Runner {
 public:
  Runner(const Model& model, const ShapeReport& report, const RunOptions& options)
      : model_(model),
        report_(report),
        options_(options),
        weights_(model, options.bin_path.empty() ? default_bin_path(model.path) : options.bin_path,
                 options.max_tensor_bytes) {
    values_.resize(model.layers.size());
    for (std::size_t i = 0; i < model.layers.size(); ++i) values_[i].resize(model.layers[i].outputs.size());
  }

  RunOutput run() {
    check_runnable(model_);
    if (!report_.ok()) throw IrError(model_.path + ": the shape check failed; not running the model");
    map_inputs();
    for (const std::size_t i : model_.topological_order) {
      const Layer& layer = model_.layers[i];
      if (layer.type == "Parameter") {
        parameter(i);
      } else if (layer.type == "Const") {
        values_[i][0] = weights_.read(layer, dtype_of(i), static_shape_of(i));
      } else if (layer.type == "Result") {
        output_.results.push_back({i, input(i, 0)});
      } else {
        op(i);
      }
    }
    std::stable_sort(output_.results.begin(), output_.results.end(),
                     [](const ResultValue& x, const ResultValue& y) { return x.layer < y.layer; });
    return std::move(output_);
  }

 private:
  std::string where(const Layer& layer) const { return model_.where(layer.line) + model_.describe(layer) + ": "; }

  // allocate(), with running out of memory reported at the layer.
  std::shared_ptr<void> allocate_for(const Layer& layer, std::size_t bytes) const {
    try {
      return allocate(bytes);
    } catch (const std::bad_alloc&) {
      throw IrError(where(layer) + "out of memory for " + std::to_string(bytes) + " bytes");
    }
  }

  sqdiff::DType dtype_of(std::size_t i) const {
    const Layer& layer = model_.layers[i];
    const ElementType& type = report_.types[i][0];
    if (!type.known()) {
      throw IrError(where(layer) + "has no element type (expected element_type in <data> or precision on its port)");
    }
    if (!type.dtype) {
      throw IrError(where(layer) + "element type " + in_quotes(type.text) +
                    " is not one sqdiff computes (f16, bf16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64)");
    }
    return *type.dtype;
  }

  sqdiff::Shape static_shape_of(std::size_t i) const {
    const PartialShape& shape = report_.shapes[i][0];
    if (!shape.is_static()) {
      throw IrError(where(model_.layers[i]) + "the shape " + format_partial_shape(shape) + " is not static");
    }
    return shape.to_shape();
  }

  const Tensor& input(std::size_t i, std::size_t port) const {
    const Source& s = model_.sources[i][port];
    return *values_[s.layer][s.output];
  }

  void map_inputs() {
    std::multimap<std::string, std::size_t, std::less<>> parameters;
    for (std::size_t i = 0; i < model_.layers.size(); ++i) {
      const Layer& layer = model_.layers[i];
      if (layer.type != "Parameter") continue;
      // Parameters that share a name get different random streams.
      stream_[i] = parameters.count(layer.name);
      parameters.emplace(layer.name, i);
    }
    for (const auto& [name, file] : options_.inputs) {
      const auto [first, last] = parameters.equal_range(name);
      if (first == last) {
        std::string names;
        for (auto it = parameters.begin(); it != parameters.end(); it = parameters.upper_bound(it->first)) {
          names += (names.empty() ? "" : ", ") + in_quotes(it->first);
        }
        throw IrError("--input " + name + "=" + file + ": the model has no Parameter called " + in_quotes(name) +
                      " (its Parameters: " + (names.empty() ? "none" : names) + ")");
      }
      if (std::next(first) != last) {
        throw IrError("--input " + name + "=" + file + ": " + model_.describe(model_.layers[first->second]) + " and " +
                      model_.describe(model_.layers[std::next(first)->second]) + " are both called " +
                      in_quotes(name) + "; --input cannot tell them apart");
      }
      if (!files_.emplace(first->second, file).second) {
        throw IrError("--input " + name + "=...: given twice");
      }
    }
  }

  void parameter(std::size_t i) {
    const Layer& layer = model_.layers[i];
    const sqdiff::DType dtype = dtype_of(i);
    const PartialShape& partial = report_.shapes[i][0];
    InputValue in;
    in.layer = i;
    if (const auto it = files_.find(i); it != files_.end()) {
      in.file = it->second;
      auto array = std::make_shared<NpyArray>(NpyArray::open(it->second));
      if (dtype == sqdiff::DType::bf16 && array->dtype() == sqdiff::DType::u16) array->reinterpret_as(dtype);
      if (array->dtype() != dtype) {
        throw IrError(where(layer) + it->second + " holds " + std::string(sqdiff::dtype_name(array->dtype())) +
                      " but the Parameter is " + std::string(sqdiff::dtype_name(dtype)) +
                      (dtype == sqdiff::DType::bf16 ? " (bf16 data is read from uint16 .npy files)" : ""));
      }
      if (!fits(partial, array->shape())) {
        throw IrError(where(layer) + it->second + " has shape " + format_shape(array->shape()) +
                      ", which does not fit the Parameter's shape " + format_partial_shape(partial));
      }
      in.value = Tensor::of_array(std::move(array));
    } else if (options_.seed) {
      in.random = true;
      if (partial.dynamic_rank) {
        throw IrError(where(layer) + "the shape " + format_partial_shape(partial) +
                      " has a dynamic rank: --random cannot pick one; pass --input " + layer.name + "=FILE.npy");
      }
      sqdiff::Shape shape;
      for (const Dim& d : partial.dims) shape.push_back(random_size_for(d));
      const std::optional<int64_t> bytes = byte_count(shape, sqdiff::dtype_size(dtype));
      if (!bytes || *bytes > std::min(kMaxRandomBytes, options_.max_tensor_bytes)) {
        throw IrError(where(layer) + "random data of shape " + format_shape(shape) +
                      " would be larger than the limit for random data (" +
                      std::to_string(std::min(kMaxRandomBytes, options_.max_tensor_bytes)) + " bytes); pass --input " + layer.name + "=FILE.npy");
      }
      auto storage = allocate_for(layer, static_cast<std::size_t>(*bytes));
      SplitMix64 rng{*options_.seed ^ fnv1a(layer.name) ^ (stream_[i] * 0xD1B54A32D192ED03ull)};
      fill_random(storage.get(), dtype, *element_count(shape), rng);
      in.value = dense_tensor(dtype, shape, std::move(storage));
    } else {
      throw IrError(where(layer) + "needs data: pass --input " + layer.name + "=FILE.npy, or --random SEED");
    }
    values_[i][0] = in.value;
    output_.inputs.push_back(std::move(in));
  }

  void op(std::size_t i) {
    const Layer& layer = model_.layers[i];
    const Tensor& a = input(i, 0);
    const Tensor& b = input(i, 1);
    sqdiff::Options options;
    options.broadcast = broadcast_of(model_, layer);
    options.threads = options_.threads;
    try {
      const sqdiff::Shape shape = sqdiff::broadcast_shape(a.shape, b.shape, options.broadcast);
      const PartialShape& declared = report_.shapes[i][0];
      if (!fits(declared, shape)) {
        throw IrError(where(layer) + "the inputs " + format_shape(a.shape) + " and " + format_shape(b.shape) +
                      " give " + format_shape(shape) + ", outside its shape " + format_partial_shape(declared));
      }
      const std::optional<int64_t> bytes = byte_count(shape, sqdiff::dtype_size(a.dtype));
      if (!bytes || *bytes > options_.max_tensor_bytes) {
        throw IrError(where(layer) + "the output " + format_shape(shape) + " of " +
                      std::string(sqdiff::dtype_name(a.dtype)) + " is larger than the limit of " +
                      std::to_string(options_.max_tensor_bytes) + " bytes");
      }
      Tensor out = dense_tensor(a.dtype, shape, allocate_for(layer, static_cast<std::size_t>(*bytes)));
      const sqdiff::TensorView view{const_cast<void*>(out.data), out.dtype, out.shape, {}};
      if (layer.type == "SquaredDifference") {
        sqdiff::squared_difference(a.view(), b.view(), view, options);
      } else {
        sqdiff::subtract(a.view(), b.view(), view, options);
      }
      values_[i][0] = std::move(out);
    } catch (const IrError&) {
      throw;
    } catch (const std::bad_alloc&) {
      throw IrError(where(layer) + "out of memory for the output");
    } catch (const sqdiff::Error& e) {
      std::string hint;
      for (const InputValue& in : output_.inputs) {
        if (in.random && model_.layers[in.layer].outputs.size() == 1 && !report_.shapes[in.layer][0].is_static()) {
          hint = " (--random picked sizes for dynamic dims; pass --input files for other sizes)";
        }
      }
      throw IrError(where(layer) + e.what() + hint);
    }
  }

  const Model& model_;
  const ShapeReport& report_;
  const RunOptions& options_;
  Weights weights_;
  std::map<std::size_t, std::string> files_;
  std::map<std::size_t, uint64_t> stream_;  // per Parameter: how many earlier ones share its name
  std::vector<std::vector<std::optional<Tensor>>> values_;
  RunOutput output_;
};

}  // namespace

int64_t Tensor::element_count() const { return tools::element_count(shape).value_or(-1); }

Tensor Tensor::of_array(std::shared_ptr<const NpyArray> array) {
  return {array->dtype(), array->shape(), array->strides(), array->data(), array};
}

namespace {

// Every layer of a type that cannot be run, in document order.
std::vector<const Layer*> unsupported_layers(const Model& model) {
  std::vector<const Layer*> found;
  for (const Layer& layer : model.layers) {
    if (layer.type != "Parameter" && layer.type != "Const" && layer.type != "Result" && !is_elementwise_op(layer)) {
      found.push_back(&layer);
    }
  }
  return found;
}

}  // namespace

void check_runnable(const Model& model) {
  // A model converted from a framework (a LayerNorm: ReduceMean, Add, Sqrt, Divide around the
  // SquaredDifference) has several such layers: the message names the first and lists the rest.
  if (const auto unsupported = unsupported_layers(model); !unsupported.empty()) {
    const Layer& first = *unsupported.front();
    std::string message = model.where(first.line) + "cannot run " + model.describe(first) + ": layer type " +
                          in_quotes(first.type) +
                          " is not supported (sqdiff ir runs Parameter, Const, SquaredDifference, Subtract and Result "
                          "layers)";
    if (unsupported.size() > 1) {
      message += "; also not supported:";
      for (std::size_t i = 1; i < unsupported.size(); ++i) message += (i > 1 ? ", " : " ") + model.describe(*unsupported[i]);
    }
    throw IrError(message);
  }
  for (const Layer& layer : model.layers) {
    std::size_t inputs = 0;
    std::size_t outputs = 1;
    if (layer.type == "Parameter" || layer.type == "Const") {
      inputs = 0;
    } else if (is_elementwise_op(layer)) {
      inputs = 2;
    } else {
      inputs = 1;
      outputs = 0;
    }
    if (layer.inputs.size() != inputs || layer.outputs.size() != outputs) {
      throw IrError(model.where(layer.line) + "cannot run " + model.describe(layer) + ": it has " +
                    std::to_string(layer.inputs.size()) + " input and " + std::to_string(layer.outputs.size()) +
                    " output ports, expected " + std::to_string(inputs) + " and " + std::to_string(outputs));
    }
  }
}

std::string default_bin_path(const std::string& xml_path) {
  std::filesystem::path path(xml_path);
  path.replace_extension(".bin");
  return path.string();
}

RunOutput run_model(const Model& model, const ShapeReport& report, const RunOptions& options) {
  return Runner(model, report, options).run();
}

std::vector<std::string> check_weights(const Model& model, const ShapeReport& report, const std::string& bin_path) {
  std::vector<std::string> problems;
  Weights weights(model, bin_path, RunOptions{}.max_tensor_bytes);
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    const Layer& layer = model.layers[i];
    if (layer.type != "Const" || report.types[i].empty()) continue;
    const ElementType& type = report.types[i][0];
    const PartialShape& shape = report.shapes[i][0];
    if (!type.dtype || !shape.is_static()) continue;  // an error when it must be run
    try {
      (void)weights.locate(layer, *type.dtype, shape.to_shape());
    } catch (const IrError& e) {
      problems.emplace_back(e.what());
    }
  }
  return problems;
}

int64_t random_size_for(const Dim& dim) {
  if (dim.is_static()) return dim.lo;
  if (dim.contains(1)) return 1;
  return dim.lo;  // lo >= 2 here, or the interval is [0, 0] (static)
}

}  // namespace sqdiff::tools::ir
