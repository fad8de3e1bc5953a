// Non-owning views of the caller's buffers.
#pragma once

#include "sqdiff/broadcast.hpp"
#include "sqdiff/dtype.hpp"

namespace sqdiff {

// Strides are in elements and may be 0 (expanded), negative (reversed) or
// larger than dense (gapped). Empty strides mean dense row-major.
struct ConstTensorView {
  const void* data;
  DType dtype;
  Shape shape;
  Shape strides = {};
};

struct TensorView {
  void* data;
  DType dtype;
  Shape shape;
  Shape strides = {};
};

}  // namespace sqdiff
