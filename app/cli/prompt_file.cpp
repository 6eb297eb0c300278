#include "prompt_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

namespace wb::cli {

namespace {

bool blank(const std::string& s) {
    return s.find_first_not_of(" \t\r") == std::string::npos;
}

// Parses one JSONL line into `e`; returns the problem or "".
std::string parse_json_line(const std::string& line, PromptEntry& e) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& ex) {
        return std::string("not valid JSON: ") + ex.what();
    }
    if (!j.is_object()) return "not a JSON object";
    auto p = j.find("prompt");
    if (p == j.end()) return "\"prompt\" is missing";
    if (!p->is_string()) return "\"prompt\" is not a string";
    e.prompt = p->get<std::string>();
    if (e.prompt.empty()) return "\"prompt\" is empty";
    if (auto id = j.find("id"); id != j.end()) {
        if (id->is_string()) {
            e.id = id->get<std::string>();
        } else if (id->is_number_integer()) {
            e.id = std::to_string(id->get<int64_t>());
        } else {
            return "\"id\" is not a string or integer";
        }
    }
    if (auto m = j.find("max_tokens"); m != j.end()) {
        if (!m->is_number_integer()) return "\"max_tokens\" is not an integer";
        const int64_t v = m->get<int64_t>();
        if (v < 1 || v > 1000000)
            return "\"max_tokens\" must be in [1, 1000000], got " + std::to_string(v);
        e.max_tokens = static_cast<int32_t>(v);
    }
    if (auto s = j.find("stop"); s != j.end()) {
        if (s->is_string()) {
            e.stop.push_back(s->get<std::string>());
        } else if (s->is_array()) {
            for (const auto& x : *s) {
                if (!x.is_string()) return "\"stop\" holds a non-string";
                e.stop.push_back(x.get<std::string>());
            }
        } else {
            return "\"stop\" is not a string or array of strings";
        }
    }
    return {};
}

}  // namespace

PromptFile parse_prompt_text(const std::string& text) {
    PromptFile out;
    std::vector<std::string> lines;
    {
        std::istringstream in(text);
        std::string l;
        while (std::getline(in, l)) lines.push_back(l);
    }
    for (const std::string& l : lines) {
        if (blank(l)) continue;
        out.jsonl = l[l.find_first_not_of(" \t")] == '{';
        break;
    }
    std::set<std::string> ids;
    for (size_t i = 0; i < lines.size(); ++i) {
        std::string line = lines[i];
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (blank(line)) continue;
        PromptEntry e;
        e.line = i + 1;
        if (out.jsonl) {
            const std::string problem = parse_json_line(line, e);
            if (!problem.empty()) {
                out.errors.push_back({e.line, problem});
                continue;
            }
        } else {
            e.prompt = line;
        }
        if (e.id.empty()) e.id = "line-" + std::to_string(e.line);
        if (!ids.insert(e.id).second) {
            out.errors.push_back({e.line, "duplicate id \"" + e.id + "\""});
            continue;
        }
        out.entries.push_back(std::move(e));
    }
    return out;
}

PromptFile read_prompt_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f)
        throw std::runtime_error(path + ": cannot read the prompts file: " + std::strerror(errno));
    std::ostringstream ss;
    ss << f.rdbuf();
    if (f.bad()) throw std::runtime_error(path + ": read error");
    return parse_prompt_text(ss.str());
}

}  // namespace wb::cli
