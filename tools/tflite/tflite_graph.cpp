#include "tflite/tflite_graph.hpp"

#include <cstdint>
#include <set>

namespace sqdiff::tools::tflite {

GraphCheck check_graph(const Model& model) {
  GraphCheck report;
  const std::size_t n = model.tensors.size();
  std::vector<int64_t> producer(n, -1);
  std::vector<bool> is_input(n, false);
  for (const int32_t t : model.inputs) is_input[static_cast<std::size_t>(t)] = true;
  for (const OperatorInfo& op : model.operators) {
    for (const int32_t t : op.outputs) {
      if (t < 0) continue;
      const auto i = static_cast<std::size_t>(t);
      if (is_input[i]) {
        report.problems.push_back(op.describe() + ": writes " + model.describe_tensor(t) + ", an input of the model");
      } else if (producer[i] >= 0) {
        report.problems.push_back(op.describe() + ": writes " + model.describe_tensor(t) + ", which " +
                                  model.operators[static_cast<std::size_t>(producer[i])].describe() + " writes too");
      } else {
        producer[i] = static_cast<int64_t>(op.index);
      }
    }
  }
  auto has_source = [&](int32_t t) {
    const auto i = static_cast<std::size_t>(t);
    return is_input[i] || model.tensors[i].has_data || producer[i] >= 0;
  };
  for (const OperatorInfo& op : model.operators) {
    for (const int32_t t : op.inputs) {
      if (t >= 0 && !has_source(t)) {
        report.problems.push_back(op.describe() + ": reads " + model.describe_tensor(t) +
                                  ", which has no value (not a model input, a constant, nor an operator's "
                                  "output)");
      }
    }
  }
  for (const int32_t t : model.outputs) {
    if (!has_source(t)) {
      report.problems.push_back("the model's output " + model.describe_tensor(t) +
                                " has no value (not a model input, a constant, nor an operator's output)");
    }
  }
  // Kahn's algorithm over the operators, lowest index first: a model stored
  // in execution order (as LiteRT writes it) keeps its order.
  const std::size_t ops = model.operators.size();
  std::vector<std::size_t> waiting(ops, 0);
  std::vector<std::vector<std::size_t>> consumers(ops);
  for (const OperatorInfo& op : model.operators) {
    std::set<std::size_t> from;
    for (const int32_t t : op.inputs) {
      if (t >= 0 && producer[static_cast<std::size_t>(t)] >= 0) {
        from.insert(static_cast<std::size_t>(producer[static_cast<std::size_t>(t)]));
      }
    }
    waiting[op.index] = from.size();
    for (const std::size_t p : from) consumers[p].push_back(op.index);
  }
  std::set<std::size_t> ready;
  for (std::size_t i = 0; i < ops; ++i) {
    if (waiting[i] == 0) ready.insert(i);
  }
  while (!ready.empty()) {
    const std::size_t i = *ready.begin();
    ready.erase(ready.begin());
    report.order.push_back(i);
    for (const std::size_t c : consumers[i]) {
      if (--waiting[c] == 0) ready.insert(c);
    }
  }
  if (report.order.size() != ops) {
    std::string names;
    for (std::size_t i = 0; i < ops; ++i) {
      if (waiting[i] != 0) names += (names.empty() ? "" : ", ") + model.operators[i].describe();
    }
    report.problems.push_back("the operators form a cycle: " + names + " wait on each other");
    report.order.clear();
  }
  return report;
}

}  // namespace sqdiff::tools::tflite
