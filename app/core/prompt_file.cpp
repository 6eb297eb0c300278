#include "core/prompt_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "text_file.h"

namespace wb::core {

namespace {

bool blank(const std::string& s) {
    return s.find_first_not_of(" \t\r") == std::string::npos;
}

// The keys a line may have; any other is ignored with a warning.
bool known_key(const std::string& k) {
    return k == "prompt" || k == "messages" || k == "id" || k == "max_tokens" || k == "stop";
}

// Reads "messages" into `e`; returns the problem or "".
std::string parse_messages(const nlohmann::json& m, PromptEntry& e) {
    if (!m.is_array()) return "\"messages\" is not an array";
    if (m.empty()) return "\"messages\" is empty";
    for (size_t i = 0; i < m.size(); ++i) {
        const nlohmann::json& x = m[i];
        const std::string where = "\"messages\"[" + std::to_string(i) + "]";
        if (!x.is_object()) return where + " is not an object";
        auto role = x.find("role");
        auto content = x.find("content");
        if (role == x.end() || !role->is_string() || role->get<std::string>().empty())
            return where + " needs a non-empty string \"role\"";
        if (content == x.end() || !content->is_string())
            return where + " needs a string \"content\"";
        e.messages.push_back({role->get<std::string>(), content->get<std::string>()});
    }
    return {};
}

// Parses one JSONL line into `e` (unknown keys into `unknown`); returns the
// problem or "".
std::string parse_json_line(const std::string& line, PromptEntry& e,
                            std::vector<std::string>& unknown) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& ex) {
        // Not only parse_error: a number too large for a double (1e999)
        // throws out_of_range.406 from parse() too.
        return std::string("not valid JSON: ") + ex.what();
    }
    if (!j.is_object()) return "not a JSON object";
    for (auto it = j.begin(); it != j.end(); ++it)
        if (!known_key(it.key())) unknown.push_back(it.key());
    auto p = j.find("prompt");
    if (auto m = j.find("messages"); m != j.end()) {
        // Which of the two was meant is unknown.
        if (p != j.end()) return "has both \"prompt\" and \"messages\"; give one of them";
        if (std::string problem = parse_messages(*m, e); !problem.empty()) return problem;
    } else {
        if (p == j.end()) return "\"prompt\" is missing";
        if (!p->is_string()) return "\"prompt\" is not a string";
        e.prompt = p->get<std::string>();
        if (e.prompt.empty()) return "\"prompt\" is empty";
    }
    if (auto id = j.find("id"); id != j.end()) {
        if (id->is_string()) {
            e.id = id->get<std::string>();
        } else if (id->is_number_integer()) {
            // dump(): the integer's exact digits; get<int64_t>() would turn
            // 18446744073709551615 (parsed as unsigned) into "-1".
            e.id = id->dump();
        } else {
            return "\"id\" is not a string or integer";
        }
    }
    if (auto m = j.find("max_tokens"); m != j.end()) {
        if (!m->is_number_integer()) return "\"max_tokens\" is not an integer";
        // nlohmann parses every non-negative integer as unsigned; reading a
        // huge one as int64_t would report 18446744073709551615 as -1.
        if (!m->is_number_unsigned() || m->get<uint64_t>() < 1 || m->get<uint64_t>() > 1000000)
            return "\"max_tokens\" must be in [1, 1000000], got " + m->dump();
        e.max_tokens = static_cast<int32_t>(m->get<uint64_t>());
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
        // A UTF-8 byte order mark (editors on Windows write one) is not part
        // of the first line: with it, a JSONL file would read as plain text
        // and every JSON line would run as a literal prompt.
        const bool bom = text.rfind("\xEF\xBB\xBF", 0) == 0;
        std::istringstream in(bom ? text.substr(3) : text);
        std::string l;
        while (std::getline(in, l)) lines.push_back(l);
    }
    for (const std::string& l : lines) {
        if (blank(l)) continue;
        out.jsonl = l[l.find_first_not_of(" \t")] == '{';
        break;
    }
    std::map<std::string, size_t> ids;  // id -> line that has it
    for (size_t i = 0; i < lines.size(); ++i) {
        std::string line = lines[i];
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (blank(line)) continue;
        PromptEntry e;
        e.line = i + 1;
        if (out.jsonl) {
            std::vector<std::string> unknown;
            const std::string problem = parse_json_line(line, e, unknown);
            for (const std::string& k : unknown)
                out.warnings.push_back({e.line, "unknown key \"" + k + "\" ignored"});
            if (!problem.empty()) {
                out.errors.push_back({e.line, problem});
                continue;
            }
        } else {
            e.prompt = line;
        }
        const bool own_id = !e.id.empty();
        if (!own_id) e.id = "line-" + std::to_string(e.line);
        if (const auto [it, fresh] = ids.emplace(e.id, e.line); !fresh) {
            std::string problem =
                "duplicate id \"" + e.id + "\" (line " + std::to_string(it->second) + " has it)";
            if (!own_id) problem += "; this line has no \"id\", give it one";
            out.errors.push_back({e.line, problem});
            continue;
        }
        out.entries.push_back(std::move(e));
    }
    return out;
}

std::string entry_text(const PromptEntry& e) {
    return e.messages.empty() ? e.prompt : chat::plain_text_prompt(e.messages);
}

PromptFile read_prompt_file(const std::string& path) {
    return parse_prompt_text(read_input_file(path, "prompts file"));
}

}  // namespace wb::core
