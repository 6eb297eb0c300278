#include "server/metrics/model_version.h"

#include <cctype>
#include <stdexcept>

#include "runlog/sha256.h"

namespace wb::server {

namespace {

std::string quantization_of(const runlog::ModelFacts& facts) {
    if (facts.file_type_name && !facts.file_type_name->empty()) {
        std::string q = *facts.file_type_name;
        for (const char* prefix : {"MOSTLY_", "ALL_"}) {
            const std::string p = prefix;
            for (size_t at = q.find(p); at != std::string::npos; at = q.find(p))
                q.erase(at, p.size());
        }
        return q;
    }
    if (facts.tensor_types.size() == 1) {
        std::string q = facts.tensor_types.begin()->first;
        for (char& c : q) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        return q;
    }
    return "mixed";
}

}  // namespace

std::string model_version_label(const runlog::ModelFacts& facts, const std::string& sha256_hex) {
    if (sha256_hex.size() < 8)
        throw std::invalid_argument("model_version_label: SHA-256 \"" + sha256_hex +
                                    "\" is shorter than 8 hex digits");
    return quantization_of(facts) + "-" + sha256_hex.substr(0, 8);
}

std::string model_version_label_of_file(const std::string& path) {
    return model_version_label(runlog::read_model_facts(path), runlog::sha256_file_hex(path));
}

}  // namespace wb::server
