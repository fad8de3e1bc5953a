#include "tflite/builtin_operators.hpp"

#include "tflite_subset_generated.h"

namespace sqdiff::tools::tflite {

std::string_view builtin_operator_name(int32_t code) {
  // The schema's enum (tflite_subset.fbs) holds every value of LiteRT's; flatc's
  // accessor gives "" for one beyond it.
  return sqdiff::tflite_schema::EnumNameBuiltinOperator(static_cast<sqdiff::tflite_schema::BuiltinOperator>(code));
}

std::string builtin_operator_text(int32_t code) {
  const std::string_view name = builtin_operator_name(code);
  return name.empty() ? "builtin operator " + std::to_string(code) : std::string(name);
}

}  // namespace sqdiff::tools::tflite
