/*===-- ke-c/ke.h - C API of ke -----------------------------------*- C -*-===*\
|*                                                                            *|
|* The plain C interface of libke.so, one self-contained shared library       *|
|* (ke, MLIR and LLVM linked in statically; only the ke_* symbols exported),  *|
|* so that any host can load it without a compiler toolchain: the Python      *|
|* package (python-bindings/, ctypes) first. It compiles MLIR text with the   *|
|* tuned schedules of a database for this CPU, keeps the code in an ORC JIT,  *|
|* saves it to a file and loads it back, describes each function's arguments  *|
|* so the caller can allocate its outputs, and calls functions on memref      *|
|* descriptors. docs/python.md describes the calling convention.              *|
|*                                                                            *|
|* Errors: every function that can fail returns NULL on success and otherwise *|
|* a message (UTF-8, malloc'd) that the caller releases with                  *|
|* ke_message_free. Bad input (unparsable IR, a null handle, a descriptor of  *|
|* the wrong shape) is an error, never a crash.                               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef KE_C_KE_H
#define KE_C_KE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A compiled module: its object code loaded into a JIT, plus the signature
/// of each public function. Owned by the caller (ke_module_destroy).
typedef struct ke_module ke_module;

/// A function of a ke_module; valid as long as its module.
typedef struct ke_function ke_function;

/// Releases an error message returned by any ke_* function. NULL is fine.
void ke_message_free(char *message);

/// ke's version and git revision, e.g. "0.1.0 (bad5a54)". Static storage.
const char *ke_version(void);

/// The version of the LLVM and MLIR that ke was built with, e.g. "22.1.0".
const char *ke_llvm_version(void);

/// Compiles `size` bytes of MLIR text (linalg on tensors; every public
/// function takes and returns tensors of static shapes) for `target` ("cpu":
/// this machine; NULL means "cpu") with the tuned schedules of the database
/// at `database_path` (it must exist; NULL or "" for default schedules), and
/// loads it. Results become out-parameters: each function takes its inputs,
/// then one buffer per result, which the caller allocates. On success
/// stores the module in `*result`. `source_name` names the text in
/// diagnostics (NULL: "input.mlir").
char *ke_compile(const char *mlir, size_t size, const char *source_name,
                 const char *target, const char *database_path,
                 ke_module **result);

/// The remarks of the compile that made `module` (which schedule each
/// workload got and why), one per line; "" for a loaded module.
const char *ke_module_get_remarks(const ke_module *module);

/// Writes the compiled module (its object file and signatures) to `path`.
char *ke_module_save(const ke_module *module, const char *path);

/// Loads a module written by ke_module_save on a machine of the same CPU.
char *ke_module_load(const char *path, ke_module **result);

/// Releases a module and its code. NULL is fine.
void ke_module_destroy(ke_module *module);

/// The number of public functions of `module`, and the name of the i-th.
size_t ke_module_get_num_functions(const ke_module *module);
const char *ke_module_get_function_name(const ke_module *module, size_t i);

/// Finds the function `name` (NULL: the module's only function).
char *ke_module_lookup(ke_module *module, const char *name,
                       ke_function **result);

/// The number of inputs and of results (out-parameters) of `function`.
size_t ke_function_get_num_inputs(const ke_function *function);
size_t ke_function_get_num_results(const ke_function *function);

/// Argument `i` of the call: inputs first, then results. Its rank, its
/// shape (`rank` sizes) and its element type ("f32", "f64", "f16", "bf16",
/// "i1", "i8", "i16", "i32", "i64"). Out of range: 0 / NULL.
size_t ke_function_get_arg_rank(const ke_function *function, size_t i);
const int64_t *ke_function_get_arg_shape(const ke_function *function, size_t i);
const char *ke_function_get_arg_element_type(const ke_function *function,
                                             size_t i);

/// Calls `function` with `count` memref descriptors, inputs then results:
/// each points to {allocated, aligned, offset, sizes[rank], strides[rank]}
/// (pointers and int64_t; MLIR's StridedMemRefType). Buffers must be
/// contiguous (row-major strides) and of the argument's shape; results are
/// written into the caller's buffers.
char *ke_function_call(const ke_function *function, void *const *descriptors,
                       size_t count);

#ifdef __cplusplus
}
#endif

#endif /* KE_C_KE_H */
