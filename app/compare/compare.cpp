#include "compare/compare.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <sstream>
#include <stdexcept>

#include "ggml/types.h"
#include "gguf/gguf.h"
#include "model/hparams.h"
#include "quant/file_info.h"
#include "text_file.h"
#include "tokenizer/vocab.h"

namespace wb::compare {

namespace {

using Clock = std::chrono::steady_clock;

// What we learn from a model file before loading its weights.
struct ModelFile {
    std::string path;
    tokenizer::Vocab vocab;
    model::HParams hp;
    uint64_t file_bytes = 0;
    uint64_t weight_bytes = 0;
    std::string tensor_types;
    std::string quantization;
};

ModelFile inspect(const std::string& path) {
    const gguf::File f = gguf::File::open(path);
    ModelFile m{
        path, tokenizer::Vocab::from_gguf(f), model::HParams::from_gguf(f), f.file_size(), 0, {},
        {}};
    for (const gguf::TensorInfo& t : f.tensors()) m.weight_bytes += t.nbytes;
    const quant::QuantizationInfo q = quant::describe_quantization(f);
    m.tensor_types = q.tensor_types_text();
    m.quantization = q.summary();
    return m;
}

bool same_vocab(const tokenizer::Vocab& a, const tokenizer::Vocab& b) {
    if (a.n_tokens() != b.n_tokens()) return false;
    for (int32_t i = 0; i < a.n_tokens(); ++i) {
        if (a.text(i) != b.text(i)) return false;
    }
    return true;
}

std::string read_file(const std::string& path) {
    return read_input_file(path, "text file");
}

std::string pieces(const tokenizer::Vocab& v, const std::vector<int32_t>& ids, bool drop_eog) {
    std::string out;
    for (int32_t id : ids) {
        if (drop_eog && v.is_eog(id)) continue;
        out += v.token_to_piece(id);
    }
    return out;
}

// Display width of UTF-8 text: code points, not bytes ("±" is one column).
size_t columns(const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80 ? 1 : 0;
    return n;
}

// One line for the table: newlines shown as "\\n".
std::string one_line(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '\n') {
            out += "\\n";
        } else {
            out += c;
        }
    }
    return out;
}

std::string label_of(size_t i) {
    return std::string(1, static_cast<char>('A' + (i % 26)));
}

}  // namespace

std::vector<std::string> default_prompts() {
    return {"Once upon a time", "Lily and Ben", "The little dog was sad because"};
}

SpeedFigure speed_figure(std::vector<double> samples) {
    SpeedFigure f;
    if (samples.empty()) return f;
    f.samples = samples;
    std::sort(samples.begin(), samples.end());
    f.median = metrics::percentile_sorted(samples, 50);
    f.min = samples.front();
    f.max = samples.back();
    return f;
}

std::string speed_method(uint32_t repetitions) {
    return "median (min-max) of " + std::to_string(repetitions) + " timed pass" +
           (repetitions == 1 ? "" : "es") + " after " + std::to_string(kWarmupPasses) +
           " untimed warm-up pass; one request at a time, each model alone, the models' passes "
           "taken in turn, each after one short untimed request of its own; a pass runs every "
           "prompt once, TTFT and e2e are its mean over the prompts";
}

