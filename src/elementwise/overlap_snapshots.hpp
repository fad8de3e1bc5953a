// In-place calls whose inputs partly overlap the output (SPEC 3): such an input
// is replaced by a dense snapshot, so the result is as if both inputs had been
// read before anything was written. Shared by the float and quantized ops.
#pragma once

#include <cstddef>
#include <vector>

#include "shape/validate.hpp"

namespace sqdiff::detail {

// The snapshots' storage; it must outlive the call's execution.
struct InputSnapshots {
  std::vector<std::byte> a;
  std::vector<std::byte> b;
};

// Copies the inputs `call` marks as needing it into `storage`, points `call`
// at the copies and re-aligns its operands; returns whether it copied any.
bool snapshot_overlapping_inputs(CheckedCall& call, const Broadcast& mode, InputSnapshots& storage);

}  // namespace sqdiff::detail
