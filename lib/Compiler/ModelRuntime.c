/*===- ModelRuntime.c - What runs a compiled GPU model -------------------===*\
|*                                                                            *|
|* Linked into every model that `ke-opt compile --target cuda:...` (or        *|
|* rocm:...) writes as a shared library, beside the model's blob              *|
|* (ke/Compiler/ModelFormat.h). It implements the ABI of ke-c/ke_model.h: on  *|
|* the first call it opens the CUDA driver (or, for a model of HSACO images,  *|
|* the HIP runtime, whose module API mirrors it) with dlopen (as ke's runners *|
|* do: no link-time CUDA or ROCm dependency),                                 *|
|* loads each kernel group's image, resolves its kernels and allocates the    *|
|* temporaries once; every call then runs the steps on the caller's stream    *|
|* (launches with the tuned grid, block and shared memory; copies, box copies *|
|* of slices and pads, fills). Calls are                                      *|
|* ordered on the device by an event, so a call on another stream does not    *|
|* reuse the temporaries before the previous call is done with them.          *|
|*                                                                            *|
|* Plain C with no library beyond libc: ke-opt embeds this file's object and  *|
|* links models on machines that have no C++ runtime to link against.         *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "ke-c/ke_model.h"
#include "ke/Compiler/ModelFormat.h"
#include "ke/Runtime/TensorMapEncoding.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KE_EXPORT __attribute__((visibility("default")))

/* The model: written by the compiler into the same shared object. */
extern const unsigned char ke_model_blob[];

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream, *CUevent;

enum {
  CUDA_SUCCESS = 0,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  CU_EVENT_DISABLE_TIMING = 2,
  CU_MEMORYTYPE_DEVICE = 2
};

/* cuda.h's CUDA_MEMCPY3D (the layout of cuMemcpy3D_v2's argument). */
typedef struct {
  size_t srcXInBytes, srcY, srcZ, srcLOD;
  int srcMemoryType;
  const void *srcHost;
  CUdeviceptr srcDevice;
  void *srcArray, *reserved0;
  size_t srcPitch, srcHeight;
  size_t dstXInBytes, dstY, dstZ, dstLOD;
  int dstMemoryType;
  void *dstHost;
  CUdeviceptr dstDevice;
  void *dstArray, *reserved1;
  size_t dstPitch, dstHeight;
  size_t WidthInBytes, Height, Depth;
} CopyBox;

/* The driver functions the runtime uses, as cuda.h binds their names. */
static struct {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuCtxGetCurrent)(CUcontext *);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, unsigned, CUstream,
                             void **, void **);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned);
  CUresult (*cuStreamIsCapturing)(CUstream, int *);
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemcpy3DAsync)(const CopyBox *, CUstream);
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*cuMemsetD16Async)(CUdeviceptr, unsigned short, size_t, CUstream);
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
  /* CUDA 12.0 and later; resolved only for models with TMA tensor maps. */
  ke_tensor_map_encode_tiled_fn cuTensorMapEncodeTiled;
} cu;

/* What the first call loads: kept until ke_model_release. */
static struct {
  int loaded;
  CUcontext context;
  CUmodule *modules;      /* one per image */
  CUfunction *functions;  /* one per launch */
  CUdeviceptr *constants; /* one per constant */
  CUdeviceptr arena;      /* every temporary, at its offset */
  CUdeviceptr *temps;     /* one per slot; set for temporaries */
  CUevent done;           /* recorded after each call's last step */
  int recorded;
} model;

/* Held while loading and while a call enqueues its steps. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static __thread char lastError[1024];

static const ke_model_header *header(void) {
  return (const ke_model_header *)ke_model_blob;
}

static const void *at(uint64_t offset) { return ke_model_blob + offset; }

static int fail(const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(lastError, sizeof(lastError), format, args);
  va_end(args);
  return 1;
}

/* "cuLaunchKernel: CUDA_ERROR_... (text)". */
static int failCuda(const char *what, CUresult result) {
  const char *name = 0, *text = 0;
  if (cu.cuGetErrorName)
    cu.cuGetErrorName(result, &name);
  if (cu.cuGetErrorString)
    cu.cuGetErrorString(result, &text);
  return fail("ke model: %s: %s (%s)", what, name ? name : "CUDA error",
              text ? text : "no description");
}