namespace {

// The workload, tokenized per model, and what each model needs to run it.
struct Plan {
    std::vector<ModelFile> files;                                  // [n_models]
    std::vector<std::vector<std::vector<int32_t>>> prompt_tokens;  // [model][prompt][tokens]
    std::vector<std::vector<std::vector<int32_t>>> item_tokens;    // [model][item][tokens]
    std::vector<std::vector<int32_t>> text_tokens;                 // [model][tokens]
    std::vector<uint32_t> need;  // [n_models] KV cells the longest piece of work takes
};

// Reads the workload and the model files (never their weights) and fills
// the report's settings and per-model file figures. Bad input throws here,
// before any model is loaded or run.
Plan plan(const CompareOptions& opts, CompareReport& r) {
    // One model is A against itself: its speed, cost and perplexity (the
    // Compare tab beside remote panes, which have no logits). The CLI asks
    // for two.
    if (opts.models.empty()) {
        throw std::invalid_argument("compare needs at least one model (A = reference, B...)");
    }
    if (opts.repetitions == 0) {
        throw std::invalid_argument("compare needs at least one timed repetition");
    }
    r.prompts = opts.prompts.empty() ? default_prompts() : opts.prompts;
    r.n_predict = opts.n_predict;
    r.repetitions = opts.repetitions;
    r.kv_type = model::kv_type_name(opts.kv_type);
    r.text_file = opts.text_file;
    r.ppl_ctx = opts.ppl_ctx;
    r.testset_file = opts.testset_file;

    if (opts.testset_file) r.test_items = load_testset(*opts.testset_file, opts.testset_max_tokens);
    const std::string text = opts.text_file ? read_file(*opts.text_file) : std::string();
    Plan p;
    for (const std::string& path : opts.models) p.files.push_back(inspect(path));

    const size_t n_models = p.files.size();
    r.models.resize(n_models);
    p.prompt_tokens.resize(n_models);
    p.item_tokens.resize(n_models);
    p.text_tokens.resize(n_models);
    p.need.resize(n_models);
    for (size_t i = 0; i < n_models; ++i) {
        ModelReport& m = r.models[i];
        const ModelFile& f = p.files[i];
        m.path = f.path;
        m.label = label_of(i);
        m.file_bytes = f.file_bytes;
        m.weight_bytes = f.weight_bytes;
        m.tensor_types = f.tensor_types;
        m.quantization = f.quantization;
        m.n_vocab = f.vocab.n_tokens();
        m.same_vocab = same_vocab(p.files[0].vocab, f.vocab);
        if (!m.same_vocab) {
            r.notes.push_back(m.label + " (" + std::filesystem::path(f.path).filename().string() +
                              ") has a different vocabulary from A (" +
                              std::to_string(f.vocab.n_tokens()) + " vs " +
                              std::to_string(p.files[0].vocab.n_tokens()) +
                              " tokens or different token texts): no token agreement or KL "
                              "divergence; outputs, speed, perplexity and accuracy are still "
                              "compared");
        }
        for (const std::string& prompt : r.prompts)
            p.prompt_tokens[i].push_back(f.vocab.tokenize(prompt, true));
        for (const TestItem& it : r.test_items)
            p.item_tokens[i].push_back(f.vocab.tokenize(it.prompt, true));
        if (opts.text_file) {
            p.text_tokens[i] = f.vocab.tokenize(text, true);
            if (p.text_tokens[i].size() < 2ull * opts.ppl_ctx) {
                throw TextTooShort(
                    *opts.text_file + ": " + std::to_string(p.text_tokens[i].size()) +
                    " tokens, too short for perplexity with a " + std::to_string(opts.ppl_ctx) +
                    "-token window (llama.cpp's rule needs at least 2 x n_ctx = " +
                    std::to_string(2ull * opts.ppl_ctx) +
                    " tokens); use a longer text or a smaller --ctx");
            }
        }
        // Every piece of work runs alone in sequence 0 from an empty cache,
        // so the longest one sets the context.
        uint32_t need = opts.text_file ? opts.ppl_ctx : 1;
        for (const auto& t : p.prompt_tokens[i]) {
            need = std::max<uint32_t>(need, static_cast<uint32_t>(t.size()) + opts.n_predict);
        }
        for (size_t k = 0; k < p.item_tokens[i].size(); ++k) {
            need = std::max<uint32_t>(need, static_cast<uint32_t>(p.item_tokens[i][k].size()) +
                                                r.test_items[k].max_tokens);
        }
        p.need[i] = need;
    }
    return p;
}

// Empties sequence 0 of every model when the comparison ends, by return or
// by exception (a cancelled greedy run leaves its cells behind), so a
// borrowed model goes back to its owner with that sequence free.
class ClearSeq0 {
  public:
    explicit ClearSeq0(std::span<model::Model* const> models) : models_(models) {}
    ClearSeq0(const ClearSeq0&) = delete;
    ClearSeq0& operator=(const ClearSeq0&) = delete;
    ~ClearSeq0() {
        for (model::Model* m : models_) {
            try {
                m->seq_rm(0);
            } catch (...) {  // NOLINT(bugprone-empty-catch): nothing better to do in a destructor
            }
        }
    }

