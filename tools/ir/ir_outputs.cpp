// Where a run's tensors go and how they are shown (ir_outputs.hpp).
#include "ir/ir_outputs.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <type_traits>

#include "npy.hpp"
#include "shape_count.hpp"
#include "sqdiff/bfloat16.hpp"
#include "sqdiff/float16.hpp"

namespace sqdiff::tools::ir {
namespace {

// Copies a strided tensor into dense row-major storage, element by element.
void copy_dense(const Tensor& t, void* out) {
  const std::size_t size = sqdiff::dtype_size(t.dtype);
  const auto count = element_count(t.shape).value_or(0);
  if (count == 0) return;
  if (t.strides.empty()) {
    std::memcpy(out, t.data, static_cast<std::size_t>(count) * size);
    return;
  }
  const std::size_t rank = t.shape.size();
  std::vector<int64_t> index(rank, 0);
  const auto* base = static_cast<const unsigned char*>(t.data);
  auto* dst = static_cast<unsigned char*>(out);
  for (int64_t n = 0; n < count; ++n) {
    int64_t offset = 0;
    for (std::size_t d = 0; d < rank; ++d) offset += index[d] * t.strides[d];
    std::memcpy(dst + static_cast<std::size_t>(n) * size, base + offset * static_cast<int64_t>(size), size);
    for (std::size_t d = rank; d-- > 0;) {
      if (++index[d] < t.shape[d]) break;
      index[d] = 0;
    }
  }
}

template <typename T>
std::string int_text(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::is_signed_v<T>) return std::to_string(static_cast<long long>(v));
  else return std::to_string(static_cast<unsigned long long>(v));
}

std::string float_text(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.6g", v);
  return buffer;
}

std::string value_text(sqdiff::DType dtype, const void* p) {
  using sqdiff::DType;
  switch (dtype) {
    case DType::f16: {
      uint16_t bits;
      std::memcpy(&bits, p, 2);
      return float_text(static_cast<float>(sqdiff::float16::from_bits(bits)));
    }
    case DType::bf16: {
      uint16_t bits;
      std::memcpy(&bits, p, 2);
      return float_text(static_cast<float>(sqdiff::bfloat16::from_bits(bits)));
    }
    case DType::f32: {
      float v;
      std::memcpy(&v, p, 4);
      return float_text(v);
    }
    case DType::f64: {
      double v;
      std::memcpy(&v, p, 8);
      return float_text(v);
    }
    case DType::i8: return int_text<int8_t>(p);
    case DType::i16: return int_text<int16_t>(p);
    case DType::i32: return int_text<int32_t>(p);
    case DType::i64: return int_text<int64_t>(p);
    case DType::u8: return int_text<uint8_t>(p);
    case DType::u16: return int_text<uint16_t>(p);
    case DType::u32: return int_text<uint32_t>(p);
    case DType::u64: return int_text<uint64_t>(p);
  }
  return "?";
}

}  // namespace

std::string sanitize_file_name(std::string_view name) {
  std::string out;
  for (const char c : name) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                      c == '_' || c == '-';
    out += keep ? c : '_';
  }
  if (out.empty()) out = "result";
  if (out.front() == '.') out.insert(out.begin(), '_');
  if (out.size() > 200) out.resize(200);
  return out;
}

std::vector<std::string> unique_file_names(const std::vector<std::pair<std::string, int64_t>>& named) {
  std::vector<std::string> names;
  std::set<std::string> used;
  std::map<std::string, int> count;
  for (const auto& item : named) ++count[sanitize_file_name(item.first)];
  for (const auto& [given, id] : named) {
    std::string base = sanitize_file_name(given);
    if (count[base] > 1) base += "_" + std::to_string(id);
    std::string name = base + ".npy";
    for (int k = 2; used.count(name) != 0; ++k) name = base + "_" + std::to_string(k) + ".npy";
    used.insert(name);
    names.push_back(name);
  }
  return names;
}

std::vector<std::string> unique_file_names(const Model& model, const std::vector<std::size_t>& layers) {
  std::vector<std::pair<std::string, int64_t>> named;
  for (const std::size_t i : layers) named.emplace_back(model.layers[i].name, model.layers[i].id);
  return unique_file_names(named);
}

std::vector<std::string> result_file_names(const Model& model, const RunOutput& output) {
  std::vector<std::size_t> layers;
  for (const ResultValue& r : output.results) layers.push_back(r.layer);
  return unique_file_names(model, layers);
}

std::vector<std::string> random_input_file_names(const Model& model, const RunOutput& output) {
  std::vector<std::size_t> layers;
  for (const InputValue& in : output.inputs) {
    if (in.random) layers.push_back(in.layer);
  }
  return unique_file_names(model, layers);
}

void write_tensor(const std::string& path, const Tensor& value) {
  if (value.strides.empty()) {
    write_npy(path, value.dtype, value.shape, value.data);
    return;
  }
  auto dense = allocate(static_cast<std::size_t>(byte_count(value.shape, sqdiff::dtype_size(value.dtype)).value_or(0)));
  copy_dense(value, dense.get());
  write_npy(path, value.dtype, value.shape, dense.get());
}

std::string format_values(const Tensor& value, std::size_t count) {
  const auto total = tools::element_count(value.shape).value_or(0);
  const std::size_t n = std::min<std::size_t>(count, static_cast<std::size_t>(total));
  const std::size_t size = sqdiff::dtype_size(value.dtype);
  // Row-major walk over the first n elements through the strides.
  const std::size_t rank = value.shape.size();
  sqdiff::Shape strides = value.strides;
  if (strides.empty()) {
    strides.assign(rank, 1);
    for (std::size_t d = rank; d-- > 1;) strides[d - 1] = strides[d] * value.shape[d];
  }
  std::vector<int64_t> index(rank, 0);
  std::string out;
  const auto* base = static_cast<const unsigned char*>(value.data);
  for (std::size_t k = 0; k < n; ++k) {
    int64_t offset = 0;
    for (std::size_t d = 0; d < rank; ++d) offset += index[d] * strides[d];
    if (!out.empty()) out += ' ';
    out += value_text(value.dtype, base + offset * static_cast<int64_t>(size));
    for (std::size_t d = rank; d-- > 0;) {
      if (++index[d] < value.shape[d]) break;
      index[d] = 0;
    }
  }
  if (static_cast<int64_t>(n) < total) out += " ...";
  return out;
}

}  // namespace sqdiff::tools::ir
