#include "compare/testset.h"

#include <nlohmann/json.hpp>
#include <sstream>

#include "text_file.h"

namespace wb::compare {

namespace {

// The file's text as a stream (regular files of at most 256 MiB; a FIFO
// or /dev/zero is refused at once rather than read forever).
std::istringstream open_or_throw(const std::string& path) {
    try {
        return std::istringstream(read_input_file(path, "test set"));
    } catch (const std::runtime_error& e) {
        throw TestSetError(e.what());
    }
}

std::string at(const std::string& path, size_t line) {
    return path + ":" + std::to_string(line) + ": ";
}

}  // namespace

std::string trim(const std::string& s) {
    const char* ws = " \t\n\r\f\v";
    const size_t b = s.find_first_not_of(ws);
    if (b == std::string::npos) return {};
    const size_t e = s.find_last_not_of(ws);
    return s.substr(b, e - b + 1);
}

std::vector<TestItem> load_testset(const std::string& path, uint32_t default_max_tokens) {
    std::istringstream in = open_or_throw(path);
    std::vector<TestItem> items;
    std::string text;
    for (size_t line = 1; std::getline(in, text); ++line) {
        const std::string t = trim(text);
        if (t.empty() || t[0] == '#') continue;
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(t);
        } catch (const nlohmann::json::exception& e) {  // also out_of_range.406 (1e999)
            throw TestSetError(at(path, line) + "invalid JSON: " + e.what());
        }
        if (!j.is_object()) throw TestSetError(at(path, line) + "expected a JSON object");
        TestItem item;
        item.line = line;
        item.max_tokens = default_max_tokens;
        item.id = j.contains("id")
                      ? (j["id"].is_string() ? j["id"].get<std::string>() : j["id"].dump())
                      : "line " + std::to_string(line);
        if (!j.contains("prompt") || !j["prompt"].is_string()) {
            throw TestSetError(at(path, line) + "item has no \"prompt\" string");
        }
        item.prompt = j["prompt"].get<std::string>();
        const char* key = j.contains("answer") ? "answer" : "expected";
        if (!j.contains(key) || !j[key].is_string()) {
            throw TestSetError(at(path, line) + "item '" + item.id +
                               "' has no \"answer\" string (expected answer)");
        }
        item.answer = j[key].get<std::string>();
        if (trim(item.answer).empty()) {
            throw TestSetError(at(path, line) + "item '" + item.id +
                               "' has an empty \"answer\" (it would match every output)");
        }
        if (j.contains("match")) {
            const std::string m = j["match"].is_string() ? j["match"].get<std::string>() : "";
            if (m == "exact") {
                item.mode = MatchMode::Exact;
            } else if (m == "contains") {
                item.mode = MatchMode::Contains;
            } else {
                throw TestSetError(at(path, line) + "\"match\" must be \"exact\" or \"contains\"");
            }
        }
        if (j.contains("max_tokens")) {
            if (!j["max_tokens"].is_number_unsigned() || j["max_tokens"].get<uint64_t>() == 0 ||
                j["max_tokens"].get<uint64_t>() > 4096) {
                throw TestSetError(at(path, line) + "\"max_tokens\" must be an integer in 1..4096");
            }
            item.max_tokens = j["max_tokens"].get<uint32_t>();
        }
        items.push_back(std::move(item));
    }
    if (items.empty()) throw TestSetError(path + ": test set has no items");
    return items;
}

bool answer_matches(const std::string& output, const TestItem& item) {
    if (item.mode == MatchMode::Exact) return trim(output) == trim(item.answer);
    return output.find(item.answer) != std::string::npos;
}

std::vector<std::string> load_prompts(const std::string& path) {
    std::istringstream in = open_or_throw(path);
    std::vector<std::string> prompts;
    std::string text;
    for (size_t line = 1; std::getline(in, text); ++line) {
        if (!text.empty() && text.back() == '\r') text.pop_back();
        if (trim(text).empty()) continue;
        if (trim(text)[0] == '{') {
            nlohmann::json j;
            try {
                j = nlohmann::json::parse(text);
            } catch (const nlohmann::json::exception& e) {  // also out_of_range.406 (1e999)
                throw TestSetError(at(path, line) + "invalid JSON: " + e.what());
            }
            if (!j.is_object() || !j.contains("prompt") || !j["prompt"].is_string()) {
                throw TestSetError(at(path, line) + "JSON line has no \"prompt\" string");
            }
            prompts.push_back(j["prompt"].get<std::string>());
        } else {
            prompts.push_back(text);
        }
    }
    if (prompts.empty()) throw TestSetError(path + ": no prompts");
    return prompts;
}

}  // namespace wb::compare
