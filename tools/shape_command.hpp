// The `sqdiff shape` subcommand: the broadcast shape of two (partial) shapes.
#pragma once

#include <CLI/CLI.hpp>

namespace sqdiff::tools {

void register_shape_command(CLI::App& app);

}  // namespace sqdiff::tools
