#include "model/model_desc.h"

#include <unordered_set>

#include "gguf/gguf.h"
#include "model/arch/arch.h"

namespace wb::model {

ModelDesc ModelDesc::from_gguf(const gguf::File& f) {
    ModelDesc d;
    d.hp = HParams::from_gguf(f);
    d.arch = find_arch(d.hp.arch);  // from_gguf refused any other
    // block_count comes from the file: a hostile 4294967295 would make the
    // table billions of entries long. Every block has tensors, so more
    // blocks than tensors is refused by count before building it; a file
    // merely short of some tensors is told by the first one it lacks.
    const uint64_t needed =
        2 + (d.hp.tied_embeddings ? 0 : 1) + uint64_t{d.arch->min_layer_tensors} * d.hp.n_layer;
    if (d.hp.n_layer > f.tensors().size()) {
        // A file without weights at all (a vocabulary-only GGUF) is better
        // told by the tensor it lacks first than by a count.
        (void)f.tensor("token_embd.weight");  // throws "missing tensor" naming it
        throw gguf::Error(f.path(), std::nullopt, "metadata key '" + d.hp.arch + ".block_count'",
                          std::to_string(d.hp.n_layer) + " blocks need " + std::to_string(needed) +
                              " tensors, the file has " + std::to_string(f.tensors().size()));
    }
    TensorTable table(f, d);
    d.arch->describe(table, d);
    // A tensor the architecture does not have would be ignored by the
    // forward pass, silently giving other results than the model's
    // authors' (a bias, a norm, long-context RoPE factors): refuse it.
    std::unordered_set<std::string> known;
    for (const TensorRef& t : d.tensors) known.insert(t.name);
    for (const gguf::TensorInfo& t : f.tensors()) {
        if (!known.count(t.name)) {
            const std::string field = "tensor '" + t.name + "'";
            throw UnsupportedModel(f.path() + ": offset " + std::to_string(t.info_offset) + ": " +
                                       field + ": not part of architecture " + d.hp.arch +
                                       " as this engine implements it (an option it does not run)",
                                   "architecture option", field);
        }
    }
    return d;
}

}  // namespace wb::model
