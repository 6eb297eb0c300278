// Shared by every compute shader: the workgroup size is specialization
// constant 0 (chosen by the host from the device's limits), LOW (a finite
// -inf for the attention softmax), and a flat invocation index over 2-D
// dispatches (the host splits long 1-D ranges over x and y to stay under
// maxComputeWorkGroupCount).

layout(constant_id = 0) const uint BLOCK_SIZE = 64;
layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;

// Finite stand-in for -inf in the attention shaders and their merge (no
// inf arithmetic, so a driver's fast-math cannot change the result): the
// running max before any score, the score of a lane past the end of a span,
// and the max an empty split-K chunk stores.
const float LOW = -3.0e38;

// NaN or +inf, tested on the bits. Drivers may assume floats are finite
// (llvmpipe's exp(NaN) is finite, max() drops a NaN operand) and fold an
// isnan() away; integer compares they must keep. A softmax over such a
// score is NaN in the CPU reference (exp(inf - inf)); the attention
// shaders use this so their output is NaN too, instead of the score
// silently getting weight 0. (-inf is a masked score: weight 0 in both.)
bool poisons_softmax(float x) {
    const uint b = floatBitsToUint(x);
    return (b & 0x7fffffffu) > 0x7f800000u || b == 0x7f800000u;
}
bool isnan_bits(float x) { return (floatBitsToUint(x) & 0x7fffffffu) > 0x7f800000u; }
float nan_value() { return uintBitsToFloat(0x7fc00000u); }

uint flat_id() { return gl_WorkGroupID.y * gl_NumWorkGroups.x * BLOCK_SIZE + gl_GlobalInvocationID.x; }

// tanh without inf / inf for large |z| (some drivers evaluate tanh as
// (e^2z - 1) / (e^2z + 1)): 1 - 2 / (e^2z + 1), exact at both limits; the
// absolute error stays at float epsilon.
float tanh_stable(float z) { return 1.0 - 2.0 / (exp(2.0 * z) + 1.0); }
