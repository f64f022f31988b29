// Outputs are written atomically: to a temporary file beside the target, fsynced, then renamed.
// A reader never sees a half-written mask, report or checkpoint.
#pragma once
#include <string>
#include <string_view>

namespace bosch {

void write_file_atomic(const std::string& path, std::string_view contents);
std::string read_file(const std::string& path);  // throws Error naming the path

}  // namespace bosch
