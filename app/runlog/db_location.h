#pragma once
// Where the run log lives by default: the application's data folder, the
// same folder QStandardPaths::AppDataLocation gives a Qt application named
// "inference-workbench" with no organization name on Linux (XDG Base
// Directory spec: $XDG_DATA_HOME, else ~/.local/share). The GUI calls
// default_db_path() as well (not QStandardPaths), so both always agree.

#include <string>

namespace wb::runlog {

/// File name of the run log inside the data folder.
inline constexpr const char* kDbFileName = "runlog.sqlite";

/// $XDG_DATA_HOME/inference-workbench/runlog.sqlite when XDG_DATA_HOME is an
/// absolute path (the spec says relative values are ignored), else
/// $HOME/.local/share/inference-workbench/runlog.sqlite. Throws
/// std::runtime_error when neither XDG_DATA_HOME nor HOME is usable.
std::string default_db_path();

}  // namespace wb::runlog
