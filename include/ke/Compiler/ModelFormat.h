/*===- ModelFormat.h - The plan inside a compiled GPU model ------*- C -*-===*\
|*                                                                            *|
|* A model compiled for a GPU (`ke-opt compile --target cuda:sm_XX -o M.so`)  *|
|* is the small ke model runtime (lib/Compiler/ModelRuntime.c) linked with    *|
|* one read-only blob, `ke_model_blob`, that says everything about the model: *|
|* its device code (one image per kernel group, as tuned), the launches of    *|
|* each group with their arguments, the buffers ("slots": the caller's inputs *|
|* and outputs, constants uploaded once, temporaries of one call) and the     *|
|* steps of one call in order. The compiler writes the blob (ModelPlan.cpp);  *|
|* the runtime reads it. Both include this header, so it is C.                *|
|*                                                                            *|
|* Layout: a ke_model_header, then arrays of the records below at the header's*|
|* offsets (from the start of the blob, 8-byte aligned), then the bytes they  *|
|* point into (strings NUL-terminated, images, constants). Little-endian.     *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef KE_COMPILER_MODELFORMAT_H
#define KE_COMPILER_MODELFORMAT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "KEMODEL1" */
#define KE_MODEL_MAGIC 0x314c45444f4d454bull
#define KE_MODEL_FORMAT_VERSION 3u

/* Temporaries lie in one arena at offsets of this many bytes
   (ke_model_slot.index). */
#define KE_MODEL_TEMP_ALIGNMENT 256u

/* What a slot's memory is. */
enum ke_slot_kind {
  KE_SLOT_INPUT = 0,    /* the caller's argument `index` */
  KE_SLOT_OUTPUT = 1,   /* the caller's result `index` (after the inputs) */
  KE_SLOT_CONSTANT = 2, /* constant `index`, uploaded on first use */
  KE_SLOT_TEMP = 3      /* in the model's arena, at byte `index` *
                           KE_MODEL_TEMP_ALIGNMENT; temporaries whose live
                           ranges (first to last step naming them)
                           overlap never share bytes */
};

/* What one kernel parameter is. */
enum ke_arg_kind {
  KE_ARG_POINTER = 0, /* the device address of slot `slot` */
  KE_ARG_I64 = 1,     /* `value` */
  KE_ARG_I32 = 2,     /* the low 32 bits of `value` */
  KE_ARG_F32 = 3,     /* `value`'s low 32 bits are the float's */
  KE_ARG_F64 = 4,     /* `value`'s bits are the double's */
  KE_ARG_TENSOR_MAP = 5 /* tensor map `value` (ke_model_tensor_map) over
                           slot `slot`, encoded with the slot's address at
                           each launch and passed by value (128 bytes) */
};

/* What one step of a call does. */
enum ke_step_op {
  KE_STEP_LAUNCH = 0, /* launch `a` */
  KE_STEP_COPY = 1,   /* `bytes` from slot `b` to slot `a` */
  KE_STEP_BOX = 2,    /* box copy `a` (ke_model_box) */
  KE_STEP_FILL = 3    /* `bytes` of slot `a` set to `b`'s low `reserved`
                         bytes (1, 2 or 4) repeated */
};

/* Device code formats. */
enum ke_image_format {
  KE_IMAGE_PTX = 0,
  KE_IMAGE_CUBIN = 1,
  KE_IMAGE_HSACO = 2 /* an AMDGPU code object: the model runs through HIP */
};

typedef struct ke_model_header {
  uint64_t magic;
  uint32_t version;
  uint32_t num_inputs, num_outputs;
  uint32_t num_slots, num_images, num_launches, num_args, num_steps;
  uint32_t num_constants;
  uint32_t num_boxes;
  uint32_t num_tensor_maps;
  uint32_t reserved;
  /* Offsets of the record arrays. */
  uint64_t slots, images, launches, args, steps, constants, boxes,
      tensor_maps;
  /* The model's signature as JSON (NUL-terminated): its name, target,
     pipeline hash, and the shape and element type of every input and
     output. */
  uint64_t signature;
} ke_model_header;

typedef struct ke_model_slot {
  uint64_t bytes;
  uint32_t kind; /* ke_slot_kind */
  uint32_t index;
} ke_model_slot;

typedef struct ke_model_image {
  uint64_t data, size; /* PTX is NUL-terminated within `size` */
  uint32_t format;     /* ke_image_format */
  uint32_t reserved;
} ke_model_image;

typedef struct ke_model_launch {
  uint64_t kernel_name; /* offset of a NUL-terminated string */
  uint32_t image;
  uint32_t grid[3], block[3];
  uint32_t dynamic_shared_memory_bytes;
  uint32_t first_arg, num_args;
} ke_model_launch;

typedef struct ke_model_arg {
  uint32_t kind; /* ke_arg_kind */
  uint32_t slot;
  uint64_t value;
} ke_model_arg;

typedef struct ke_model_step {
  uint32_t op; /* ke_step_op */
  uint32_t a, b;
  uint32_t reserved;
  uint64_t bytes;
} ke_model_step;

typedef struct ke_model_constant {
  uint64_t data, bytes;
} ke_model_constant;

/* A copy of a box of up to three dimensions between two slots (a slice, a
   pad's interior): `depth` slices of `height` rows of `width` contiguous
   bytes, each side at its byte offset into its slot, rows `pitch` bytes
   apart and slices `pitch * rows` bytes apart (cuMemcpy3D's model). */
typedef struct ke_model_box {
  uint32_t dst_slot, src_slot;
  uint64_t dst_offset, src_offset;
  uint64_t width, height, depth;
  uint64_t dst_pitch, dst_rows, src_pitch, src_rows;
} ke_model_box;

/* A TMA tensor map over a slot's buffer (contiguous, row-major), as
   ke/Runtime/TensorMapEncoding.h encodes it: `rank` dimensions of `shape`
   copied in boxes of `box`, both outermost first. */
typedef struct ke_model_tensor_map {
  uint32_t data_type; /* CUtensorMapDataType */
  uint32_t element_bytes;
  uint32_t rank;
  uint32_t swizzle_bytes; /* 0 or 128 */
  int64_t shape[5], box[5];
} ke_model_tensor_map;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KE_COMPILER_MODELFORMAT_H */