  private:
    std::span<model::Model* const> models_;
};

// Steps 3-5 on loaded models ([n_models], models[i] runs plan.files[i]):
// context figures, prompts, text, test set. load_ms is already set.
void measure(const CompareOptions& opts, const Plan& p, std::span<model::Model* const> models,
             CompareReport& r, const CompareProgress& progress) {
    auto say = [&](const std::string& s) {
        if (progress) progress(s);
    };
    const ClearSeq0 clear(models);
    const size_t n_models = p.files.size();
    for (size_t i = 0; i < n_models; ++i) {
        ModelReport& m = r.models[i];
        m.backend = models[i]->backend_name();
        m.device = models[i]->device_facts();
        const model::MemoryReport mem = models[i]->memory_report();
        if (mem.on_device) m.device_bytes = mem.total();
        m.n_ctx = models[i]->context().n_ctx;
        const model::HParams& hp = models[i]->hparams();
        m.kv_bytes =
            2ull * hp.n_layer * m.n_ctx *
            model::kv_row_bytes(models[i]->context().kv_type, uint64_t{hp.n_head_kv} * hp.head_dim);
    }

    // 3. Prompts. Speed first, as llama-bench measures it: one request at a
    // time, each model alone on the machine. Every model's untimed warm-up
    // pass over the prompts takes its first-use work (pipeline compilation,
    // first touches of the weights); then come the timed passes, taken in
    // turn (pass 1 of A, of B, ..., pass 2 of A, ...) so that a change in
    // the machine's background load over the run falls on every model
    // alike instead of on whichever ran last. The first timed pass's runs
    // are the model's outputs (greedy: every pass gives the same tokens).
    const uint32_t passes = kWarmupPasses + opts.repetitions;
    const size_t total_runs = n_models * passes * r.prompts.size();
    size_t done_runs = 0;
    for (uint32_t pass = 0; pass < passes; ++pass) {
        const bool warmup = pass < kWarmupPasses;
        for (size_t i = 0; i < n_models; ++i) {
            ModelReport& m = r.models[i];
            if (!warmup) {
                m.timed_runs.emplace_back();
                // Untimed, before each timed pass: the models' passes
                // alternate, so without it a pass would start with the
                // other model's weights and KV in the CPU caches (a small
                // model fits in L2: a model compared with itself read ~4%
                // slower TTFT in whichever pane ran right after the other's
                // warm-up). A short request touches every weight once.
                greedy_generate(*models[i], p.prompt_tokens[i].front(),
                                std::min<uint32_t>(opts.n_predict, 2), opts.n_ubatch);
            }
            for (size_t pi = 0; pi < r.prompts.size(); ++pi) {
                say("speed " + m.label +
                    (warmup ? std::string(" (warm-up, not timed)")
                            : " (timed pass " + std::to_string(pass - kWarmupPasses + 1) + "/" +
                                  std::to_string(opts.repetitions) + ")") +
                    ": run " + std::to_string(++done_runs) + "/" + std::to_string(total_runs));
                GreedyRun run = greedy_generate(*models[i], p.prompt_tokens[i][pi], opts.n_predict,
                                                opts.n_ubatch);
                if (warmup) {
                    m.warmup_runs.push_back(std::move(run));
                } else {
                    m.timed_runs.back().push_back(std::move(run));
                }
            }
        }
    }
    for (size_t i = 0; i < n_models; ++i) {
        ModelReport& m = r.models[i];
        m.runs = m.timed_runs.front();
        for (const GreedyRun& g : m.runs)
            m.outputs.push_back(pieces(p.files[i].vocab, g.tokens, false));

        // One sample per timed pass.
        std::vector<double> prefill, decode, ttft, e2e;
        for (const std::vector<GreedyRun>& pass_runs : m.timed_runs) {
            double prompt_tokens = 0, prefill_ms = 0, decode_tokens = 0, decode_ms = 0;
            double ttft_sum = 0, e2e_sum = 0;
            for (const GreedyRun& g : pass_runs) {
                prompt_tokens += g.n_prompt;
                prefill_ms += g.prefill_ms;
                if (g.tokens.size() > 1) {
                    decode_tokens += static_cast<double>(g.tokens.size() - 1);
                    decode_ms += g.e2e_ms - g.ttft_ms;
                }
                ttft_sum += g.ttft_ms;
                e2e_sum += g.e2e_ms;
            }
            const auto n = static_cast<double>(pass_runs.size());
            prefill.push_back(prefill_ms > 0 ? prompt_tokens * 1000.0 / prefill_ms : 0);
            decode.push_back(decode_ms > 0 ? decode_tokens * 1000.0 / decode_ms : 0);
            ttft.push_back(ttft_sum / n);
            e2e.push_back(e2e_sum / n);
        }
        m.prefill_tps = speed_figure(std::move(prefill));
        m.decode_tps = speed_figure(std::move(decode));
        m.ttft_ms = speed_figure(std::move(ttft));
        m.e2e_ms = speed_figure(std::move(e2e));
    }

    // Agreement with A, prompt by prompt (not timed).
    for (size_t pi = 0; pi < r.prompts.size(); ++pi) {
        say("agreement, prompt " + std::to_string(pi + 1) + "/" + std::to_string(r.prompts.size()));
        const GreedyRun& a = r.models[0].runs[pi];
        for (size_t i = 0; i < n_models; ++i) {
            ModelReport& m = r.models[i];
            if (m.outputs[pi] == r.models[0].outputs[pi]) ++m.identical_outputs;
            if (!m.same_vocab) continue;
            const std::vector<int32_t> tf =
                teacher_forced_argmax(*models[i], p.prompt_tokens[i][pi], a.tokens, opts.n_ubatch);
            const TokenAgreement t = token_agreement(a.tokens, tf);
            if (!m.teacher_forced) m.teacher_forced = TokenAgreement{};
            m.teacher_forced->equal += t.equal;
            m.teacher_forced->total += t.total;
            m.divergence.push_back(first_divergence(a.tokens, m.runs[pi].tokens));
        }
    }

    // 4. Perplexity and KL divergence over the text.
    if (opts.text_file) {
        std::vector<TextModel> tms(n_models);
        for (size_t i = 0; i < n_models; ++i) {
            tms[i].model = models[i];
            tms[i].tokens = p.text_tokens[i];
            tms[i].bos = p.files[i].vocab.bos() >= 0 ? p.files[i].vocab.bos() : p.text_tokens[i][0];
            tms[i].kld_with_reference =
                r.models[i].same_vocab && p.text_tokens[i] == p.text_tokens[0];
        }
        const TextEvalResult te =
            evaluate_text(tms, opts.ppl_ctx, opts.n_ubatch, [&](uint32_t done, uint32_t total) {
                say("perplexity/KLD chunk " + std::to_string(done) + "/" + std::to_string(total));
            });
        for (size_t i = 0; i < n_models; ++i) {
            r.models[i].ppl = te.ppl[i];
            r.models[i].kld = te.kld[i];
        }
    }

    // 5. Test set.
    for (size_t k = 0; k < r.test_items.size(); ++k) {
        say("test item " + std::to_string(k + 1) + "/" + std::to_string(r.test_items.size()));
        for (size_t i = 0; i < n_models; ++i) {
            const tokenizer::Vocab& v = p.files[i].vocab;
            const GreedyRun g =
                greedy_generate(*models[i], p.item_tokens[i][k], r.test_items[k].max_tokens,
                                opts.n_ubatch, [&](int32_t id) { return v.is_eog(id); });
            const std::string out = pieces(v, g.tokens, true);
            const bool ok = answer_matches(out, r.test_items[k]);
            r.models[i].test_runs.push_back(g);
            r.models[i].test_outputs.push_back(out);
            r.models[i].test_correct.push_back(ok);
            r.models[i].test_correct_count += ok ? 1 : 0;
        }
        for (size_t i = 1; i < n_models; ++i) {
            if (r.models[i].test_correct[k] != r.models[0].test_correct[k]) {
                r.differing_items.push_back(k);
                break;
            }
        }
    }
}

// "B (stories260K-q8_0.gguf)" for error messages.
std::string who(const ModelReport& m) {
    return m.label + " (" + m.path + ")";
}

}  // namespace

