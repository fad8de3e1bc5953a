#include "tflite/tflite_model.hpp"

#include <cstring>
#include <limits>
#include <new>
#include <utility>

#include "input_file.hpp"
#include "tflite/builtin_operators.hpp"
#include "shape_count.hpp"
#include "tflite_subset_generated.h"

namespace sqdiff::tools::tflite {
namespace schema = sqdiff::tflite_schema;

namespace {

// Offsets of 0 and 1 in Buffer.offset mean "no external data" in LiteRT
// (1 is the placeholder its writer leaves before the offsets are known).
constexpr uint64_t kNoExternalOffset = 1;

std::shared_ptr<void> aligned_copy(const void* data, std::size_t bytes) {
  const std::size_t size = bytes == 0 ? 1 : bytes;
  void* p = ::operator new(size, std::align_val_t{64});
  if (bytes != 0) std::memcpy(p, data, bytes);
  return std::shared_ptr<void>(p, [](void* q) { ::operator delete(q, std::align_val_t{64}); });
}

std::optional<sqdiff::DType> dtype_of(int32_t type) {
  switch (type) {
    case schema::TensorType_FLOAT32: return sqdiff::DType::f32;
    case schema::TensorType_FLOAT16: return sqdiff::DType::f16;
    case schema::TensorType_INT32: return sqdiff::DType::i32;
    case schema::TensorType_UINT8: return sqdiff::DType::u8;
    case schema::TensorType_INT64: return sqdiff::DType::i64;
    case schema::TensorType_INT16: return sqdiff::DType::i16;
    case schema::TensorType_INT8: return sqdiff::DType::i8;
    default: return std::nullopt;
  }
}

std::vector<int32_t> ints(const flatbuffers::Vector<int32_t>* v) {
  if (v == nullptr) return {};
  return std::vector<int32_t>(v->begin(), v->end());
}

class Reader {
 public:
  // `owner` keeps the bytes alive: constants point into them (the mapped file).
  Reader(std::shared_ptr<const std::byte> owner, std::size_t size, std::string path, const ReadLimits& limits)
      : owner_(std::move(owner)), bytes_(reinterpret_cast<const uint8_t*>(owner_.get())), size_(size),
        limits_(limits) {
    model_.path = std::move(path);
  }

  Model read() {
    verify();
    const schema::Model* root = schema::GetModel(bytes_);
    model_.version = root->version();
    if (root->description() != nullptr) model_.description = root->description()->str();
    const auto* subgraphs = root->subgraphs();
    if (subgraphs == nullptr || subgraphs->size() == 0) fail("the model has no subgraph");
    model_.subgraph_count = subgraphs->size();
    const schema::SubGraph* main = subgraphs->Get(0);
    if (main->name() != nullptr) model_.subgraph_name = main->name()->str();
    read_tensors(*root, *main);
    model_.inputs = tensor_list(main->inputs(), "its inputs");
    model_.outputs = tensor_list(main->outputs(), "its outputs");
    read_operators(*root, *main);
    return std::move(model_);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw TfliteError(model_.path + ": " + what); }

  void verify() const {
    // The identifier first: a file of another kind gets a plain message, not the Verifier's.
    if (size_ < 8 || !flatbuffers::BufferHasIdentifier(bytes_, schema::ModelIdentifier())) {
      fail("not a .tflite model: it does not carry the identifier \"TFL3\" at bytes 4-7" +
           std::string(size_ < 8 ? " (the file has " + std::to_string(size_) + " bytes)" : ""));
    }
    // The Verifier bounds every offset, vector and string of the tables the
    // schema declares before anything reads them; its limits on depth and table
    // count keep a crafted file from taking long. A flatbuffer is under 2 GiB
    // (FlatBuffers' 32-bit offsets): a larger file keeps its big buffers after
    // it (Buffer.offset), so the Verifier sees the first 2 GiB, as LiteRT's does.
    const std::size_t flatbuffer_bytes = std::min<std::size_t>(size_, FLATBUFFERS_MAX_BUFFER_SIZE - 1);
    flatbuffers::Verifier verifier(bytes_, flatbuffer_bytes, /*max_depth=*/64, /*max_tables=*/1000000);
    if (!schema::VerifyModelBuffer(verifier)) {
      fail("not a valid .tflite model: the FlatBuffers verifier rejected it (an offset, vector or string "
           "outside the file, or a truncated file)");
    }
  }

