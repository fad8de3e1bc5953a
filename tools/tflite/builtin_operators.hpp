// The names of LiteRT's builtin operators (BuiltinOperator in schema.fbs, all of
// whose values tflite_subset.fbs declares),
// so that every operator of a model is named as LiteRT names it: a published
// model holds dozens of kinds sqdiff does not run (CONV_2D, SOFTMAX, ...), and
// a number alone says nothing to a reader.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sqdiff::tools::tflite {

// The schema's name of a BuiltinOperator value ("CONV_2D"), or "" for a value
// the schema of this version does not have.
std::string_view builtin_operator_name(int32_t code);

// The name, or "builtin operator 250" for a value without one.
std::string builtin_operator_text(int32_t code);

}  // namespace sqdiff::tools::tflite
