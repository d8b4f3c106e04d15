// gpucomm's NVSHMEM kernels and the few host calls around them, built by build.py with nvcc
// (-rdc=true, against NVSHMEM's device library) into a shared library that methods/nvshmem.py
// loads with ctypes.  Every function returns 0 or a non-zero code, gc_error() says why.
//
// Signals: one symmetric array of uint64 counters, SLOTS x npes; slot s of source pe is
// sig[s * npes + pe].  Every put adds 1 to the receiver's counter of its source (one add per
// block that carries a chunk, NVSHMEM_SIGNAL_ADD after the chunk's data), every wait is
// "counter >= the count the host expects", so counters only grow and no reset is needed.
#include <nvshmem.h>
#include <nvshmemx.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static char g_err[512];

#define FAIL(...) do { snprintf(g_err, sizeof g_err, __VA_ARGS__); return -1; } while (0)
#define CK(call) do { cudaError_t e_ = (call); \
    if (e_ != cudaSuccess) FAIL("%s: %s", #call, cudaGetErrorString(e_)); } while (0)
#define LAUNCHED() do { cudaError_t e_ = cudaGetLastError(); \
    if (e_ != cudaSuccess) FAIL("kernel launch: %s", cudaGetErrorString(e_)); } while (0)

// ------------------------------------------------------------------ device helpers

__device__ __forceinline__ void chunk_of(size_t nbytes, size_t chunk, unsigned b, size_t *off, size_t *len) {
    size_t o = (size_t)b * chunk;
    *off = o;
    *len = o >= nbytes ? 0 : (nbytes - o < chunk ? nbytes - o : chunk);
}

// this block's chunk to ``pe`` and +1 on its signal there (the signal alone for an empty chunk)
__device__ __forceinline__ void put_signal(char *dst, const char *src, size_t len, uint64_t *sig, int pe) {
    if (len) {
        nvshmemx_putmem_signal_block(dst, src, len, sig, 1, NVSHMEM_SIGNAL_ADD, pe);
    } else {
        if (threadIdx.x == 0) nvshmemx_signal_op(sig, 1, NVSHMEM_SIGNAL_ADD, pe);
        __syncthreads();
    }
}

__device__ __forceinline__ void wait_ge(uint64_t *sig, uint64_t value) {
    if (threadIdx.x == 0) nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, value);
    __syncthreads();
}

// n round trips in one kernel: the first side puts then waits for the answer, the other waits
// then answers; each of the grid's blocks carries one chunk (``want`` counts every block's add)
__global__ void __launch_bounds__(1024) k_pingpong(char *dst, const char *src, size_t nbytes, size_t chunk, uint64_t *sig_out,
                           uint64_t *sig_in, int peer, int first, int n, uint64_t base) {
    size_t off, len;
    chunk_of(nbytes, chunk, blockIdx.x, &off, &len);
    for (int i = 0; i < n; i++) {
        uint64_t want = base + (uint64_t)(i + 1) * gridDim.x;
        if (!first) wait_ge(sig_in, want);
        put_signal(dst + off, src + off, len, sig_out, peer);
        if (first) wait_ge(sig_in, want);
    }
}

__global__ void __launch_bounds__(1024) k_put(char *dst, const char *src, size_t nbytes, size_t chunk, uint64_t *sig_out, int peer) {
    size_t off, len;
    chunk_of(nbytes, chunk, blockIdx.x, &off, &len);
    put_signal(dst + off, src + off, len, sig_out, peer);
}

__global__ void k_wait(uint64_t *sig_in, uint64_t want) { wait_ge(sig_in, want); }

// bw: ``window`` puts of the same chunk, the last one with the signal; block 0 then waits for
// the receiver's acknowledgement
__global__ void __launch_bounds__(1024) k_bw_send(char *dst, const char *src, size_t nbytes, size_t chunk, uint64_t *sig_out,
                          uint64_t *ack_in, int peer, int window, uint64_t ack_want) {
    size_t off, len;
    chunk_of(nbytes, chunk, blockIdx.x, &off, &len);
    for (int w = 0; w + 1 < window && len; w++) nvshmemx_putmem_nbi_block(dst + off, src + off, len, peer);
    if (len) {
        nvshmemx_putmem_signal_nbi_block(dst + off, src + off, len, sig_out, 1, NVSHMEM_SIGNAL_ADD, peer);
    } else {
        if (threadIdx.x == 0) nvshmemx_signal_op(sig_out, 1, NVSHMEM_SIGNAL_ADD, peer);
        __syncthreads();
    }
    if (blockIdx.x == 0) wait_ge(ack_in, ack_want);
}