  void read_tensors(const schema::Model& root, const schema::SubGraph& main) {
    const auto* tensors = main.tensors();
    const auto* buffers = root.buffers();
    const std::size_t count = tensors == nullptr ? 0 : tensors->size();
    model_.tensors.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
      const schema::Tensor* t = tensors->Get(static_cast<flatbuffers::uoffset_t>(i));
      TensorInfo& info = model_.tensors[i];
      if (t->name() != nullptr) info.name = t->name()->str();
      const std::string where = "tensor " + std::to_string(i) + " " + in_quotes(info.name) + ": ";
      info.type = t->type();
      info.dtype = dtype_of(info.type);
      info.is_variable = t->is_variable();
      info.sparse = t->sparsity() != nullptr;
      if (t->shape() != nullptr) {
        if (t->shape()->size() > kMaxRank) {
          fail(where + "rank " + std::to_string(t->shape()->size()) + " is more than sqdiff runs (" +
               std::to_string(kMaxRank) + ")");
        }
        for (const int32_t d : *t->shape()) {
          if (d < 0) fail(where + "dim " + std::to_string(d) + " is negative");
          info.shape.push_back(d);
        }
      }
      read_quantization(*t, info, where);
      const uint32_t buffer = t->buffer();
      if (buffer == 0) continue;  // buffer 0 is LiteRT's empty sentinel: no data
      if (buffers == nullptr || buffer >= buffers->size()) {
        fail(where + "buffer index " + std::to_string(buffer) + " is out of range (the model has " +
             std::to_string(buffers == nullptr ? 0 : buffers->size()) + " buffers)");
      }
      read_constant(*buffers->Get(buffer), buffer, info, where);
    }
  }

  void read_quantization(const schema::Tensor& t, TensorInfo& info, const std::string& where) {
    const schema::QuantizationParameters* q = t.quantization();
    if (q == nullptr || q->scale() == nullptr || q->scale()->size() == 0) return;
    const auto* scales = q->scale();
    const auto* zero_points = q->zero_point();
    info.scale_count = scales->size();
    info.quantized_dimension = q->quantized_dimension();
    if (scales->size() > 1) {
      info.per_axis = true;
      return;
    }
    int64_t zp = 0;
    if (zero_points != nullptr && zero_points->size() > 0) {
      if (zero_points->size() != 1) {
        info.quant_problem = where + "1 scale but " + std::to_string(zero_points->size()) + " zero points";
        return;
      }
      // Copied, not read in place: the Verifier aligns a vector's length to
      // 4 bytes but not its 8-byte elements, which a crafted file misaligns.
      std::memcpy(&zp, zero_points->Data(), sizeof zp);
      zp = static_cast<int64_t>(flatbuffers::EndianScalar(static_cast<uint64_t>(zp)));
    }
    if (zp < std::numeric_limits<int32_t>::min() || zp > std::numeric_limits<int32_t>::max()) {
      info.quant_problem = where + "zero point " + std::to_string(zp) + " is beyond int32";
      return;
    }
    info.quant = sqdiff::QuantParams{scales->Get(0), static_cast<int32_t>(zp)};
  }

