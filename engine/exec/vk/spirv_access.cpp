#include "exec/vk/spirv_access.h"

#include <map>
#include <stdexcept>
#include <string>

namespace wb::vk {

namespace {

// SPIR-V constants (SPIR-V spec 1.6, section 3).
constexpr uint32_t kMagic = 0x07230203;
constexpr uint32_t kOpTypeStruct = 30;
constexpr uint32_t kOpTypePointer = 32;
constexpr uint32_t kOpVariable = 59;
constexpr uint32_t kOpDecorate = 71;
constexpr uint32_t kOpMemberDecorate = 72;
constexpr uint32_t kDecNonWritable = 24;
constexpr uint32_t kDecNonReadable = 25;
constexpr uint32_t kDecBinding = 33;
constexpr uint32_t kDecDescriptorSet = 34;

struct Flags {
    bool non_writable = false, non_readable = false;
};

}  // namespace

std::vector<BindingAccess> spirv_binding_access(const uint32_t* words, size_t bytes,
                                                uint32_t n_bindings) {
    const size_t n = bytes / 4;
    if (!words || n < 5 || words[0] != kMagic)
        throw std::invalid_argument("spirv_binding_access: not a SPIR-V module (magic number)");
    std::map<uint32_t, Flags> id_flags;                    // variable id -> its own decorations
    std::map<uint32_t, std::map<uint32_t, Flags>> member;  // struct id -> member -> decorations
    std::map<uint32_t, uint32_t> binding, set;             // variable id -> Binding / DescriptorSet
    std::map<uint32_t, uint32_t> pointee;                  // pointer type id -> pointee type id
    std::map<uint32_t, uint32_t> n_members;                // struct id -> member count
    std::map<uint32_t, uint32_t> var_type;                 // variable id -> pointer type id
    for (size_t i = 5; i < n;) {
        const uint32_t op = words[i] & 0xFFFF, len = words[i] >> 16;
        if (len == 0 || i + len > n) {
            throw std::invalid_argument("spirv_binding_access: instruction at word " +
                                        std::to_string(i) + " runs past the end");
        }
        const uint32_t* a = words + i + 1;  // operands
        if (op == kOpDecorate && len >= 3) {
            if (a[1] == kDecNonWritable) id_flags[a[0]].non_writable = true;
            if (a[1] == kDecNonReadable) id_flags[a[0]].non_readable = true;
            if (a[1] == kDecBinding && len >= 4) binding[a[0]] = a[2];
            if (a[1] == kDecDescriptorSet && len >= 4) set[a[0]] = a[2];
        } else if (op == kOpMemberDecorate && len >= 4) {
            if (a[2] == kDecNonWritable) member[a[0]][a[1]].non_writable = true;
            if (a[2] == kDecNonReadable) member[a[0]][a[1]].non_readable = true;
        } else if (op == kOpTypeStruct && len >= 2) {
            n_members[a[0]] = len - 2;
        } else if (op == kOpTypePointer && len >= 4) {
            pointee[a[0]] = a[2];
        } else if (op == kOpVariable && len >= 4) {
            var_type[a[1]] = a[0];
        }
        i += len;
    }

    std::vector<BindingAccess> out(n_bindings);
    std::vector<bool> seen(n_bindings, false);  // two variables may alias one binding
    for (const auto& [var, b] : binding) {
        const auto s = set.find(var);
        if ((s != set.end() && s->second != 0) || b >= n_bindings) continue;
        Flags f = id_flags[var];
        // Block decorations: the flag holds when every member carries it.
        const auto pt = var_type.find(var);
        if (pt != var_type.end()) {
            const auto st = pointee.find(pt->second);
            if (st != pointee.end()) {
                const auto nm = n_members.find(st->second);
                const auto mm = member.find(st->second);
                if (nm != n_members.end() && nm->second > 0 && mm != member.end()) {
                    bool all_nw = true, all_nr = true;
                    for (uint32_t m = 0; m < nm->second; ++m) {
                        const auto it = mm->second.find(m);
                        all_nw = all_nw && it != mm->second.end() && it->second.non_writable;
                        all_nr = all_nr && it != mm->second.end() && it->second.non_readable;
                    }
                    f.non_writable = f.non_writable || all_nw;
                    f.non_readable = f.non_readable || all_nr;
                }
            }
        }
        const BindingAccess acc{!f.non_readable, !f.non_writable};
        if (!seen[b]) {
            out[b] = acc;
            seen[b] = true;
        } else {
            out[b].reads = out[b].reads || acc.reads;
            out[b].writes = out[b].writes || acc.writes;
        }
    }
    return out;
}

}  // namespace wb::vk