__global__ void k_bw_recv(uint64_t *sig_in, uint64_t want, uint64_t *ack_out, int peer) {
    if (threadIdx.x == 0) {
        nvshmem_signal_wait_until(sig_in, NVSHMEM_CMP_GE, want);
        nvshmemx_signal_op(ack_out, 1, NVSHMEM_SIGNAL_ADD, peer);
    }
}

// all-to-all: task (d, b) puts chunk b of block d to PE d, at offset me * block there; once
// all its puts are issued, a block waits until every chunk of its sources has arrived here
// (slot sig[d]).  The grid is at most one block per SM (every block resident: no block waits
// on a put that a block not yet scheduled would make), each taking tasks in a stride.
__global__ void __launch_bounds__(1024) k_alltoall(char *recv, const char *send, size_t block, size_t chunk,
                                                   int bpp, int npes, uint64_t *sig, int me, uint64_t want) {
    int tasks = bpp * npes;
    for (int t = blockIdx.x; t < tasks; t += gridDim.x) {
        int d = t / bpp, b = t % bpp;
        size_t off, len;
        chunk_of(block, chunk, b, &off, &len);
        put_signal(recv + (size_t)me * block + off, send + (size_t)d * block + off, len, sig + me, d);
    }
    for (int t = blockIdx.x; t < tasks; t += gridDim.x) wait_ge(sig + t / bpp, want);
}

// ------------------------------------------------------------------ host API

extern "C" {

const char *gc_error(void) { return g_err; }

int gc_uid_size(void) { return (int)sizeof(nvshmemx_uniqueid_t); }

int gc_get_uid(void *out) {
    nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
    int rc = nvshmemx_get_uniqueid(&id);
    if (rc) FAIL("nvshmemx_get_uniqueid returned %d", rc);
    memcpy(out, &id, sizeof id);
    return 0;
}

int gc_init(int rank, int nranks, const void *uid, int device) {
    CK(cudaSetDevice(device));
    if (nvshmemx_init_status() >= NVSHMEM_STATUS_IS_INITIALIZED) return 0;
    nvshmemx_uniqueid_t id;
    memcpy(&id, uid, sizeof id);
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    int rc = nvshmemx_set_attr_uniqueid_args(rank, nranks, &id, &attr);
    if (rc) FAIL("nvshmemx_set_attr_uniqueid_args returned %d", rc);
    // nvshmemx_init_attr's body without its exit() on failure: the payload says why and exits 3
    nvshmemx_init_init_attr_ver_only(attr);
    nvshmemi_version_t version = {NVSHMEM_VENDOR_MAJOR_VERSION, NVSHMEM_VENDOR_MINOR_VERSION,
                                  NVSHMEM_VENDOR_PATCH_VERSION};
    int provided = 0;
    rc = nvshmemi_init_thread(NVSHMEM_THREAD_SERIALIZED, &provided, NVSHMEMX_INIT_WITH_UNIQUEID, &attr, version);
    if (rc) FAIL("NVSHMEM initialisation (unique-id bootstrap) returned %d: see NVSHMEM's messages above", rc);
    if (nvshmem_my_pe() != rank || nvshmem_n_pes() != nranks)
        FAIL("NVSHMEM made this rank PE %d of %d, expected %d of %d", nvshmem_my_pe(), nvshmem_n_pes(), rank, nranks);
    return 0;
}

// the headers' version, major * 10000 + minor * 100 + patch
int gc_version(void) {
    return NVSHMEM_VENDOR_MAJOR_VERSION * 10000 + NVSHMEM_VENDOR_MINOR_VERSION * 100 + NVSHMEM_VENDOR_PATCH_VERSION;
}

int gc_sm_count(int device) {
    int n = 0;
    if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) return -1;
    return n;
}