#define CHECK(call, what)                                                      \
  do {                                                                         \
    CUresult checked_ = (call);                                                \
    if (checked_ != CUDA_SUCCESS)                                              \
      return failCuda(what, checked_);                                         \
  } while (0)

/* Resolves `name` from `library` into `*function`; the first of `name` and
   `fallback` that exists. */
static const char *driverName = "the CUDA driver";

static int resolve(void *library, void *function, const char *name,
                   const char *fallback) {
  void *symbol = dlsym(library, name);
  if (!symbol && fallback)
    symbol = dlsym(library, fallback);
  if (!symbol)
    return fail("ke model: %s lacks %s", driverName, name);
  memcpy(function, &symbol, sizeof(symbol));
  return 0;
}

static int openCudaDriver(void) {
  const char *name = getenv("KE_CUDA_LIBRARY");
  if (!name || !*name)
    name = "libcuda.so.1";
  void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!library)
    return fail("ke model: no CUDA driver (%s: %s)", name, dlerror());
  if (resolve(library, &cu.cuInit, "cuInit", 0) ||
      resolve(library, &cu.cuGetErrorName, "cuGetErrorName", 0) ||
      resolve(library, &cu.cuGetErrorString, "cuGetErrorString", 0) ||
      resolve(library, &cu.cuCtxGetCurrent, "cuCtxGetCurrent", 0) ||
      resolve(library, &cu.cuCtxSetCurrent, "cuCtxSetCurrent", 0) ||
      resolve(library, &cu.cuDeviceGet, "cuDeviceGet", 0) ||
      resolve(library, &cu.cuDevicePrimaryCtxRetain,
              "cuDevicePrimaryCtxRetain", 0) ||
      resolve(library, &cu.cuModuleLoadData, "cuModuleLoadData", 0) ||
      resolve(library, &cu.cuModuleGetFunction, "cuModuleGetFunction", 0) ||
      resolve(library, &cu.cuFuncSetAttribute, "cuFuncSetAttribute", 0) ||
      resolve(library, &cu.cuLaunchKernel, "cuLaunchKernel", 0) ||
      resolve(library, &cu.cuMemAlloc, "cuMemAlloc_v2", "cuMemAlloc") ||
      resolve(library, &cu.cuMemFree, "cuMemFree_v2", "cuMemFree") ||
      resolve(library, &cu.cuModuleUnload, "cuModuleUnload", 0) ||
      resolve(library, &cu.cuEventSynchronize, "cuEventSynchronize", 0) ||
      resolve(library, &cu.cuEventDestroy, "cuEventDestroy_v2",
              "cuEventDestroy") ||
      resolve(library, &cu.cuMemcpyHtoD, "cuMemcpyHtoD_v2", "cuMemcpyHtoD") ||
      resolve(library, &cu.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2",
              "cuMemcpyDtoDAsync") ||
      resolve(library, &cu.cuMemcpy3DAsync, "cuMemcpy3DAsync_v2",
              "cuMemcpy3DAsync") ||
      resolve(library, &cu.cuMemsetD8Async, "cuMemsetD8Async", 0) ||
      resolve(library, &cu.cuMemsetD16Async, "cuMemsetD16Async", 0) ||
      resolve(library, &cu.cuMemsetD32Async, "cuMemsetD32Async", 0) ||
      resolve(library, &cu.cuEventCreate, "cuEventCreate", 0) ||
      resolve(library, &cu.cuEventRecord, "cuEventRecord", 0) ||
      resolve(library, &cu.cuStreamWaitEvent, "cuStreamWaitEvent", 0))
    return 1;
  /* CUDA 10 and later; without it no stream is taken to be capturing. */
  cu.cuStreamIsCapturing = 0;
  resolve(library, &cu.cuStreamIsCapturing, "cuStreamIsCapturing", 0);
  if (header()->num_tensor_maps &&
      resolve(library, &cu.cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled",
              0))
    return 1;
  lastError[0] = 0;
  return 0;
}

