//===- KeC.cpp - The C functions of ke-c/ke.h -----------------------------===//
//
// Thin wrappers: check the handles and strings the caller passes, call the
// C++ of Compile.cpp and CompiledModule.cpp, and turn llvm::Error into a
// malloc'd message. Nothing here may crash on a null or bad argument.
//
//===----------------------------------------------------------------------===//

#include "ke-c/ke.h"

#include "Compile.h"
#include "CompiledModule.h"

#include "ke/Config.h"
#include "ke/Revision.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>

using namespace ke::capi;

struct ke_function {
  FunctionSignature signature;
  void *entry;
};

struct ke_module {
  std::unique_ptr<LoadedModule> loaded;
  std::vector<ke_function> functions;
};

/// A message the caller frees with ke_message_free.
static char *makeMessage(const llvm::Twine &twine) {
  std::string text = twine.str();
  char *message = static_cast<char *>(std::malloc(text.size() + 1));
  if (!message)
    return nullptr;
  std::memcpy(message, text.data(), text.size());
  message[text.size()] = '\0';
  return message;
}

static char *makeMessage(llvm::Error error) {
  return makeMessage(llvm::toString(std::move(error)));
}

/// A ke_module for `contents`, linked into a JIT.
static char *createModule(ModuleContents contents, ke_module **result) {
  llvm::Expected<std::unique_ptr<LoadedModule>> loaded =
      LoadedModule::create(std::move(contents));
  if (!loaded)
    return makeMessage(loaded.takeError());
  auto module = std::make_unique<ke_module>();
  const std::vector<FunctionSignature> &functions =
      (*loaded)->getContents().functions;
  for (size_t i = 0; i < functions.size(); ++i)
    module->functions.push_back({functions[i], (*loaded)->getEntry(i)});
  module->loaded = std::move(*loaded);
  *result = module.release();
  return nullptr;
}

extern "C" {

void ke_message_free(char *message) { std::free(message); }

const char *ke_version(void) { return KE_VERSION " (" KE_GIT_REVISION ")"; }

const char *ke_llvm_version(void) { return LLVM_VERSION_STRING; }

char *ke_compile(const char *mlir, size_t size, const char *source_name,
                 const char *target, const char *database_path,
                 ke_module **result) {
  if (!result)
    return makeMessage("ke_compile: result is null");
  *result = nullptr;
  if (!mlir)
    return makeMessage("ke_compile: the MLIR text is null");
  llvm::Expected<ModuleContents> contents = compileText(
      llvm::StringRef(mlir, size), source_name ? source_name : "input.mlir",
      target ? target : "cpu", database_path ? database_path : "");
  if (!contents)
    return makeMessage(contents.takeError());
  return createModule(std::move(*contents), result);
}

const char *ke_module_get_remarks(const ke_module *module) {
  return module ? module->loaded->getContents().remarks.c_str() : "";
}

char *ke_module_save(const ke_module *module, const char *path) {
  if (!module || !path)
    return makeMessage("ke_module_save: null module or path");
  std::error_code code;
  llvm::raw_fd_ostream os(path, code, llvm::sys::fs::OF_None);
  if (code)
    return makeMessage(llvm::Twine("cannot write '") + path +
                       "': " + code.message());
  os << serializeModule(module->loaded->getContents());
  os.close();
  if (os.has_error())
    return makeMessage(llvm::Twine("cannot write '") + path +
                       "': " + os.error().message());
  return nullptr;
}

char *ke_module_load(const char *path, ke_module **result) {
  if (!result)
    return makeMessage("ke_module_load: result is null");
  *result = nullptr;
  if (!path)
    return makeMessage("ke_module_load: the path is null");
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file)
    return makeMessage(llvm::Twine("cannot read '") + path +
                       "': " + file.getError().message());
  llvm::Expected<ModuleContents> contents =
      deserializeModule((*file)->getBuffer());
  if (!contents)
    return makeMessage(llvm::Twine(path) + ": " +
                       llvm::toString(contents.takeError()));
  return createModule(std::move(*contents), result);
}

void ke_module_destroy(ke_module *module) { delete module; }

size_t ke_module_get_num_functions(const ke_module *module) {
  return module ? module->functions.size() : 0;
}

const char *ke_module_get_function_name(const ke_module *module, size_t i) {
  if (!module || i >= module->functions.size())
    return nullptr;
  return module->functions[i].signature.name.c_str();
}

char *ke_module_lookup(ke_module *module, const char *name,
                       ke_function **result) {
  if (!result)
    return makeMessage("ke_module_lookup: result is null");
  *result = nullptr;
  if (!module)
    return makeMessage("ke_module_lookup: the module is null");
  if (!name) {
    if (module->functions.size() != 1)
      return makeMessage("the module has " +
                         llvm::Twine(module->functions.size()) +
                         " functions: name the one to call");
    *result = &module->functions.front();
    return nullptr;
  }
  for (ke_function &function : module->functions)
    if (function.signature.name == name) {
      *result = &function;
      return nullptr;
    }
  std::string names;
  for (const ke_function &function : module->functions)
    names += (names.empty() ? "" : ", ") + function.signature.name;
  return makeMessage(llvm::Twine("no function '") + name +
                     "' in the module (it has: " + names + ")");
}

size_t ke_function_get_num_inputs(const ke_function *function) {
  return function ? function->signature.inputs.size() : 0;
}

size_t ke_function_get_num_results(const ke_function *function) {
  return function ? function->signature.results.size() : 0;
}

/// Argument `i` of the call (inputs, then results), or null.
static const ArgumentType *getArgument(const ke_function *function, size_t i) {
  if (!function)
    return nullptr;
  const FunctionSignature &signature = function->signature;
  if (i < signature.inputs.size())
    return &signature.inputs[i];
  i -= signature.inputs.size();
  return i < signature.results.size() ? &signature.results[i] : nullptr;
}

size_t ke_function_get_arg_rank(const ke_function *function, size_t i) {
  const ArgumentType *type = getArgument(function, i);
  return type ? type->shape.size() : 0;
}

const int64_t *ke_function_get_arg_shape(const ke_function *function,
                                         size_t i) {
  const ArgumentType *type = getArgument(function, i);
  return type ? type->shape.data() : nullptr;
}

const char *ke_function_get_arg_element_type(const ke_function *function,
                                             size_t i) {
  const ArgumentType *type = getArgument(function, i);
  return type ? type->elementType.c_str() : nullptr;
}

char *ke_function_call(const ke_function *function, void *const *descriptors,
                       size_t count) {
  if (!function)
    return makeMessage("ke_function_call: the function is null");
  if (llvm::Error error = callFunction(function->entry, function->signature,
                                       descriptors, count))
    return makeMessage(std::move(error));
  return nullptr;
}

} // extern "C"
