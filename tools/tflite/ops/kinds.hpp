// The operator kinds, each defined in its own file of this folder and listed
// once in ../operator_kinds.cpp's table.
#pragma once

#include "tflite/operator_kind.hpp"

namespace sqdiff::tools::tflite::ops {

extern const OperatorKind kSub;                // library_binary_ops.cpp: through sqdiff::subtract and
extern const OperatorKind kSquaredDifference;  // squared_difference, quantized ones through SPEC 9's ops
extern const OperatorKind kMul;                // broadcast_binary_ops.cpp
extern const OperatorKind kMaximum;
extern const OperatorKind kMinimum;
extern const OperatorKind kRelu;               // relu_ops.cpp
extern const OperatorKind kReluN1To1;
extern const OperatorKind kRelu6;
extern const OperatorKind kRelu0To1;
extern const OperatorKind kSquare;             // square_op.cpp
extern const OperatorKind kQuantize;           // quantize_ops.cpp
extern const OperatorKind kDequantize;
extern const OperatorKind kMean;               // mean_op.cpp: as LiteRT's reference kernel, not the exact mean

}  // namespace sqdiff::tools::tflite::ops
