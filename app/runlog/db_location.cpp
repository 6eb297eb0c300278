#include "runlog/db_location.h"

#include <cstdlib>
#include <stdexcept>

namespace wb::runlog {

std::string default_db_path() {
    const char* xdg = std::getenv("XDG_DATA_HOME");
    std::string base;
    if (xdg && xdg[0] == '/') {
        base = xdg;
    } else {
        const char* home = std::getenv("HOME");
        if (!home || home[0] != '/')
            throw std::runtime_error(
                "cannot find the data folder for the run log: neither XDG_DATA_HOME nor HOME "
                "is an absolute path; pass --db PATH");
        base = std::string(home) + "/.local/share";
    }
    return base + "/inference-workbench/" + kDbFileName;
}

}  // namespace wb::runlog