CompareReport run_compare(const CompareOptions& opts, const ModelLoader& loader,
                          const CompareProgress& progress) {
    CompareReport r;
    const Plan p = plan(opts, r);
    // Load every model with a context large enough for all of its work.
    const size_t n_models = p.files.size();
    std::vector<std::unique_ptr<model::Model>> owned(n_models);  // freed on return
    std::vector<model::Model*> models(n_models);
    for (size_t i = 0; i < n_models; ++i) {
        model::ContextParams cp;
        cp.n_ctx = p.need[i];
        cp.n_seq_max = 1;
        cp.kv_type = opts.kv_type;
        if (progress) progress("loading " + r.models[i].label + ": " + p.files[i].path);
        const Clock::time_point t0 = Clock::now();
        owned[i] = loader(p.files[i].path, cp);
        r.models[i].load_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        if (!owned[i])
            throw std::runtime_error(who(r.models[i]) + ": the loader returned no model");
        models[i] = owned[i].get();
    }
    measure(opts, p, models, r, progress);
    return r;
}

CompareReport run_compare(const CompareOptions& opts, std::span<const LoadedModel> loaded,
                          const CompareProgress& progress) {
    if (loaded.size() != opts.models.size()) {
        throw std::invalid_argument("run_compare: " + std::to_string(loaded.size()) +
                                    " loaded models for " + std::to_string(opts.models.size()) +
                                    " model paths");
    }
    CompareReport r;
    const Plan p = plan(opts, r);
    std::vector<model::Model*> models(loaded.size());
    for (size_t i = 0; i < loaded.size(); ++i) {
        const ModelReport& m = r.models[i];
        model::Model* const lm = loaded[i].model;
        if (!lm) throw std::invalid_argument("run_compare: no loaded model for " + who(m));
        const model::HParams& a = lm->hparams();
        const model::HParams& f = p.files[i].hp;
        if (a.n_vocab != f.n_vocab || a.n_layer != f.n_layer || a.n_embd != f.n_embd ||
            a.n_head_kv != f.n_head_kv || a.head_dim != f.head_dim) {
            throw std::invalid_argument(
                "run_compare: the loaded model given for " + who(m) +
                " is not that file (n_vocab/n_layer/n_embd/n_head_kv/head_dim " +
                std::to_string(a.n_vocab) + "/" + std::to_string(a.n_layer) + "/" +
                std::to_string(a.n_embd) + "/" + std::to_string(a.n_head_kv) + "/" +
                std::to_string(a.head_dim) + ", the file has " + std::to_string(f.n_vocab) + "/" +
                std::to_string(f.n_layer) + "/" + std::to_string(f.n_embd) + "/" +
                std::to_string(f.n_head_kv) + "/" + std::to_string(f.head_dim) + ")");
        }
        if (lm->context().kv_type != opts.kv_type) {
            throw std::invalid_argument("run_compare: " + who(m) + " was loaded with a " +
                                        model::kv_type_name(lm->context().kv_type) +
                                        " KV cache but the comparison asks for " + r.kv_type);
        }
        lm->seq_rm(0);  // what an earlier run left in sequence 0 is not ours to keep
        // A sequence holds at most n_ctx tokens, and only in blocks free now.
        if (std::min(lm->n_free_cells(), lm->context().n_ctx) < p.need[i]) {
            throw std::invalid_argument(
                "run_compare: " + who(m) + " needs " + std::to_string(p.need[i]) +
                " free KV cells for the longest prompt/item/window but its context has " +
                std::to_string(lm->n_free_cells()) + " free of n_ctx " +
                std::to_string(lm->context().n_ctx) + "; load it with a larger context");
        }
        r.models[i].load_ms = loaded[i].load_ms;
        models[i] = lm;
    }
    measure(opts, p, models, r, progress);
    return r;
}

