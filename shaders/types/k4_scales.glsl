// Q4_K / Q5_K: 6-bit scale and min of 32-value sub-block j from the 12
// packed bytes (ggml get_scale_min_k4): j < 4 in the low 6 bits of bytes j
// (scale) and j + 4 (min); j >= 4 in a nibble of byte j + 4 plus the top 2
// bits of bytes j - 4 (scale) and j (min). Returns (scale, min).
vec2 k4_scale_min(uvec3 sc, uint j) {
    uint s, m;
    if (j < 4u) {
        s = byte_of(sc[j >> 2], j & 3u) & 63u;
        m = byte_of(sc[(j + 4u) >> 2], (j + 4u) & 3u) & 63u;
    } else {
        const uint b = byte_of(sc[(j + 4u) >> 2], (j + 4u) & 3u);
        s = (b & 0xFu) | ((byte_of(sc[(j - 4u) >> 2], (j - 4u) & 3u) >> 6) << 4);
        m = (b >> 4) | ((byte_of(sc[j >> 2], j & 3u) >> 6) << 4);
    }
    return vec2(float(s), float(m));
}
