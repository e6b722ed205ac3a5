/*===- TensorMapEncoding.h - TMA tensor maps from ke's description -*- C -*-===*\
|*                                                                            *|
|* The CUDA runner (lib/Runtime) and the compiled models' runtime             *|
|* (lib/Compiler/ModelRuntime.c) both encode the TMA tensor maps a kernel     *|
|* names (ke/Codegen/GpuKernel.h GpuTensorMap, ke/Compiler/ModelFormat.h      *|
|* ke_model_tensor_map) with the driver's cuTensorMapEncodeTiled, which they  *|
|* resolve with dlsym. This is the one translation from ke's description      *|
|* (shapes outermost first, contiguous row-major buffers) to the driver's     *|
|* arguments (innermost first, byte strides of the outer dimensions). Plain   *|
|* C: the model runtime links no C++.                                         *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef KE_RUNTIME_TENSORMAPENCODING_H
#define KE_RUNTIME_TENSORMAPENCODING_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* cuda.h's cuTensorMapEncodeTiled (CUDA 12.0 and later); the enums are
   passed as ints, their values part of the driver's ABI. */
typedef int (*ke_tensor_map_encode_tiled_fn)(
    void *tensorMap, int dataType, uint32_t rank, void *globalAddress,
    const uint64_t *globalDim, const uint64_t *globalStrides,
    const uint32_t *boxDim, const uint32_t *elementStrides, int interleave,
    int swizzle, int l2Promotion, int oobFill);

/* The most dimensions a tensor map has. */
#define KE_TENSOR_MAP_MAX_RANK 5

/* Encodes into `out` (128 bytes, 64-byte aligned) the map of a contiguous
   row-major buffer of `rank` dimensions `shape` (outermost first) at device
   address `address`, copied in boxes of `box` (outermost first), with the
   128-byte swizzle when `swizzleBytes` is 128 (none when 0); elements out of
   bounds read as zeros; L2 promotion of 256 bytes. Returns the driver's
   result, or 1 (CUDA_ERROR_INVALID_VALUE) for a rank or swizzle ke does not
   make. */
static inline int ke_encode_tensor_map(ke_tensor_map_encode_tiled_fn encode,
                                       void *out, int dataType,
                                       uint32_t elementBytes, uint32_t rank,
                                       const int64_t *shape,
                                       const int64_t *box,
                                       uint32_t swizzleBytes,
                                       uint64_t address) {
  uint64_t dims[KE_TENSOR_MAP_MAX_RANK], strides[KE_TENSOR_MAP_MAX_RANK];
  uint32_t boxDims[KE_TENSOR_MAP_MAX_RANK], elementStrides[KE_TENSOR_MAP_MAX_RANK];
  uint64_t stride = elementBytes;
  uint32_t i;
  if (rank == 0 || rank > KE_TENSOR_MAP_MAX_RANK ||
      (swizzleBytes != 0 && swizzleBytes != 128))
    return 1;
  for (i = 0; i < rank; ++i) {
    /* Dimension i of the driver's is ke's rank - 1 - i. */
    dims[i] = (uint64_t)shape[rank - 1 - i];
    boxDims[i] = (uint32_t)box[rank - 1 - i];
    elementStrides[i] = 1;
    /* The driver takes the byte strides of dimensions 1 .. rank - 1. */
    if (i > 0)
      strides[i - 1] = stride;
    stride *= dims[i];
  }
  return encode(out, dataType, rank, (void *)(uintptr_t)address, dims,
                strides, boxDims, elementStrides, /*interleave none*/ 0,
                /*swizzle 128B: 3, none: 0*/ swizzleBytes == 128 ? 3 : 0,
                /*L2 promotion 256B*/ 3, /*out of bounds: zeros*/ 0);
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KE_RUNTIME_TENSORMAPENCODING_H */