/* --- HIP (ROCm) --------------------------------------------------------- *
 * HIP's module API takes the CUDA driver's arguments in the same ABI
 * (hipModuleLaunchKernel, hipMalloc on a device pointer, hipMemsetD32Async,
 * ...): `cu` holds HIP's functions under the CUDA names. Where HIP differs,
 * an adapter below stands in. */

static const char *(*hipGetErrorNameFn)(CUresult);
static const char *(*hipGetErrorStringFn)(CUresult);
static CUresult (*hipMemcpy2DAsyncFn)(void *, size_t, const void *, size_t,
                                      size_t, size_t, int, CUstream);
enum { HIP_MEMCPY_DEVICE_TO_DEVICE = 3 };

static CUresult hipErrorName(CUresult result, const char **name) {
  *name = hipGetErrorNameFn(result);
  return CUDA_SUCCESS;
}

static CUresult hipErrorString(CUresult result, const char **text) {
  *text = hipGetErrorStringFn(result);
  return CUDA_SUCCESS;
}

/* AMD kernels declare their LDS statically (at most 64 KiB): there is no
   dynamic shared memory to opt into. */
static CUresult hipNoFuncAttribute(CUfunction function, int attribute,
                                   int value) {
  (void)function, (void)attribute, (void)value;
  return CUDA_SUCCESS;
}

/* A box as `Depth` pitched 2-D copies: HIP_MEMCPY3D's memory-type values
   changed between ROCm 5 and 6, hipMemcpy2DAsync's arguments did not. */
static CUresult hipBoxCopy(const CopyBox *box, CUstream stream) {
  for (size_t z = 0; z < box->Depth; ++z) {
    CUresult result = hipMemcpy2DAsyncFn(
        (void *)(box->dstDevice + z * box->dstPitch * box->dstHeight),
        box->dstPitch,
        (const void *)(box->srcDevice + z * box->srcPitch * box->srcHeight),
        box->srcPitch, box->WidthInBytes, box->Height,
        HIP_MEMCPY_DEVICE_TO_DEVICE, stream);
    if (result != CUDA_SUCCESS)
      return result;
  }
  return CUDA_SUCCESS;
}

static int openHipRuntime(void) {
  driverName = "the HIP runtime";
  const char *names[] = {getenv("KE_HIP_LIBRARY"), "libamdhip64.so.6",
                         "libamdhip64.so.5", "libamdhip64.so"};
  void *library = 0;
  char tried[512] = "";
  for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]) && !library;
       ++i) {
    if (!names[i] || !*names[i])
      continue;
    library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      size_t used = strlen(tried);
      snprintf(tried + used, sizeof(tried) - used, "%s%s", used ? ", " : "",
               names[i]);
    }
    /* An explicit KE_HIP_LIBRARY is the only one tried. */
    if (i == 0)
      break;
  }
  if (!library)
    return fail("ke model: no HIP runtime (%s: %s)", tried, dlerror());
  if (resolve(library, &hipGetErrorNameFn, "hipGetErrorName", 0) ||
      resolve(library, &hipGetErrorStringFn, "hipGetErrorString", 0) ||
      resolve(library, &hipMemcpy2DAsyncFn, "hipMemcpy2DAsync", 0) ||
      resolve(library, &cu.cuInit, "hipInit", 0) ||
      resolve(library, &cu.cuCtxGetCurrent, "hipCtxGetCurrent", 0) ||
      resolve(library, &cu.cuCtxSetCurrent, "hipCtxSetCurrent", 0) ||
      resolve(library, &cu.cuDeviceGet, "hipDeviceGet", 0) ||
      resolve(library, &cu.cuDevicePrimaryCtxRetain,
              "hipDevicePrimaryCtxRetain", 0) ||
      resolve(library, &cu.cuModuleLoadData, "hipModuleLoadData", 0) ||
      resolve(library, &cu.cuModuleGetFunction, "hipModuleGetFunction", 0) ||
      resolve(library, &cu.cuLaunchKernel, "hipModuleLaunchKernel", 0) ||
      resolve(library, &cu.cuMemAlloc, "hipMalloc", 0) ||
      resolve(library, &cu.cuMemFree, "hipFree", 0) ||
      resolve(library, &cu.cuModuleUnload, "hipModuleUnload", 0) ||
      resolve(library, &cu.cuEventSynchronize, "hipEventSynchronize", 0) ||
      resolve(library, &cu.cuEventDestroy, "hipEventDestroy", 0) ||
      resolve(library, &cu.cuMemcpyHtoD, "hipMemcpyHtoD", 0) ||
      resolve(library, &cu.cuMemcpyDtoDAsync, "hipMemcpyDtoDAsync", 0) ||
      resolve(library, &cu.cuMemsetD8Async, "hipMemsetD8Async", 0) ||
      resolve(library, &cu.cuMemsetD16Async, "hipMemsetD16Async", 0) ||
      resolve(library, &cu.cuMemsetD32Async, "hipMemsetD32Async", 0) ||
      resolve(library, &cu.cuEventCreate, "hipEventCreateWithFlags", 0) ||
      resolve(library, &cu.cuEventRecord, "hipEventRecord", 0) ||
      resolve(library, &cu.cuStreamWaitEvent, "hipStreamWaitEvent", 0))
    return 1;
  cu.cuGetErrorName = hipErrorName;
  cu.cuGetErrorString = hipErrorString;
  cu.cuFuncSetAttribute = hipNoFuncAttribute;
  cu.cuMemcpy3DAsync = hipBoxCopy;
  cu.cuStreamIsCapturing = 0;
  resolve(library, &cu.cuStreamIsCapturing, "hipStreamIsCapturing", 0);
  lastError[0] = 0;
  return 0;
}

