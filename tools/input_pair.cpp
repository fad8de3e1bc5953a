#include "input_pair.hpp"

#include "run_command.hpp"

namespace sqdiff::tools {

void apply_dtype(NpyArray& array, const std::string& name) {
  if (name.empty()) return;
  const std::string canonical = name == "bfloat16" ? "bf16" : name;
  for (int i = 0; i < kDTypeCount; ++i) {
    const auto dtype = static_cast<DType>(i);
    if (dtype_name(dtype) != canonical) continue;
    if (dtype == array.dtype()) return;
    if (dtype == DType::bf16 && array.dtype() == DType::u16) {
      array.reinterpret_as(DType::bf16);
      return;
    }
    throw sqdiff::Error(array.path() + ": holds " + std::string(dtype_name(array.dtype())) +
                        " data, which cannot be read as " + canonical +
                        " (--dtype bf16 reads u16 files holding bf16 bits and np.save'd ml_dtypes.bfloat16 arrays; "
                        "other names must match the file)");
  }
  throw sqdiff::Error("unknown dtype \"" + name + "\" (expected one of f16, bf16, f32, f64, i8, i16, i32, i64, "
                      "u8, u16, u32, u64)");
}

TwoByteVoid two_byte_void_for(const std::string& name) {
  return name == "bf16" || name == "bfloat16" ? TwoByteVoid::bf16 : TwoByteVoid::refuse;
}

std::vector<std::string> dtype_names() {
  std::vector<std::string> names;
  for (int i = 0; i < kDTypeCount; ++i) {
    names.emplace_back(dtype_name(static_cast<DType>(i)));
    if (static_cast<DType>(i) == DType::bf16) names.emplace_back("bfloat16");
  }
  return names;
}

InputPair open_input_pair(const std::string& a_path, const std::string& b_path, const std::string& dtype,
                          const Broadcast& mode, const std::string& what) {
  // a first, then b (as arguments their order would be unspecified): an error names a when both are bad.
  const TwoByteVoid two_byte_void = two_byte_void_for(dtype);
  NpyArray a = NpyArray::open(a_path, two_byte_void);
  NpyArray b = NpyArray::open(b_path, two_byte_void);
  return align_input_pair(std::move(a), std::move(b), dtype, mode, what);
}

InputPair align_input_pair(NpyArray a, NpyArray b, const std::string& dtype, const Broadcast& mode,
                           const std::string& what) {
  const std::string a_path = a.path(), b_path = b.path();
  apply_dtype(a, dtype);
  apply_dtype(b, dtype);
  if (a.dtype() != b.dtype()) {
    throw sqdiff::Error(what + ": mixed dtypes: a (" + a_path + ") is " + std::string(dtype_name(a.dtype())) +
                        ", b (" + b_path + ") is " + std::string(dtype_name(b.dtype())) +
                        "; inputs must have the same dtype (no promotion)");
  }
  Shape shape;
  try {
    shape = sqdiff::broadcast_shape(a.shape(), b.shape(), mode);
  } catch (const sqdiff::Error& e) {
    // Name the subcommand's op rather than broadcast_shape, as the op itself would.
    std::string message = e.what();
    const std::string prefix = "broadcast_shape:";
    if (message.rfind(prefix, 0) == 0) message = what + ":" + message.substr(prefix.size());
    throw sqdiff::Error(message);
  }
  Shape a_strides = aligned_strides(shape, a.shape(), a.strides(), mode, false);
  Shape b_strides = aligned_strides(shape, b.shape(), b.strides(), mode, true);
  return InputPair{std::move(a), std::move(b), std::move(shape), std::move(a_strides), std::move(b_strides)};
}

}  // namespace sqdiff::tools
