#ifndef CACHEADVISE_TEST_SOFTCACHE_SLICES_CUH
#define CACHEADVISE_TEST_SOFTCACHE_SLICES_CUH

/*
 * The seed's two loop slices written once: a kernel's loop body is a
 * template on `bool M` (monitoring) whose memory accesses are
 * slice::load<M, ID>(sc, p) and slice::store<M, ID>(sc, p, v). Slice 1
 * instantiates it with M = true: the plain access followed by
 * simulate<ID>() (simulateCache inserted after each access); slice 2
 * with M = false: read<ID>() / write<ID>() (accessThroughCache). So both
 * slices run the same body, as the seed's compiler transformation makes
 * them:
 *
 *     for (; i < end && sc.monitoring(); i += step) body<true>(sc, i);
 *     sc.select();
 *     for (; i < end; i += step) body<false>(sc, i);
 *     sc.flush();
 *
 * Used by the samples' rewrites (tests/gpu/device/<sample>_kernels.cuh).
 */
#include "device/softcache.cuh"

namespace slice {

template <bool M, int ID, class C, typename T>
__device__ __forceinline__ T load(C &sc, const T *p)
{
	if constexpr (M) {
		T v = *p;
		softcache::simulate<ID>(sc, p);
		return v;
	} else {
		return softcache::read<ID>(sc, p);
	}
}

template <bool M, int ID, class C, typename T>
__device__ __forceinline__ void store(C &sc, T *p, T v)
{
	if constexpr (M) {
		*p = v;
		softcache::simulate<ID>(sc, p, true);
	} else {
		softcache::write<ID>(sc, p, v);
	}
}

template <int K, int NDS, bool NoAlias>
__device__ __forceinline__ void count_from(const softcache::cache<NDS, NoAlias> &sc, unsigned *counts)
{
	if constexpr (K < NDS) {
		if (sc.template cached<K>())
			atomicAdd(&counts[K], 1u);
		count_from<K + 1>(sc, counts);
	}
}

/*
 * After select(): adds 1 to counts[ID] for each structure this thread gave
 * a line, so the host can tell which structures the monitoring phase
 * picked and in how many threads. counts == NULL: nothing.
 */
template <int NDS, bool NoAlias>
__device__ __forceinline__ void count_selected(const softcache::cache<NDS, NoAlias> &sc,
					       unsigned *counts)
{
	if (counts)
		count_from<0>(sc, counts);
}

} /* namespace slice */

#endif
