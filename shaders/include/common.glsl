// Shared by every compute shader: the workgroup size is specialization
// constant 0 (chosen by the host from the device's limits), NEG_INF for
// masks, and a flat invocation index over 2-D dispatches (the host splits
// long 1-D ranges over x and y to stay under maxComputeWorkGroupCount).

layout(constant_id = 0) const uint BLOCK_SIZE = 64;
layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;

#define NEG_INF uintBitsToFloat(0xFF800000u)

uint flat_id() { return gl_WorkGroupID.y * gl_NumWorkGroups.x * BLOCK_SIZE + gl_GlobalInvocationID.x; }
