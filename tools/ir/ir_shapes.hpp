// Shape and type inference over an IR model (SPEC sections 3 and 5), and the
// check of every SquaredDifference and Subtract layer against the dims the file
// declares on its output port.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir_model.hpp"
#include "partial_shape.hpp"
#include "sqdiff/broadcast.hpp"

namespace sqdiff::tools::ir {

// True for "SquaredDifference" and "Subtract", the layers sqdiff computes.
bool is_elementwise_op(const Layer& layer);

// The broadcast mode of an op layer from <data auto_broadcast=... auto_broadcast.auto_broadcast_axis=...>
// (OpenVINO's name for the axis; the plain auto_broadcast_axis is read when that is absent):
// auto_broadcast defaults to "numpy" (none, numpy, pdpd; case-insensitive),
// auto_broadcast_axis to -1 and matters only for pdpd. Throws IrError for any
// other mode ("explicit" included) or a malformed axis.
sqdiff::Broadcast broadcast_of(const Model& model, const Layer& layer);


// The check of one SquaredDifference or Subtract layer.
struct OpCheck {
  std::size_t layer = 0;  // index into Model::layers
  sqdiff::Broadcast mode;
  bool mode_known = false;
  PartialShape a;
  PartialShape b;
  std::optional<PartialShape> inferred;  // nullopt when inference failed
  std::optional<PartialShape> declared;  // the output port's dims, if it has one
  ElementType type;                      // the inputs' common element type, if known
  std::vector<std::string> problems;     // each "FILE:LINE: layer ...: what"
  bool ok() const { return problems.empty(); }
};

struct ShapeReport {
  // Per layer, per output port: the shape and element type that flow out of it.
  std::vector<std::vector<PartialShape>> shapes;
  std::vector<std::vector<ElementType>> types;
  std::vector<OpCheck> ops;                 // in topological order
  std::vector<std::string> other_problems;  // Parameter/Const/Result checks
  std::size_t problem_count() const;
  bool ok() const { return problem_count() == 0; }
};

// Infers the output shape of every SquaredDifference and Subtract layer from
// the shapes flowing into it, checks it against the declared output dims, and
// checks that input ports declare what flows into them. Other layers' outputs
// are taken as declared (Parameter and Const: their `shape` and
// `element_type` data attributes when present). Never throws: every problem
// (a malformed attribute included) is collected with its layer and line.
ShapeReport check_shapes(const Model& model);

// The line printed for an op: `layer 3 "sqdiff" SquaredDifference: [8,1,6,1]
// with [7,1,5] (numpy) -> [8,7,6,5] ok`.
std::string format_op_check(const Model& model, const OpCheck& check);

}  // namespace sqdiff::tools::ir