void *gc_malloc(size_t nbytes) {
    void *p = nvshmem_malloc(nbytes);
    if (!p) snprintf(g_err, sizeof g_err, "nvshmem_malloc(%zu) failed (symmetric heap too small?)", nbytes);
    return p;
}

int gc_free(void *p) {
    nvshmem_free(p);
    return 0;
}

// whether ``pe`` is reachable by load/store (P2P over NVLink or PCIe): nvshmem_ptr non-NULL
int gc_p2p(void *sym, int pe) { return nvshmem_ptr(sym, pe) != NULL; }

int gc_finalize(void) {
    if (nvshmemx_init_status() >= NVSHMEM_STATUS_IS_INITIALIZED) nvshmem_finalize();
    return 0;
}

int gc_pingpong(void *dst, const void *src, size_t nbytes, size_t chunk, int blocks, int threads,
                uint64_t *sig_out, uint64_t *sig_in, int peer, int first, int n, uint64_t base, cudaStream_t s) {
    k_pingpong<<<blocks, threads, 0, s>>>((char *)dst, (const char *)src, nbytes, chunk, sig_out, sig_in, peer,
                                          first, n, base);
    LAUNCHED();
    return 0;
}

int gc_put(void *dst, const void *src, size_t nbytes, size_t chunk, int blocks, int threads, uint64_t *sig_out,
           int peer, cudaStream_t s) {
    k_put<<<blocks, threads, 0, s>>>((char *)dst, (const char *)src, nbytes, chunk, sig_out, peer);
    LAUNCHED();
    return 0;
}

int gc_wait(uint64_t *sig_in, uint64_t want, cudaStream_t s) {
    k_wait<<<1, 32, 0, s>>>(sig_in, want);
    LAUNCHED();
    return 0;
}

int gc_bw_send(void *dst, const void *src, size_t nbytes, size_t chunk, int blocks, int threads, uint64_t *sig_out,
               uint64_t *ack_in, int peer, int window, uint64_t ack_want, cudaStream_t s) {
    k_bw_send<<<blocks, threads, 0, s>>>((char *)dst, (const char *)src, nbytes, chunk, sig_out, ack_in, peer,
                                         window, ack_want);
    LAUNCHED();
    return 0;
}

int gc_bw_recv(uint64_t *sig_in, uint64_t want, uint64_t *ack_out, int peer, cudaStream_t s) {
    k_bw_recv<<<1, 32, 0, s>>>(sig_in, want, ack_out, peer);
    LAUNCHED();
    return 0;
}

int gc_alltoall(void *recv, const void *send, size_t block, size_t chunk, int bpp, int blocks, int threads,
                uint64_t *sig, int me, int npes, uint64_t want, cudaStream_t s) {
    k_alltoall<<<blocks, threads, 0, s>>>((char *)recv, (const char *)send, block, chunk, bpp, npes, sig, me, want);
    LAUNCHED();
    return 0;
}

// the stream path: host-initiated, stream-ordered (the copy engine moves P2P data)
int gc_put_stream(void *dst, const void *src, size_t nbytes, uint64_t *sig_out, int peer, cudaStream_t s) {
    nvshmemx_putmem_signal_on_stream(dst, src, nbytes, sig_out, 1, NVSHMEM_SIGNAL_ADD, peer, s);
    return 0;
}

int gc_put_nosignal_stream(void *dst, const void *src, size_t nbytes, int peer, cudaStream_t s) {
    nvshmemx_putmem_on_stream(dst, src, nbytes, peer, s);
    return 0;
}

int gc_signal_stream(uint64_t *sig_out, int peer, cudaStream_t s) {
    nvshmemx_signal_op_on_stream(sig_out, 1, NVSHMEM_SIGNAL_ADD, peer, s);
    return 0;
}

int gc_wait_stream(uint64_t *sig_in, uint64_t want, cudaStream_t s) {
    nvshmemx_signal_wait_until_on_stream(sig_in, NVSHMEM_CMP_GE, want, s);
    return 0;
}

int gc_allreduce_f32(float *dst, const float *src, size_t count, cudaStream_t s) {
    int rc = nvshmemx_float_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, dst, src, count, s);
    if (rc) FAIL("nvshmemx_float_sum_reduce_on_stream returned %d", rc);
    return 0;
}

}  // extern "C"
