"""The nvshmem method's native side: kernels.cu (CUDA C++ against NVSHMEM's device library),
build.py (find NVSHMEM and nvcc, build and cache the shared library), lib.py (its ctypes
binding).  methods/nvshmem.py is the method."""