namespace {

// `v` with `prec` decimals.
std::string fmt(int prec, double v) {
    if (std::isnan(v)) return "NaN";  // non-finite logits: said plainly, never a number
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", prec, v);
    return buf;
}

std::string bytes_str(uint64_t b) {
    if (b >= (1ull << 30)) return fmt(2, static_cast<double>(b) / (1ull << 30)) + " GiB";
    if (b >= (1ull << 20)) return fmt(2, static_cast<double>(b) / (1ull << 20)) + " MiB";
    if (b >= 1024) return fmt(1, static_cast<double>(b) / 1024) + " KiB";
    return std::to_string(b) + " B";
}

// "290.1 (281.0-295.3)": median (min-max).
std::string speed_text(int prec, const SpeedFigure& f) {
    return fmt(prec, f.median) + " (" + fmt(prec, f.min) + "-" + fmt(prec, f.max) + ")";
}

std::string pct(uint64_t a, uint64_t n) {
    if (!n) return "-";
    return fmt(2, 100.0 * static_cast<double>(a) / static_cast<double>(n)) + "% (" +
           std::to_string(a) + "/" + std::to_string(n) + ")";
}

}  // namespace

std::string format_table(const CompareReport& r) {
    std::ostringstream o;
    o << "Models (A = reference):\n";
    for (const ModelReport& m : r.models) {
        o << "  " << m.label << "  " << m.path << "  " << m.quantization << "  [" << m.tensor_types
          << "]\n";
    }
    for (const std::string& n : r.notes) o << "note: " << n << "\n";
    std::vector<std::pair<std::string, std::vector<std::string>>> rows;
    auto row = [&](std::string name, auto&& cell) {
        std::vector<std::string> cells;
        for (const ModelReport& m : r.models) cells.push_back(cell(m));
        rows.emplace_back(std::move(name), std::move(cells));
    };
    row("file size", [](const ModelReport& m) { return bytes_str(m.file_bytes); });
    row("weights (as stored)", [](const ModelReport& m) { return bytes_str(m.weight_bytes); });
    row("KV cache (" + r.kv_type + ")", [](const ModelReport& m) {
        // The context it holds, named: "@53" alone read as a mystery.
        return bytes_str(m.kv_bytes) + " for " + std::to_string(m.n_ctx) + " tokens";
    });
    row("device memory (engine)", [](const ModelReport& m) {
        return m.device_bytes ? bytes_str(*m.device_bytes) : std::string("n/a (cpu)");
    });
    row("backend", [](const ModelReport& m) { return m.backend; });
    row("load time (ms)", [](const ModelReport& m) { return fmt(1, m.load_ms); });
    row("prefill tokens/s", [](const ModelReport& m) { return speed_text(1, m.prefill_tps); });
    row("decode tokens/s", [](const ModelReport& m) { return speed_text(1, m.decode_tps); });
    row("TTFT (ms)", [](const ModelReport& m) { return speed_text(2, m.ttft_ms); });
    row("e2e (ms)", [](const ModelReport& m) { return speed_text(2, m.e2e_ms); });
    row("teacher-forced agreement", [](const ModelReport& m) {
        return m.teacher_forced ? pct(m.teacher_forced->equal, m.teacher_forced->total)
                                : std::string("n/a (vocab)");
    });
    row("greedy = A (prompts)", [&](const ModelReport& m) {
        if (!m.same_vocab)
            return std::to_string(m.identical_outputs) + "/" + std::to_string(r.prompts.size()) +
                   " same text";
        size_t same = 0;
        for (const auto& d : m.divergence) same += d ? 0 : 1;
        return std::to_string(same) + "/" + std::to_string(r.prompts.size());
    });
    row("first split (step per prompt)", [](const ModelReport& m) {
        if (!m.same_vocab) return std::string("n/a (vocab)");
        std::string s;
        for (const auto& d : m.divergence) {
            if (!s.empty()) s += ",";
            s += d ? std::to_string(*d) : "-";
        }
        return s;
    });
    if (r.text_file) {
        const ModelReport& a = r.models[0];
        std::string ppl_name = "PPL";
        if (a.ppl) {
            ppl_name += " (llama.cpp chunks, n_ctx " + std::to_string(a.ppl->n_ctx) + ", " +
                        std::to_string(a.ppl->n_chunks) + " chunks, " +
                        std::to_string(a.ppl->n_scored) + " tokens)";
        }
        rows.emplace_back(ppl_name, std::vector<std::string>{});
        for (const ModelReport& m : r.models) {
            rows.back().second.push_back(
                m.ppl ? fmt(4, m.ppl->ppl) + " ± " + fmt(4, m.ppl->ppl_error) : "-");
        }
        row("PPL / PPL(A)", [&](const ModelReport& m) {
            return m.ppl && a.ppl ? fmt(6, m.ppl->ppl / a.ppl->ppl) : std::string("-");
        });
        row("KLD vs A mean", [](const ModelReport& m) {
            return m.kld ? fmt(6, m.kld->mean) + " ± " + fmt(6, m.kld->mean_error)
                         : std::string("n/a (vocab)");
        });
        row("KLD vs A median / p99", [](const ModelReport& m) {
            return m.kld ? fmt(6, m.kld->median) + " / " + fmt(6, m.kld->p99) : std::string("n/a");
        });
        row("KLD vs A max",
            [](const ModelReport& m) { return m.kld ? fmt(6, m.kld->max) : std::string("n/a"); });
        row("top-1 = A", [](const ModelReport& m) {
            return m.kld ? pct(m.kld->same_top, m.kld->n) : std::string("n/a");
        });
    }
    if (r.testset_file) {
        row("test-set accuracy",
            [&](const ModelReport& m) { return pct(m.test_correct_count, r.test_items.size()); });
    }
    size_t w0 = 6;
    std::vector<size_t> w(r.models.size(), 1);
    for (const auto& [name, cells] : rows) {
        w0 = std::max(w0, columns(name));
        for (size_t i = 0; i < cells.size(); ++i) w[i] = std::max(w[i], columns(cells[i]));
    }
    auto line = [&](const std::string& name, const std::vector<std::string>& cells) {
        o << name << std::string(w0 - columns(name) + 2, ' ');
        for (size_t i = 0; i < cells.size(); ++i) {
            if (i + 1 == cells.size()) {
                o << cells[i];
            } else {
                o << cells[i] << std::string(w[i] - columns(cells[i]) + 3, ' ');
            }
        }
        o << "\n";
    };
    o << "\n";
    std::vector<std::string> head;
    for (const ModelReport& m : r.models) head.push_back(m.label);
    line("metric", head);
    for (const auto& [name, cells] : rows) line(name, cells);
    o << "\nPrompts: " << r.prompts.size() << ", greedy, " << r.n_predict
      << " tokens each (no stop token), KV cache " << r.kv_type << ".\n";
    o << "Speed: " << speed_method(r.repetitions) << ".\n";
    if (r.testset_file) {
        o << "Test set " << *r.testset_file << ": " << r.test_items.size() << " items, "
          << r.differing_items.size() << " where the models disagree";
        o << (r.differing_items.empty() ? ".\n" : ":\n");
        for (size_t k : r.differing_items) {
            const TestItem& it = r.test_items[k];
            o << "  [" << it.id << "] expected " << (it.mode == MatchMode::Exact ? "exactly " : "")
              << "'" << one_line(it.answer) << "'\n";
            for (const ModelReport& m : r.models) {
                o << "    " << m.label << " " << (m.test_correct[k] ? "ok  " : "FAIL") << " '"
                  << one_line(trim(m.test_outputs[k])) << "'\n";
            }
        }
    }
    return o.str();
}

