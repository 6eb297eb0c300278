#pragma once
// The compute device a model runs on, as one struct for the engine (each
// Model reports it) and the run log (its environment rows store it).
// Header-only and dependency-free, so the run log uses it without linking
// the engine or Vulkan.

#include <string>

namespace wb::model {

/// The compute device a model runs on, spelled the same way by every
/// surface (the run log's environment rows compare these strings).
struct DeviceFacts {
    std::string backend;      ///< "vulkan" or "cpu"
    std::string name;         ///< deviceName ("llvmpipe (LLVM 15.0.6, 256 bits)"); "" for cpu
    std::string type;         ///< "discrete-gpu", "integrated-gpu", "virtual-gpu", "cpu", "other"
    std::string driver_name;  ///< driverName ("llvmpipe", "NVIDIA"); "" for cpu
    std::string driver_version;  ///< vendor-decoded version plus " (driverInfo)" when present
    std::string api_version;     ///< "1.3.255"; "" for cpu
};

}  // namespace wb::model