/* The CUDA driver, or the HIP runtime for a model of AMD code objects. */
static int openDriver(void) {
  const ke_model_header *h = header();
  const ke_model_image *images = at(h->images);
  for (uint32_t i = 0; i < h->num_images; ++i)
    if (images[i].format == KE_IMAGE_HSACO)
      return openHipRuntime();
  return openCudaDriver();
}

/* Loads the images, kernels and constants into the current context (or the
   primary context of device 0). Called once, under `lock`. */
static int load(void) {
  const ke_model_header *h = header();
  if (h->magic != KE_MODEL_MAGIC || h->version != KE_MODEL_FORMAT_VERSION)
    return fail("ke model: the model blob is damaged or of another version");
  if (openDriver())
    return 1;
  CHECK(cu.cuInit(0), "cuInit");
  CUcontext context = 0;
  CHECK(cu.cuCtxGetCurrent(&context), "cuCtxGetCurrent");
  if (!context) {
    CUdevice device;
    CHECK(cu.cuDeviceGet(&device, 0), "cuDeviceGet");
    CHECK(cu.cuDevicePrimaryCtxRetain(&context, device),
          "cuDevicePrimaryCtxRetain");
    CHECK(cu.cuCtxSetCurrent(context), "cuCtxSetCurrent");
  }
  const ke_model_image *images = at(h->images);
  CUmodule *modules = calloc(h->num_images ? h->num_images : 1,
                             sizeof(CUmodule));
  model.modules = modules;
  model.functions = calloc(h->num_launches ? h->num_launches : 1,
                           sizeof(CUfunction));
  model.constants = calloc(h->num_constants ? h->num_constants : 1,
                           sizeof(CUdeviceptr));
  model.temps = calloc(h->num_slots ? h->num_slots : 1, sizeof(CUdeviceptr));
  if (!modules || !model.functions || !model.constants || !model.temps)
    return fail("ke model: out of host memory");
  for (uint32_t i = 0; i < h->num_images; ++i)
    CHECK(cu.cuModuleLoadData(&modules[i], at(images[i].data)),
          "cuModuleLoadData");
  const ke_model_launch *launches = at(h->launches);
  for (uint32_t i = 0; i < h->num_launches; ++i) {
    const ke_model_launch *launch = &launches[i];
    const char *name = at(launch->kernel_name);
    CUresult result = cu.cuModuleGetFunction(&model.functions[i],
                                             modules[launch->image], name);
    if (result != CUDA_SUCCESS)
      return failCuda(name, result);
    /* Beyond 48 KiB, dynamic shared memory is opted into per kernel. */
    if (launch->dynamic_shared_memory_bytes > 48 * 1024)
      CHECK(cu.cuFuncSetAttribute(
                model.functions[i],
                CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                (int)launch->dynamic_shared_memory_bytes),
            "cuFuncSetAttribute(max dynamic shared memory)");
  }
  const ke_model_constant *constants = at(h->constants);
  for (uint32_t i = 0; i < h->num_constants; ++i) {
    CHECK(cu.cuMemAlloc(&model.constants[i],
                        constants[i].bytes ? constants[i].bytes : 1),
          "cuMemAlloc (constant)");
    CHECK(cu.cuMemcpyHtoD(model.constants[i], at(constants[i].data),
                          constants[i].bytes),
          "cuMemcpyHtoD (constant)");
  }
  /* Temporaries once, in one arena where the planner placed them (those
     alive at the same time apart): allocating and freeing them per call
     costs more than small models take to run. */
  const ke_model_slot *slots = at(h->slots);
  uint64_t arenaBytes = 0;
  for (uint32_t i = 0; i < h->num_slots; ++i)
    if (slots[i].kind == KE_SLOT_TEMP) {
      uint64_t end = (uint64_t)slots[i].index * KE_MODEL_TEMP_ALIGNMENT +
                     (slots[i].bytes ? slots[i].bytes : 1);
      if (end > arenaBytes)
        arenaBytes = end;
    }
  if (arenaBytes)
    CHECK(cu.cuMemAlloc(&model.arena, arenaBytes), "cuMemAlloc (temporaries)");
  for (uint32_t i = 0; i < h->num_slots; ++i)
    if (slots[i].kind == KE_SLOT_TEMP)
      model.temps[i] =
          model.arena + (uint64_t)slots[i].index * KE_MODEL_TEMP_ALIGNMENT;
  CHECK(cu.cuEventCreate(&model.done, CU_EVENT_DISABLE_TIMING),
        "cuEventCreate");
  model.context = context;
  model.loaded = 1;
  return 0;
}

