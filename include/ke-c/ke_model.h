/*===- ke_model.h - The C ABI of models compiled for GPUs --------*- C -*-===*\
|*                                                                            *|
|* `ke-opt compile MODEL.mlir --target cuda:sm_XX -o MODEL.so` writes one     *|
|* shared library per model: its public function, every kernel group with the *|
|* schedule `ke-opt compile` applies (the tuned record or the default), and   *|
|* the host side that runs them in order. It needs only libc and the CUDA     *|
|* driver (libcuda.so.1, opened with dlopen on the first call, or             *|
|* $KE_CUDA_LIBRARY). These are its exported functions (docs/compile.md).     *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef KE_C_KE_MODEL_H
#define KE_C_KE_MODEL_H

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this ABI (1). */
int ke_model_abi_version(void);

/* The model's signature as JSON: {"name", "target", "pipeline_hash",
   "inputs": [{"shape": [...], "dtype": "f32"}, ...], "outputs": [...],
   "temporary_bytes": the device memory the first call allocates for
   intermediates}. */
const char *ke_model_signature(void);

/* Runs the model once on `stream` (a CUstream; NULL is the default stream),
   asynchronously with respect to the host. `buffers` holds the device
   addresses of every input, then of every output, each a contiguous
   row-major array of the signature's shape and element type; outputs must
   not overlap inputs or each other. The first call loads the device code
   into the calling thread's current CUDA context (the primary context of
   device 0 when none is current, as for a fresh process), uploads the
   constants and allocates the temporaries, which later calls reuse; later
   calls must come from that context. Calls are ordered on the device: a
   call waits (on its stream, not on the host) for the previous one to
   finish. A call may be captured into a CUDA graph (stream capture); the
   replays then share the temporaries, so replays of one model must not
   overlap each other or other calls. Returns 0, or a nonzero code with
   ke_model_last_error() saying why. Thread-safe. */
int ke_model_run(void *stream, void *const *buffers);

/* Why the calling thread's last failed ke_model_run (or ke_model_release)
   failed. */
const char *ke_model_last_error(void);

/* Frees what the first call allocated (device code, constants,
   temporaries) once the last call's work on the device is done; the next
   ke_model_run loads again. Call it when the model is no longer used, from
   no thread that is calling ke_model_run. Returns 0, or a nonzero code
   with ke_model_last_error() saying why. Thread-safe. */
int ke_model_release(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KE_C_KE_MODEL_H */
