#pragma once
// How a compute shader uses each storage buffer of descriptor set 0, read
// from its SPIR-V decorations (SPIR-V spec 1.6, sections 2.3 "Physical
// layout", 3.20 "Decoration" and 3.32 instructions OpDecorate,
// OpMemberDecorate, OpVariable, OpTypePointer): a GLSL `readonly buffer`
// becomes NonWritable (on the variable or on every member of its block),
// `writeonly` NonReadable. The recorder uses this to place barriers only
// between ops that depend on each other.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace wb::vk {

/// What a shader may do with one binding.
struct BindingAccess {
    bool reads = true;   ///< false only when the shader declares it writeonly
    bool writes = true;  ///< false only when the shader declares it readonly
};

/// Access of bindings 0..n_bindings-1 of descriptor set 0 in the SPIR-V
/// module `words` (`bytes` long). A binding the module does not declare, or
/// declares without readonly/writeonly, counts as read and written (the
/// safe answer). Throws std::invalid_argument when `words` is not SPIR-V
/// (wrong magic number, too short, or an instruction running past the end).
std::vector<BindingAccess> spirv_binding_access(const uint32_t* words, size_t bytes,
                                                uint32_t n_bindings);

}  // namespace wb::vk
