// `workbench-cli load` in a build without the load-test client: cpp-httplib
// was not found when it was configured (app/load/CMakeLists.txt; the
// engine-only build allows that). Says what to install instead of failing to link.
#include <cstdio>
#include <string>
#include <vector>

namespace wb::cli {

/// Prints why `load` is not in this build and how to get it; returns 1.
int cmd_load(const std::vector<std::string>& /*argv*/) {
    std::fputs(
        "error: load: this workbench-cli was built without the load-test client (cpp-httplib "
        "was not found); install libcpp-httplib-dev (Debian) and build again\n",
        stderr);
    return 1;
}

}  // namespace wb::cli
