#include "compare/generation.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "compare/logits_math.h"

namespace wb::compare {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace

GreedyRun greedy_generate(model::Model& m, std::span<const int32_t> prompt, uint32_t n_predict,
                          uint32_t n_ubatch, const std::function<bool(int32_t)>& stop) {
    if (prompt.empty()) throw std::invalid_argument("greedy_generate: empty prompt");
    const size_t n_vocab = m.hparams().n_vocab;
    GreedyRun run;
    run.n_prompt = static_cast<uint32_t>(prompt.size());
    run.prompt.assign(prompt.begin(), prompt.end());
    model::Batch batch;
    std::vector<float> logits;  // [n_outputs, n_vocab]; one row per decode here
    m.seq_rm(0);
    const Clock::time_point t0 = Clock::now();
    for (size_t start = 0; start < prompt.size(); start += n_ubatch) {
        const size_t end = std::min(prompt.size(), start + n_ubatch);
        batch.clear();
        for (size_t p = start; p < end; ++p) {
            batch.add(prompt[p], static_cast<int32_t>(p), 0, p + 1 == prompt.size());
        }
        m.decode(batch, logits);
    }
    run.prefill_ms = ms_since(t0);
    int32_t pos = static_cast<int32_t>(prompt.size());
    for (uint32_t i = 0; i < n_predict; ++i) {
        const int32_t tok = argmax(std::span<const float>(logits.data(), n_vocab));
        run.tokens.push_back(tok);
        if (i == 0) run.ttft_ms = ms_since(t0);
        if (stop && stop(tok)) {
            run.stopped = true;
            break;
        }
        if (i + 1 == n_predict) break;
        batch.clear();
        batch.add(tok, pos++, 0, true);
        m.decode(batch, logits);
    }
    run.e2e_ms = ms_since(t0);
    m.seq_rm(0);
    return run;
}

std::vector<int32_t> teacher_forced_argmax(model::Model& m, std::span<const int32_t> prompt,
                                           std::span<const int32_t> forced, uint32_t n_ubatch) {
    if (prompt.empty()) throw std::invalid_argument("teacher_forced_argmax: empty prompt");
    if (forced.empty()) return {};
    const size_t n_vocab = m.hparams().n_vocab;
    std::vector<int32_t> seq(prompt.begin(), prompt.end());  // [n_prompt + n - 1]
    seq.insert(seq.end(), forced.begin(), forced.end() - 1);
    const size_t first_out = prompt.size() - 1;  // logits here predict forced[0]
    std::vector<int32_t> out;
    std::vector<float> logits;  // [n_outputs, n_vocab]
    model::Batch batch;
    m.seq_rm(0);
    for (size_t start = 0; start < seq.size(); start += n_ubatch) {
        const size_t end = std::min(seq.size(), start + n_ubatch);
        batch.clear();
        for (size_t p = start; p < end; ++p) {
            batch.add(seq[p], static_cast<int32_t>(p), 0, p >= first_out);
        }
        m.decode(batch, logits);
        for (size_t r = 0; r < batch.n_outputs(); ++r) {
            out.push_back(argmax(std::span<const float>(logits.data() + r * n_vocab, n_vocab)));
        }
    }
    m.seq_rm(0);
    return out;
}

TokenAgreement token_agreement(std::span<const int32_t> a, std::span<const int32_t> b) {
    TokenAgreement t;
    t.total = a.size();
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) t.equal += a[i] == b[i] ? 1 : 0;
    return t;
}

std::optional<size_t> first_divergence(std::span<const int32_t> a, std::span<const int32_t> b) {
    const size_t n = std::min(a.size(), b.size());
    for (size_t i = 0; i < n; ++i) {
        if (a[i] != b[i]) return i;
    }
    return std::nullopt;
}

}  // namespace wb::compare
