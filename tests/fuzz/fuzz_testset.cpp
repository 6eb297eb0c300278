// fuzz_testset: arbitrary bytes as a compare test set / prompt list ->
// load_testset and load_prompts. Only TestSetError may come out, and its
// message names the file (and the line, for a bad line).

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "compare/testset.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string& path = wbfuzz::scratch_path(".jsonl");
    wbfuzz::write_file(path, data, size);
    try {
        const auto items = wb::compare::load_testset(path, 32);
        for (const auto& it : items) {
            if (it.prompt.empty() && it.answer.empty()) std::abort();
            if (it.max_tokens < 1 || it.max_tokens > 4096) std::abort();
            (void)wb::compare::answer_matches(it.prompt, it);
        }
    } catch (const wb::compare::TestSetError& e) {
        wbfuzz::check_message(e.what(), path);
    }
    try {
        (void)wb::compare::load_prompts(path);
    } catch (const wb::compare::TestSetError& e) {
        wbfuzz::check_message(e.what(), path);
    }
    return 0;
}
