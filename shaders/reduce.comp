#version 460
// reduce.comp: the strided two-dispatch reduction (and count-if, with KERNEL_COUNT).
//
// Pass 0 runs a fixed number of workgroups chosen for the device, whatever n is: each
// invocation folds a strided range of the input into registers (Brent: many elements per
// invocation, so the tree below is paid once per workgroup, not once per 512 elements),
// loading 16-byte vectors into two independent accumulators so that two loads are in flight
// per iteration. Then a workgroup tree with sequential addressing and neutral padding writes
// one partial per workgroup. Pass 1 is the same kernel with one workgroup over the partials;
// it writes the result into an 8-byte slot that can stay on the GPU or be read back.
//
// Element order of the fold depends only on n and the workgroup count, so the same input
// gives the same bits on every run and in every batch.

#include "common.glsl"

layout(local_size_x = WG_SIZE) in;

#ifdef KERNEL_COUNT
// count-if: elements map to 0/1 and are summed as uint (n < 2^31 fits).
#define ACC uint
#define ACC_NEUTRAL 0u
#define acc_op(a, b) ((a) + (b))
#else
#define ACC T
#define ACC_NEUTRAL NEUTRAL
#define acc_op(a, b) op(a, b)
#endif

layout(buffer_reference, scalar, buffer_reference_align = 4) buffer Accs { ACC v[]; };

layout(push_constant, scalar) uniform Params {
	uvec2 src;      // pass 0: element 0 of the input; pass 1: the partials
	uvec2 src_vec;  // pass 0: the first 16-byte aligned element (element `head`)
	uvec2 dst;      // pass 0: partials, one per workgroup; pass 1: the result slot
	uvec2 cmp_bits; // count: the comparison value's bits
	uint n;         // pass 0: elements; pass 1: partials
	uint head;      // pass 0: elements before src_vec
	uint nvec;      // pass 0: whole vectors from src_vec
	uint pass_index;
	uint cmp;       // count: vkr_cmp
} pc;

#ifdef KERNEL_COUNT
bool predicate(T x, T v)
{
	// IEEE semantics as numpy: every comparison with NaN is false except "ne".
	if (is_nan(x) || is_nan(v))
		return pc.cmp == 1u;
	switch (pc.cmp) {
	case 0u: return x == v;
	case 1u: return x != v;
	case 2u: return x < v;
	case 3u: return x <= v;
	case 4u: return x > v;
	default: return x >= v;
	}
}
ACC map_elem(T x) { return predicate(x, value_from_bits(pc.cmp_bits)) ? 1u : 0u; }
#else
ACC map_elem(T x) { return x; }
#endif

ACC fold_vec(VT x)
{
#if VEC == 4
	return acc_op(acc_op(map_elem(x.x), map_elem(x.y)), acc_op(map_elem(x.z), map_elem(x.w)));
#else
	return acc_op(map_elem(x.x), map_elem(x.y));
#endif
}

shared ACC tree[WG_SIZE];

void main()
{
	uint lid = gl_LocalInvocationID.x;
	uint gid = gl_GlobalInvocationID.x;
	uint stride = gl_NumWorkGroups.x * WG_SIZE;
	ACC a0 = ACC_NEUTRAL;
	ACC a1 = ACC_NEUTRAL;

	if (pc.pass_index == 0u) {
		Vecs vecs = Vecs(pc.src_vec);
		uint i = gid;
		for (; i + stride < pc.nvec; i += 2u * stride) {
			VT x = vecs.v[i];
			VT y = vecs.v[i + stride];
			a0 = acc_op(a0, fold_vec(x));
			a1 = acc_op(a1, fold_vec(y));
		}
		if (i < pc.nvec)
			a0 = acc_op(a0, fold_vec(vecs.v[i]));
		// Scalar elements before the aligned part and after the last whole vector.
		Elems elems = Elems(pc.src);
		uint tail_start = pc.head + pc.nvec * VEC;
		if (gid < pc.head)
			a1 = acc_op(a1, map_elem(elems.v[gid]));
		if (gid < pc.n - tail_start)
			a0 = acc_op(a0, map_elem(elems.v[tail_start + gid]));
	} else {
		Accs partials = Accs(pc.src);
		for (uint i = gid; i < pc.n; i += stride)
			a0 = acc_op(a0, partials.v[i]);
	}

	// Workgroup tree, sequential addressing: the active half is contiguous, and every
	// invocation reaches every barrier (invocations without data hold the neutral).
	tree[lid] = acc_op(a0, a1);
	for (uint k = WG_SIZE / 2u; k > 0u; k >>= 1u) {
		barrier();
		if (lid < k)
			tree[lid] = acc_op(tree[lid], tree[lid + k]);
	}
	if (lid == 0u)
		Accs(pc.dst).v[gl_WorkGroupID.x] = tree[0];
}