/* Loads on the first call and makes the model's context current. Called
   with `lock` held. */
static int ensureLoaded(void) {
  if (!model.loaded && load())
    return 1;
  CUcontext current = 0;
  CHECK(cu.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  if (!current)
    CHECK(cu.cuCtxSetCurrent(model.context), "cuCtxSetCurrent");
  else if (current != model.context)
    return fail("ke model: called from another CUDA context than the one "
                "the model was loaded into");
  return 0;
}

/* Launch `index` with the slots' addresses. */
static int launch(uint32_t index, const CUdeviceptr *slots, CUstream stream) {
  const ke_model_header *h = header();
  const ke_model_launch *l = (const ke_model_launch *)at(h->launches) + index;
  const ke_model_arg *args = (const ke_model_arg *)at(h->args) + l->first_arg;
  uint64_t values[l->num_args ? l->num_args : 1];
  void *params[l->num_args ? l->num_args : 1];
  /* Tensor maps are encoded over this call's buffers and passed by value:
     the driver copies them with the other parameters at the launch. */
  typedef struct {
    _Alignas(64) unsigned char bytes[128];
  } EncodedMap;
  uint32_t numMaps = 0;
  for (uint32_t i = 0; i < l->num_args; ++i)
    numMaps += args[i].kind == KE_ARG_TENSOR_MAP;
  EncodedMap maps[numMaps ? numMaps : 1];
  const ke_model_tensor_map *records = at(header()->tensor_maps);
  numMaps = 0;
  for (uint32_t i = 0; i < l->num_args; ++i) {
    if (args[i].kind == KE_ARG_TENSOR_MAP) {
      const ke_model_tensor_map *m = &records[args[i].value];
      CUresult result = ke_encode_tensor_map(
          cu.cuTensorMapEncodeTiled, maps[numMaps].bytes, (int)m->data_type,
          m->element_bytes, m->rank, m->shape, m->box, m->swizzle_bytes,
          slots[args[i].slot]);
      if (result != CUDA_SUCCESS)
        return failCuda("cuTensorMapEncodeTiled", result);
      params[i] = maps[numMaps++].bytes;
      continue;
    }
    /* The driver reads each parameter at its declared size from the start
       of its value, so 32-bit ones sit in the low bytes (little-endian). */
    values[i] = args[i].kind == KE_ARG_POINTER ? slots[args[i].slot]
                                               : args[i].value;
    params[i] = &values[i];
  }
  CUresult result = cu.cuLaunchKernel(
      model.functions[index], l->grid[0], l->grid[1], l->grid[2], l->block[0],
      l->block[1], l->block[2], l->dynamic_shared_memory_bytes, stream,
      params, 0);
  if (result != CUDA_SUCCESS)
    return failCuda((const char *)at(l->kernel_name), result);
  return 0;
}

KE_EXPORT int ke_model_abi_version(void) { return 1; }

KE_EXPORT const char *ke_model_signature(void) {
  return (const char *)at(header()->signature);
}

KE_EXPORT const char *ke_model_last_error(void) { return lastError; }

/* Box copy `index` between the slots. */
static int copyBox(uint32_t index, const CUdeviceptr *slots, CUstream stream) {
  const ke_model_box *b = (const ke_model_box *)at(header()->boxes) + index;
  CopyBox box;
  memset(&box, 0, sizeof(box));
  box.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  box.srcDevice = slots[b->src_slot] + b->src_offset;
  box.srcPitch = b->src_pitch;
  box.srcHeight = b->src_rows;
  box.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  box.dstDevice = slots[b->dst_slot] + b->dst_offset;
  box.dstPitch = b->dst_pitch;
  box.dstHeight = b->dst_rows;
  box.WidthInBytes = b->width;
  box.Height = b->height;
  box.Depth = b->depth;
  CUresult result = cu.cuMemcpy3DAsync(&box, stream);
  if (result != CUDA_SUCCESS)
    return failCuda("cuMemcpy3DAsync", result);
  return 0;
}

/* Fill step `step`: the slot's bytes set to a repeated 1, 2 or 4-byte
   pattern. */
static int fill(const ke_model_step *step, const CUdeviceptr *slots,
                CUstream stream) {
  CUdeviceptr ptr = slots[step->a];
  CUresult result;
  if (step->reserved == 4)
    result = cu.cuMemsetD32Async(ptr, step->b, step->bytes / 4, stream);
  else if (step->reserved == 2)
    result = cu.cuMemsetD16Async(ptr, (unsigned short)step->b,
                                 step->bytes / 2, stream);
  else
    result = cu.cuMemsetD8Async(ptr, (unsigned char)step->b, step->bytes,
                                stream);
  if (result != CUDA_SUCCESS)
    return failCuda("cuMemset", result);
  return 0;
}

/* Enqueues one call's steps on `stream`. Called with `lock` held. */
static int run(CUstream stream, void *const *buffers) {
  const ke_model_header *h = header();
  /* Kernels read and write 16 bytes at a time and TMA tensor maps need
     16-byte aligned buffers (ke's kernel ABI, docs/compile.md): a view at
     an offset is refused here, not left to fault inside a kernel. */
  for (uint32_t i = 0; i < h->num_inputs + h->num_outputs; ++i)
    if ((uintptr_t)buffers[i] % 16)
      return fail("ke model: %s #%u is at %p, not 16-byte aligned (a view "
                  "at an offset?); pass a tensor of its own",
                  i < h->num_inputs ? "input" : "output",
                  i < h->num_inputs ? i : i - h->num_inputs, buffers[i]);
  if (ensureLoaded())
    return 1;
  const ke_model_slot *s = at(h->slots);
  CUdeviceptr *slots = calloc(h->num_slots ? h->num_slots : 1,
                              sizeof(CUdeviceptr));
  if (!slots)
    return fail("ke model: out of host memory");
  for (uint32_t i = 0; i < h->num_slots; ++i) {
    switch (s[i].kind) {
    case KE_SLOT_INPUT:
      slots[i] = (CUdeviceptr)buffers[s[i].index];
      break;
    case KE_SLOT_OUTPUT:
      slots[i] = (CUdeviceptr)buffers[h->num_inputs + s[i].index];
      break;
    case KE_SLOT_CONSTANT:
      slots[i] = model.constants[s[i].index];
      break;
    default:
      slots[i] = model.temps[i];
    }
  }
  int status = 0;
  /* Captured into a CUDA graph, the call's steps become nodes that the
     graph orders; waiting on (or recording) the event of calls outside the
     capture is not allowed there. */
  int capturing = 0;
  if (cu.cuStreamIsCapturing &&
      cu.cuStreamIsCapturing(stream, &capturing) != CUDA_SUCCESS)
    capturing = 0;
  /* The temporaries are the previous call's until it is done with them. */
  if (model.recorded && !capturing) {
    CUresult result = cu.cuStreamWaitEvent(stream, model.done, 0);
    if (result != CUDA_SUCCESS)
      status = failCuda("cuStreamWaitEvent", result);
  }
  const ke_model_step *steps = at(h->steps);
  for (uint32_t i = 0; i < h->num_steps && !status; ++i) {
    if (steps[i].op == KE_STEP_LAUNCH) {
      status = launch(steps[i].a, slots, stream);
    } else if (steps[i].op == KE_STEP_BOX) {
      status = copyBox(steps[i].a, slots, stream);
    } else if (steps[i].op == KE_STEP_FILL) {
      status = fill(&steps[i], slots, stream);
    } else {
      CUresult result = cu.cuMemcpyDtoDAsync(
          slots[steps[i].a], slots[steps[i].b], steps[i].bytes, stream);
      if (result != CUDA_SUCCESS)
        status = failCuda("cuMemcpyDtoDAsync", result);
    }
  }
  CUresult result = capturing ? CUDA_SUCCESS
                              : cu.cuEventRecord(model.done, stream);
  if (result == CUDA_SUCCESS)
    model.recorded = model.recorded || !capturing;
  else if (!status)
    status = failCuda("cuEventRecord", result);
  free(slots);
  return status;
}

/* Frees what load allocated, after the last call's work is done. Called
   with `lock` held; a partly loaded model (a failed load) is freed too. */
static int release(void) {
  const ke_model_header *h = header();
  int status = 0;
#define RELEASE(call, what)                                                  \
  do {                                                                       \
    CUresult result = (call);                                                \
    if (result != CUDA_SUCCESS && !status)                                   \
      status = failCuda(what, result);                                       \
  } while (0)
  if (model.recorded)
    RELEASE(cu.cuEventSynchronize(model.done), "cuEventSynchronize");
  if (model.done)
    RELEASE(cu.cuEventDestroy(model.done), "cuEventDestroy");
  if (model.arena)
    RELEASE(cu.cuMemFree(model.arena), "cuMemFree (temporaries)");
  for (uint32_t i = 0; model.constants && i < h->num_constants; ++i)
    if (model.constants[i])
      RELEASE(cu.cuMemFree(model.constants[i]), "cuMemFree (constant)");
  for (uint32_t i = 0; model.modules && i < h->num_images; ++i)
    if (model.modules[i])
      RELEASE(cu.cuModuleUnload(model.modules[i]), "cuModuleUnload");
#undef RELEASE
  free(model.modules);
  free(model.functions);
  free(model.constants);
  free(model.temps);
  memset(&model, 0, sizeof(model));
  return status;
}

KE_EXPORT int ke_model_release(void) {
  pthread_mutex_lock(&lock);
  int status = 0;
  /* Nothing to free before the first call (or without a driver). */
  if (cu.cuInit) {
    CUcontext current = 0;
    if (model.context && cu.cuCtxGetCurrent(&current) == CUDA_SUCCESS &&
        current != model.context)
      cu.cuCtxSetCurrent(model.context);
    status = release();
    if (current && current != model.context)
      cu.cuCtxSetCurrent(current);
  }
  pthread_mutex_unlock(&lock);
  return status;
}

KE_EXPORT int ke_model_run(void *stream, void *const *buffers) {
  pthread_mutex_lock(&lock);
  int status = run((CUstream)stream, buffers);
  pthread_mutex_unlock(&lock);
  return status;
}
