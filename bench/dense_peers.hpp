// XNNPACK and oneDNN as contenders of a case over dense f32 tensors: each
// peer's operator is created and bound to the case's buffers once, here, and
// the contender's call only runs it (see xnnpack_peer.hpp, onednn_peer.hpp).
#pragma once

#include <sqdiff/tensor_view.hpp>

#include <vector>

#include "measure.hpp"

namespace sqdiff_bench {

enum class PeerOp { subtract, squared_difference };

// Appends an "xnnpack" and an "onednn" peer computing out = a - b or
// (a - b)^2 with NumPy broadcasting. A peer that cannot do the shapes
// (oneDNN broadcasts its second source only) is left out of the case.
void add_dense_peers(std::vector<Contender>& contenders, PeerOp op, const sqdiff::Shape& a_shape, const float* a,
                     const sqdiff::Shape& b_shape, const float* b, float* out, int threads);

}  // namespace sqdiff_bench
