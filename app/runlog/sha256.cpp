#include "runlog/sha256.h"

#include <openssl/evp.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

namespace wb::runlog {

namespace {

struct MdCtxFree {
    void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using MdCtx = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;

struct FileClose {
    void operator()(std::FILE* f) const { std::fclose(f); }
};

MdCtx new_sha256() {
    MdCtx ctx(EVP_MD_CTX_new());
    if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1)
        throw std::runtime_error("OpenSSL: cannot start a SHA-256 digest");
    return ctx;
}

void update(EVP_MD_CTX* ctx, const void* p, size_t n) {
    if (EVP_DigestUpdate(ctx, p, n) != 1)
        throw std::runtime_error("OpenSSL: SHA-256 update failed");
}

std::string finish_hex(EVP_MD_CTX* ctx) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_DigestFinal_ex(ctx, md, &len) != 1 || len != 32)
        throw std::runtime_error("OpenSSL: SHA-256 final failed");
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out(64, '0');
    for (unsigned i = 0; i < 32; ++i) {
        out[2 * i] = kHex[md[i] >> 4];
        out[2 * i + 1] = kHex[md[i] & 15];
    }
    return out;
}

}  // namespace

std::string sha256_hex(std::string_view bytes) {
    MdCtx ctx = new_sha256();
    update(ctx.get(), bytes.data(), bytes.size());
    return finish_hex(ctx.get());
}

std::string sha256_file_hex(const std::string& path) {
    std::unique_ptr<std::FILE, FileClose> f(std::fopen(path.c_str(), "rb"));
    if (!f) throw std::runtime_error(path + ": cannot read: " + std::strerror(errno));
    MdCtx ctx = new_sha256();
    std::vector<unsigned char> buf(1 << 20);  // [1 MiB] read chunk
    for (;;) {
        const size_t n = std::fread(buf.data(), 1, buf.size(), f.get());
        if (n > 0) update(ctx.get(), buf.data(), n);
        if (n < buf.size()) {
            if (std::ferror(f.get()))
                throw std::runtime_error(path + ": cannot read: " + std::strerror(errno));
            break;
        }
    }
    return finish_hex(ctx.get());
}

}  // namespace wb::runlog
