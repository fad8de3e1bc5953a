#pragma once
// The `sqdiff ir` subcommand: reads an OpenVINO IR (v10/v11) model, checks the
// shapes of its SquaredDifference and Subtract layers, and optionally runs it.
#include <CLI/CLI.hpp>

namespace sqdiff::tools {

// Adds the `ir` subcommand (with its options and callback) to `app`.
void register_ir_command(CLI::App& app);

}  // namespace sqdiff::tools
