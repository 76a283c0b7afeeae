import sys, re
src = open('/tmp/reduce.orig').read()
def sub(s, a, b):
    assert a in s, a[:60]
    return s.replace(a, b, 1)
SUBGROUP_TREE = '''#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_basic : require
uint sh32(uint x, uint m) { return subgroupShuffleXor(x, m); }
#if defined(KERNEL_COUNT)
ACC shx(ACC x, uint m) { return sh32(x, m); }
#elif EXACT_COMPARE && defined(DTYPE_F32)
ACC shx(ACC x, uint m) { return sh32(x, m); }
#elif EXACT_COMPARE
ACC shx(ACC x, uint m) { return uvec2(sh32(x.x, m), sh32(x.y, m)); }
#elif defined(DTYPE_F32)
ACC shx(ACC x, uint m) { return uintBitsToFloat(sh32(floatBitsToUint(x), m)); }
#elif defined(DTYPE_F64)
ACC shx(ACC x, uint m) { uvec2 b = unpackDouble2x32(x); return packDouble2x32(uvec2(sh32(b.x, m), sh32(b.y, m))); }
#elif defined(DTYPE_I32)
ACC shx(ACC x, uint m) { return int(sh32(uint(x), m)); }
#elif defined(DTYPE_U32)
ACC shx(ACC x, uint m) { return sh32(x, m); }
#elif defined(DTYPE_I64)
ACC shx(ACC x, uint m) { uvec2 b = unpackUint2x32(uint64_t(x)); return int64_t(packUint2x32(uvec2(sh32(b.x, m), sh32(b.y, m)))); }
#else
ACC shx(ACC x, uint m) { uvec2 b = unpackUint2x32(x); return packUint2x32(uvec2(sh32(b.x, m), sh32(b.y, m))); }
#endif
ACC workgroup_reduce(uint lid, ACC mine)
{
	for (uint m = 1u; m < gl_SubgroupSize; m <<= 1u)
		mine = acc_op(mine, shx(mine, m));
	barrier();
	if (gl_SubgroupInvocationID == 0u)
		tree[gl_SubgroupID] = mine;
	barrier();
	if (lid == 0u) {
		ACC r = tree[0];
		for (uint g = 1u; g < gl_NumSubgroups; g++)
			r = acc_op(r, tree[g]);
		tree[0] = r;
	}
	barrier();
	return tree[0];
}
ACC workgroup_reduce_old(uint lid, ACC mine)
'''
def d(s):
    return sub(s, 'ACC workgroup_reduce(uint lid, ACC mine)\n', SUBGROUP_TREE)
def v(s):
    s = sub(s, '#include "common.glsl"\n', '#pragma use_vulkan_memory_model\n#extension GL_KHR_memory_scope_semantics : require\n#include "common.glsl"\n')
    s = sub(s, 'coherent volatile buffer Arrivals', 'coherent buffer Arrivals')
    old = s[s.index('			SharedAccs(pc.partials).v[gl_WorkGroupID.x] = r;\n'):s.index('		// As pass 1 over the partials')]
    new = '''			SharedAccs(pc.partials).v[gl_WorkGroupID.x] = r;
			s_last = atomicAdd(Arrivals(pc.counter).v, 1u, gl_ScopeQueueFamily, gl_StorageSemanticsBuffer,
					   gl_SemanticsAcquireRelease | gl_SemanticsMakeAvailable | gl_SemanticsMakeVisible) ==
				 gl_NumWorkGroups.x - 1u;
		}
		controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup, gl_StorageSemanticsShared | gl_StorageSemanticsBuffer,
			       gl_SemanticsAcquireRelease | gl_SemanticsMakeAvailable | gl_SemanticsMakeVisible);
		if (!s_last)
			return;
'''
    return s.replace(old, new, 1)
out = src
for c in sys.argv[2]:
    out = {'d': d, 'v': v, '0': lambda s: s}[c](out)
open(sys.argv[1], 'w').write(out)
