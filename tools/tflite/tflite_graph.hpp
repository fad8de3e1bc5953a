// The graph of a .tflite model's main subgraph, checked before anything runs:
// every operand has a value (a model input, a constant or an earlier
// operator's output), no tensor is written twice or is a model input that an
// operator writes, and the operators have an order that runs.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tflite/tflite_model.hpp"

namespace sqdiff::tools::tflite {

struct GraphCheck {
  std::vector<std::string> problems;  // each a full sentence naming the operator or tensor
  std::vector<std::size_t> order;     // the operators in an order that runs (empty after a cycle)
};

// Kahn's algorithm, lowest index first: a model stored in execution order (as
// LiteRT writes it) keeps its order.
GraphCheck check_graph(const Model& model);

}  // namespace sqdiff::tools::tflite