nlohmann::json to_json(const CompareReport& r) {
    using nlohmann::json;
    auto figure = [](const SpeedFigure& f) {
        return json{{"median", f.median}, {"min", f.min}, {"max", f.max}, {"samples", f.samples}};
    };
    auto run_json = [](const GreedyRun& g) {
        return json{{"prompt_tokens", g.n_prompt},
                    {"prefill_ms", g.prefill_ms},
                    {"ttft_ms", g.ttft_ms},
                    {"e2e_ms", g.e2e_ms}};
    };
    json j;
    j["prompts"] = r.prompts;
    j["n_predict"] = r.n_predict;
    j["speed_method"] = speed_method(r.repetitions);
    j["warmup_passes"] = kWarmupPasses;
    j["repetitions"] = r.repetitions;
    j["kv_type"] = r.kv_type;
    j["notes"] = r.notes;
    if (r.text_file) {
        j["text_file"] = *r.text_file;
        j["perplexity_method"] =
            "llama.cpp llama-perplexity: chunks of n_ctx tokens, first token replaced by BOS, "
            "second half scored";
        j["ppl_ctx"] = r.ppl_ctx;
    }
    json models = json::array();
    for (const ModelReport& m : r.models) {
        json x;
        x["label"] = m.label;
        x["path"] = m.path;
        x["file_bytes"] = m.file_bytes;
        x["weight_bytes"] = m.weight_bytes;
        x["kv_bytes"] = m.kv_bytes;
        x["n_ctx"] = m.n_ctx;
        x["tensor_types"] = m.tensor_types;
        x["quantization"] = m.quantization;
        x["backend"] = m.backend;
        x["device_bytes"] = m.device_bytes ? json(*m.device_bytes) : json(nullptr);
        x["load_ms"] = m.load_ms;
        x["n_vocab"] = m.n_vocab;
        x["same_vocab_as_reference"] = m.same_vocab;
        x["prefill_tokens_per_s"] = figure(m.prefill_tps);
        x["decode_tokens_per_s"] = figure(m.decode_tps);
        x["ttft_ms"] = figure(m.ttft_ms);
        x["e2e_ms"] = figure(m.e2e_ms);
        json warmup = json::array();
        for (const GreedyRun& g : m.warmup_runs) warmup.push_back(run_json(g));
        x["warmup_runs"] = warmup;
        json timed = json::array();
        for (const std::vector<GreedyRun>& pass : m.timed_runs) {
            json t = json::array();
            for (const GreedyRun& g : pass) t.push_back(run_json(g));
            timed.push_back(t);
        }
        x["timed_runs"] = timed;
        json runs = json::array();
        for (size_t p = 0; p < m.runs.size(); ++p) {
            const GreedyRun& g = m.runs[p];
            json run{{"prompt_tokens", g.n_prompt}, {"tokens", g.tokens},   {"text", m.outputs[p]},
                     {"prefill_ms", g.prefill_ms},  {"ttft_ms", g.ttft_ms}, {"e2e_ms", g.e2e_ms}};
            if (p < m.divergence.size()) {
                run["first_divergence"] = m.divergence[p] ? json(*m.divergence[p]) : json(nullptr);
            }
            runs.push_back(run);
        }
        x["runs"] = runs;
        x["identical_outputs"] = m.identical_outputs;
        if (m.teacher_forced) {
            x["teacher_forced"] = {{"equal", m.teacher_forced->equal},
                                   {"total", m.teacher_forced->total},
                                   {"share", m.teacher_forced->share()}};
        }
        if (m.ppl) {
            x["perplexity"] = {{"ppl", m.ppl->ppl},
                               {"ppl_error", m.ppl->ppl_error},
                               {"n_ctx", m.ppl->n_ctx},
                               {"n_chunks", m.ppl->n_chunks},
                               {"n_scored", m.ppl->n_scored},
                               {"n_text_tokens", m.ppl->n_text_tokens},
                               {"running_ppl", m.ppl->running_ppl}};
        }
        if (m.kld) {
            x["kld"] = {{"n", m.kld->n},
                        {"mean", m.kld->mean},
                        {"mean_error", m.kld->mean_error},
                        {"median", m.kld->median},
                        {"p99", m.kld->p99},
                        {"max", m.kld->max},
                        {"min", m.kld->min},
                        {"same_top", m.kld->same_top},
                        {"same_top_share", m.kld->same_top_share()}};
        }
        if (r.testset_file) {
            x["test_correct"] = m.test_correct_count;
            x["test_outputs"] = m.test_outputs;
            x["test_results"] = m.test_correct;
        }
        models.push_back(x);
    }
    j["models"] = models;
    if (r.testset_file) {
        j["testset_file"] = *r.testset_file;
        json items = json::array();
        for (const TestItem& it : r.test_items) {
            items.push_back({{"id", it.id},
                             {"prompt", it.prompt},
                             {"answer", it.answer},
                             {"match", it.mode == MatchMode::Exact ? "exact" : "contains"}});
        }
        j["test_items"] = items;
        j["differing_items"] = r.differing_items;
    }
    return j;
}

}  // namespace wb::compare