  void read_constant(const schema::Buffer& buffer, uint32_t index, TensorInfo& info, const std::string& where) {
    const uint8_t* data = nullptr;
    uint64_t bytes = 0;
    const bool external = buffer.offset() > kNoExternalOffset;
    if (external) {
      // A large model's data after the flatbuffer: `size` bytes at `offset` of the file.
      if (buffer.data() != nullptr && buffer.data()->size() != 0) {
        fail(where + "buffer " + std::to_string(index) + " has both data and an external offset");
      }
      if (buffer.offset() > size_ || buffer.size() > size_ - buffer.offset()) {
        fail(where + "buffer " + std::to_string(index) + "'s external data (" + std::to_string(buffer.size()) +
             " bytes at offset " + std::to_string(buffer.offset()) + ") lies outside the file (" +
             std::to_string(size_) + " bytes)");
      }
      data = bytes_ + buffer.offset();
      bytes = buffer.size();
    } else if (buffer.data() != nullptr) {
      data = buffer.data()->data();
      bytes = buffer.data()->size();
    }
    if (bytes == 0) return;  // an empty buffer: the tensor is not a constant
    info.has_data = true;
    if (!info.dtype) return;  // a constant of a type sqdiff does not read: named if an operator uses it
    // A sparse constant's buffer holds its stored values only (fewer bytes than its shape
    // needs): not read, and named if an operator sqdiff runs uses it.
    if (info.sparse) return;
    const std::optional<int64_t> expected = byte_count(info.shape, sqdiff::dtype_size(*info.dtype));
    if (!expected || *expected > limits_.max_tensor_bytes) {
      fail(where + "a constant of " + std::to_string(bytes) + " bytes whose shape is too large");
    }
    if (static_cast<uint64_t>(*expected) != bytes) {
      fail(where + "buffer " + std::to_string(index) + " holds " + std::to_string(bytes) + " bytes, but " +
           tensor_type_name(info.type) + " " + shape_text(info.shape) + " needs " + std::to_string(*expected));
    }
    // In place when aligned for its type (the mapped file's pages are read only
    // where an operator reads them); a copy otherwise.
    const std::size_t item = sqdiff::dtype_size(*info.dtype);
    if (reinterpret_cast<std::uintptr_t>(data) % item == 0) {
      info.constant = std::shared_ptr<const void>(owner_, data);
    } else {
      info.constant = aligned_copy(data, static_cast<std::size_t>(bytes));
    }
  }

  static std::string shape_text(const sqdiff::Shape& shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
    return s + "]";
  }

  std::vector<int32_t> tensor_list(const flatbuffers::Vector<int32_t>* v, const std::string& what) const {
    std::vector<int32_t> list = ints(v);
    for (const int32_t t : list) {
      if (t < 0 || static_cast<std::size_t>(t) >= model_.tensors.size()) {
        fail("subgraph 0: tensor index " + std::to_string(t) + " in " + what + " is out of range (" +
             std::to_string(model_.tensors.size()) + " tensors)");
      }
    }
    return list;
  }

  void read_operators(const schema::Model& root, const schema::SubGraph& main) {
    const auto* codes = root.operator_codes();
    const auto* operators = main.operators();
    const std::size_t count = operators == nullptr ? 0 : operators->size();
    for (std::size_t i = 0; i < count; ++i) {
      const schema::Operator* op = operators->Get(static_cast<flatbuffers::uoffset_t>(i));
      OperatorInfo info;
      info.index = i;
      const std::string where = "operator " + std::to_string(i) + ": ";
      if (codes == nullptr || op->opcode_index() >= codes->size()) {
        fail(where + "opcode index " + std::to_string(op->opcode_index()) + " is out of range (the model has " +
             std::to_string(codes == nullptr ? 0 : codes->size()) + " operator codes)");
      }
      const schema::OperatorCode* code = codes->Get(op->opcode_index());
      // LiteRT's rule: codes below 127 may sit in the old byte field only, so
      // the larger of the two fields is the operator.
      info.builtin_code = std::max<int32_t>(code->builtin_code(), code->deprecated_builtin_code());
      if (code->custom_code() != nullptr) info.custom_code = code->custom_code()->str();
      // -1 is TFLite's "optional input left out": kept, and refused by the check where it matters.
      for (const int32_t t : ints(op->inputs())) info.inputs.push_back(checked_operand(t, where, "input"));
      for (const int32_t t : ints(op->outputs())) info.outputs.push_back(checked_operand(t, where, "output"));
      info.options_type = op->builtin_options_type();
      read_options(*op, info);
      model_.operators.push_back(std::move(info));
    }
  }

