#pragma once
// The `sqdiff tflite` subcommand: reads a .tflite (LiteRT) model, checks its
// SQUARED_DIFFERENCE and SUB operators, and optionally runs it.
#include <CLI/CLI.hpp>

namespace sqdiff::tools {

// Adds the `tflite` subcommand (with its options and callback) to `app`.
void register_tflite_command(CLI::App& app);

}  // namespace sqdiff::tools
