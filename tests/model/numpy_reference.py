#!/usr/bin/env python3
"""A float64 forward pass of Qwen2 and Gemma 2, written in numpy from the
architectures' published descriptions, as a check of the engine's logits
independent of both the engine and llama.cpp.

Sources: Qwen2 technical report (Yang et al. 2024) and Hugging Face
transformers' modeling_qwen2.py: RMSNorm, Q/K/V projections with biases,
rotary embeddings in the rotate-half form, grouped-query causal attention
scaled by 1/sqrt(head_dim), SwiGLU MLP, tied output. Gemma 2 report (Gemma
Team 2024) and modeling_gemma2.py: embeddings times sqrt(hidden size),
RMSNorm before and after attention and MLP, attention scores scaled by
query_pre_attn_scalar^-1/2 and soft-capped (cap * tanh(s / cap)), a sliding
window on even layers (a query at position i sees keys j with i - j < window),
GELU (tanh approximation) gated MLP, final logits soft-capped. GGUF stores
Gemma's norm weights with the +1 of its RMSNorm already added, and matrices
as [out, in] rows; the GGUF file is read by the small reader below.

For each model (tests/data/golden2/<model>) the `multiline` prompt (112
tokens: past gemma2's 32-token window) runs through this reference and
through the engine (tests' dump_logits, CPU reference and Vulkan), logits of
every position compared: max |diff| <= 1e-4 * max |logit|. The reference is
also compared with llama.cpp's first-step logits of `plain` (1e-3: llama.cpp
evaluates GELU through a binary16 table). Exit status 0 only if all agree.

usage: numpy_reference.py DUMP_LOGITS DATA_DIR
"""

import json
import struct
import subprocess
import sys

import numpy as np

GGUF_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q",
                11: "<q", 12: "<d"}


class Gguf:
    """Metadata and F32/F16 tensors of a GGUF v2/v3 file."""

    def __init__(self, path):
        self.buf = open(path, "rb").read()
        self.pos = 0
        if self.buf[:4] != b"GGUF":
            raise ValueError(f"{path}: not a GGUF file")
        self.pos = 4
        version = self.read("<I")
        if version < 2:
            raise ValueError(f"{path}: GGUF version {version}")
        n_tensors, n_kv = self.read("<Q"), self.read("<Q")
        self.kv = {}
        for _ in range(n_kv):
            key = self.string()
            self.kv[key] = self.value(self.read("<I"))
        infos = []
        for _ in range(n_tensors):
            name = self.string()
            dims = [self.read("<Q") for _ in range(self.read("<I"))]
            infos.append((name, dims, self.read("<I"), self.read("<Q")))
        align = self.kv.get("general.alignment", 32)
        data = (self.pos + align - 1) // align * align
        self.tensors = {}
        for name, dims, typ, off in infos:
            n = int(np.prod(dims))
            if typ == 0:
                a = np.frombuffer(self.buf, np.float32, n, data + off)
            elif typ == 1:
                a = np.frombuffer(self.buf, np.float16, n, data + off)
            else:
                raise ValueError(f"{path}: tensor {name} has type {typ} (only F32/F16 here)")
            # ggml order: dims[0] is the row length; numpy wants rows last.
            self.tensors[name] = a.astype(np.float64).reshape(list(reversed(dims)))

    def read(self, fmt):
        v = struct.unpack_from(fmt, self.buf, self.pos)[0]
        self.pos += struct.calcsize(fmt)
        return v

    def string(self):
        n = self.read("<Q")
        s = self.buf[self.pos:self.pos + n].decode("utf-8", "replace")
        self.pos += n
        return s

    def value(self, typ):
        if typ in GGUF_SCALARS:
            return self.read(GGUF_SCALARS[typ])
        if typ == 8:
            return self.string()
        if typ == 9:
            et, n = self.read("<I"), self.read("<Q")
            return [self.value(et) for _ in range(n)]
        raise ValueError(f"GGUF value type {typ}")