  // LiteRT's parser zeroes an operator's parameters and fills them from its
  // options table when there is one: a schema default (SubOptions'
  // pot_scale_int16 = true) belongs to a table that omits the field, so a SUB
  // without the table takes the general int16 path.
  static void read_options(const schema::Operator& op, OperatorInfo& info) {
    if (info.builtin_code == kBuiltinSub) {
      if (const schema::SubOptions* sub = op.builtin_options_as_SubOptions(); sub != nullptr) {
        info.activation = static_cast<FusedActivation>(sub->fused_activation_function());
        info.pot_scale_int16 = sub->pot_scale_int16();
      }
    } else if (info.builtin_code == kBuiltinMul) {
      if (const schema::MulOptions* mul = op.builtin_options_as_MulOptions(); mul != nullptr) {
        info.activation = static_cast<FusedActivation>(mul->fused_activation_function());
      }
    } else if (info.builtin_code == kBuiltinMean) {
      if (const schema::ReducerOptions* reducer = op.builtin_options_as_ReducerOptions(); reducer != nullptr) {
        info.keep_dims = reducer->keep_dims();
      }
    }
  }

  int32_t checked_operand(int32_t t, const std::string& where, const std::string& what) const {
    if (t < -1 || t >= static_cast<int64_t>(model_.tensors.size())) {
      fail(where + what + " tensor index " + std::to_string(t) + " is out of range (" +
           std::to_string(model_.tensors.size()) + " tensors)");
    }
    return t;
  }

  std::shared_ptr<const std::byte> owner_;
  const uint8_t* bytes_;
  std::size_t size_;
  ReadLimits limits_;
  Model model_;
};

}  // namespace

std::string in_quotes(const std::string& s) { return "\"" + s + "\""; }

std::string tensor_type_name(int32_t type) {
  static const char* const names[] = {"FLOAT32", "FLOAT16", "INT32", "UINT8",  "INT64",     "STRING",  "BOOL",
                                      "INT16",   "COMPLEX64", "INT8", "FLOAT64", "COMPLEX128", "UINT64", "RESOURCE",
                                      "VARIANT", "UINT32",  "UINT16", "INT4",   "BFLOAT16"};
  if (type >= 0 && static_cast<std::size_t>(type) < sizeof names / sizeof names[0]) return names[type];
  return "type " + std::to_string(type);
}

std::string OperatorInfo::op_name() const {
  if (builtin_code == kBuiltinCustom) return "CUSTOM " + in_quotes(custom_code);
  return builtin_operator_text(builtin_code);
}

std::string OperatorInfo::describe() const { return "operator " + std::to_string(index) + " (" + op_name() + ")"; }

std::string Model::describe_tensor(int32_t index) const {
  if (index < 0 || static_cast<std::size_t>(index) >= tensors.size()) return "tensor " + std::to_string(index);
  return "tensor " + std::to_string(index) + " " + in_quotes(tensors[static_cast<std::size_t>(index)].name);
}

Model parse_model(const void* bytes, std::size_t size, const std::string& path, const ReadLimits& limits) {
  if (size > static_cast<uint64_t>(limits.max_copied_bytes)) {
    throw TfliteError(path + ": " + std::to_string(size) + " bytes in memory, more than sqdiff tflite copies (" +
                      std::to_string(limits.max_copied_bytes) + ")");
  }
  // An aligned copy: the flatbuffer's scalars are read in place, and its
  // alignment rules hold from the buffer's start.
  std::shared_ptr<void> copy = aligned_copy(bytes, size);
  return Reader(std::shared_ptr<const std::byte>(copy, static_cast<const std::byte*>(copy.get())), size, path, limits)
      .read();
}

Model load_model(const std::string& path, const ReadLimits& limits) {
  // Mapped, not read: a model of any size costs the pages its flatbuffer and
  // the constants the run uses take, and the mapping starts page-aligned.
  const InputFile file = InputFile::open(path, "the model file");
  return Reader(file.map(), static_cast<std::size_t>(file.size()), path, limits).read();
}

}  // namespace sqdiff::tools::tflite