def rms_norm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def rope_neox(x, pos, base):
    """Rotate-half RoPE over the whole head: x [n, heads, d]."""
    d = x.shape[-1]
    inv = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)  # [d/2]
    ang = pos[:, None] * inv[None, :]                             # [n, d/2]
    cos = np.concatenate([np.cos(ang)] * 2, axis=-1)[:, None, :]
    sin = np.concatenate([np.sin(ang)] * 2, axis=-1)[:, None, :]
    rot = np.concatenate([-x[..., d // 2:], x[..., :d // 2]], axis=-1)
    return x * cos + rot * sin


def attention(q, k, v, scale, softcap=0.0, window=0):
    """q [n, H, d]; k, v [n, Hkv, d]; causal (and windowed) softmax per head."""
    n, n_head, _ = q.shape
    group = n_head // k.shape[1]
    k = np.repeat(k, group, axis=1)
    v = np.repeat(v, group, axis=1)
    s = np.einsum("ihd,jhd->hij", q, k) * scale                   # [H, n, n]
    if softcap > 0:
        s = softcap * np.tanh(s / softcap)
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    allowed = j <= i
    if window > 0:
        allowed &= (i - j) < window
    s = np.where(allowed[None], s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    return np.einsum("hij,jhd->ihd", p, v).reshape(n, -1)


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))


def qwen2(g, ids):
    a = "qwen2."
    T = g.tensors
    n_head, n_kv = g.kv[a + "attention.head_count"], g.kv[a + "attention.head_count_kv"]
    eps, base = g.kv[a + "attention.layer_norm_rms_epsilon"], g.kv[a + "rope.freq_base"]
    emb = T["token_embd.weight"]
    d = emb.shape[1] // n_head
    pos = np.arange(len(ids), dtype=np.float64)
    x = emb[ids]
    for l in range(g.kv[a + "block_count"]):
        p = f"blk.{l}."
        h = rms_norm(x, T[p + "attn_norm.weight"], eps)
        q = (h @ T[p + "attn_q.weight"].T + T[p + "attn_q.bias"]).reshape(len(ids), n_head, d)
        k = (h @ T[p + "attn_k.weight"].T + T[p + "attn_k.bias"]).reshape(len(ids), n_kv, d)
        v = (h @ T[p + "attn_v.weight"].T + T[p + "attn_v.bias"]).reshape(len(ids), n_kv, d)
        o = attention(rope_neox(q, pos, base), rope_neox(k, pos, base), v, d ** -0.5)
        x = x + o @ T[p + "attn_output.weight"].T
        h = rms_norm(x, T[p + "ffn_norm.weight"], eps)
        gate, up = h @ T[p + "ffn_gate.weight"].T, h @ T[p + "ffn_up.weight"].T
        x = x + (gate / (1.0 + np.exp(-gate)) * up) @ T[p + "ffn_down.weight"].T
    out = T.get("output.weight", emb)
    return rms_norm(x, T["output_norm.weight"], eps) @ out.T


def gemma2(g, ids):
    a = "gemma2."
    T = g.tensors
    n_head, n_kv = g.kv[a + "attention.head_count"], g.kv[a + "attention.head_count_kv"]
    eps, base = g.kv[a + "attention.layer_norm_rms_epsilon"], g.kv[a + "rope.freq_base"]
    d = g.kv[a + "attention.key_length"]
    window = g.kv[a + "attention.sliding_window"]
    attn_cap, final_cap = g.kv[a + "attn_logit_softcapping"], g.kv[a + "final_logit_softcapping"]
    emb = T["token_embd.weight"]
    n_embd = emb.shape[1]
    pos = np.arange(len(ids), dtype=np.float64)
    # query_pre_attn_scalar is head_dim for the 2B/9B shapes (and this model).
    scale = d ** -0.5
    x = emb[ids] * np.sqrt(n_embd)
    for l in range(g.kv[a + "block_count"]):
        p = f"blk.{l}."
        h = rms_norm(x, T[p + "attn_norm.weight"], eps)
        q = (h @ T[p + "attn_q.weight"].T).reshape(len(ids), n_head, d)
        k = (h @ T[p + "attn_k.weight"].T).reshape(len(ids), n_kv, d)
        v = (h @ T[p + "attn_v.weight"].T).reshape(len(ids), n_kv, d)
        sliding = l % 2 == 0
        o = attention(rope_neox(q, pos, base), rope_neox(k, pos, base), v, scale, attn_cap,
                      window if sliding else 0)
        x = x + rms_norm(o @ T[p + "attn_output.weight"].T, T[p + "post_attention_norm.weight"], eps)
        h = rms_norm(x, T[p + "ffn_norm.weight"], eps)
        mlp = (gelu_tanh(h @ T[p + "ffn_gate.weight"].T) * (h @ T[p + "ffn_up.weight"].T)) \
            @ T[p + "ffn_down.weight"].T
        x = x + rms_norm(mlp, T[p + "post_ffw_norm.weight"], eps)
    logits = rms_norm(x, T["output_norm.weight"], eps) @ emb.T
    return final_cap * np.tanh(logits / final_cap)


def main():
    dump, data = sys.argv[1], sys.argv[2]
    failures, checks = 0, 0
    for model, forward in (("qwen2", qwen2), ("gemma2", gemma2)):
        path = f"{data}/golden2/{model}/{model}-f16.gguf"
        g = Gguf(path)
        golden = json.load(open(f"{data}/golden2/{model}/goldens/f16.dequantf32.kvf32.json"))
        prompts = {r["name"]: r for r in golden["results"]}
        # llama.cpp's first-step logits of `plain` (all n_vocab).
        plain = prompts["plain"]["prompt_ids"]
        ref = forward(g, np.array(plain))[-1]
        lc = np.fromfile(f"{data}/golden2/{model}/goldens/f16.dequantf32.kvf32.plain.logits.f32",
                         np.float32).astype(np.float64)
        err = np.abs(ref - lc).max() / np.abs(ref).max()
        ok = err <= 1e-3
        failures, checks = failures + (not ok), checks + 1
        print(f"{model}: numpy vs llama.cpp (plain, first step): {err:.2e} of max |logit| "
              f"{'ok' if ok else 'FAIL'}")
        # The engine, every position of `multiline`.
        ids = prompts["multiline"]["prompt_ids"]
        ref = forward(g, np.array(ids))
        for backend in ("cpu", "vulkan"):
            r = subprocess.run([dump, path, backend] + [str(i) for i in ids], capture_output=True)
            if r.returncode != 0:
                print(f"{model} {backend}: dump_logits failed: {r.stderr.decode()}")
                failures, checks = failures + 1, checks + 1
                continue
            got = np.frombuffer(r.stdout, np.float32).astype(np.float64).reshape(ref.shape)
            err = (np.abs(got - ref).max(axis=1) / np.abs(ref).max(axis=1)).max()
            ok = err <= 1e-4
            failures, checks = failures + (not ok), checks + 1
            print(f"{model} {backend}: engine vs numpy, {len(ids)} positions: {err:.2e} of max "
                  f"|logit| {'ok' if ok else 'FAIL'}")
    print(f"{checks - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
