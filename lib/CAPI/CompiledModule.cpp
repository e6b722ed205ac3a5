//===- CompiledModule.cpp - Saving, loading and calling compiled code -----===//
//
// A compiled module is kept as the object file compileModule emits (the same
// code `ke-opt compile` writes), linked into an ORC LLJIT for calls. Saving
// writes that object with the signatures beside it; loading links it again,
// so a saved model needs no MLIR and no compiler, only this library.
//
//===----------------------------------------------------------------------===//

#include "CompiledModule.h"

#include "ke/Codegen/LLVMTargets.h"
#include "ke/Runtime/CpuExecutable.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <array>
#include <dlfcn.h>
#include <type_traits>
#include <utility>

using namespace ke;
using namespace ke::capi;
using llvm::createStringError;
using llvm::inconvertibleErrorCode;

static constexpr llvm::StringLiteral kMagic = "ke-cpu-module 1\n";

//===----------------------------------------------------------------------===//
// The file format
//===----------------------------------------------------------------------===//

// In ke::capi, where llvm::json's templates find them by argument-dependent
// lookup.
namespace ke::capi {
static llvm::json::Value toJSON(const ArgumentType &type) {
  return llvm::json::Object{{"shape", llvm::json::Array(type.shape)},
                            {"dtype", type.elementType}};
}

static bool fromJSON(const llvm::json::Value &value, ArgumentType &type,
                     llvm::json::Path path) {
  llvm::json::ObjectMapper mapper(value, path);
  std::vector<int64_t> shape;
  if (!mapper || !mapper.map("shape", shape) ||
      !mapper.map("dtype", type.elementType))
    return false;
  type.shape.assign(shape.begin(), shape.end());
  return true;
}

static llvm::json::Value toJSON(const FunctionSignature &signature) {
  llvm::json::Array inputs, results;
  for (const ArgumentType &type : signature.inputs)
    inputs.push_back(toJSON(type));
  for (const ArgumentType &type : signature.results)
    results.push_back(toJSON(type));
  return llvm::json::Object{{"name", signature.name},
                            {"inputs", std::move(inputs)},
                            {"results", std::move(results)}};
}

static bool fromJSON(const llvm::json::Value &value,
                     FunctionSignature &signature, llvm::json::Path path) {
  llvm::json::ObjectMapper mapper(value, path);
  return mapper && mapper.map("name", signature.name) &&
         mapper.map("inputs", signature.inputs) &&
         mapper.map("results", signature.results);
}

} // namespace ke::capi

std::string capi::serializeModule(const ModuleContents &contents) {
  llvm::json::Array functions;
  for (const FunctionSignature &signature : contents.functions)
    functions.push_back(toJSON(signature));
  llvm::json::Object header{{"triple", contents.triple},
                            {"chip", contents.chip},
                            {"functions", std::move(functions)},
                            {"object_size", int64_t(contents.object.size())}};
  std::string bytes = kMagic.str();
  llvm::raw_string_ostream os(bytes);
  os << llvm::json::Value(std::move(header)) << "\n";
  os << contents.object;
  return bytes;
}

llvm::Expected<ModuleContents> capi::deserializeModule(llvm::StringRef bytes) {
  if (!bytes.consume_front(kMagic))
    return createStringError(inconvertibleErrorCode(),
                             "not a module saved by ke (no '" +
                                 kMagic.drop_back() + "' header)");
  auto [line, object] = bytes.split('\n');
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(line);
  if (!json)
    return createStringError(inconvertibleErrorCode(),
                             "corrupt ke module header: " +
                                 llvm::toString(json.takeError()));
  ModuleContents contents;
  int64_t objectSize = -1;
  llvm::json::Path::Root root("header");
  llvm::json::ObjectMapper mapper(*json, root);
  if (!mapper || !mapper.map("triple", contents.triple) ||
      !mapper.map("chip", contents.chip) ||
      !mapper.map("functions", contents.functions) ||
      !mapper.map("object_size", objectSize))
    return createStringError(inconvertibleErrorCode(),
                             "corrupt ke module header: " +
                                 llvm::toString(root.getError()));
  if (objectSize != int64_t(object.size()))
    return createStringError(inconvertibleErrorCode(),
                             "truncated ke module: the header announces " +
                                 llvm::Twine(objectSize) +
                                 " bytes of object code, the file has " +
                                 llvm::Twine(object.size()));
  contents.object = object.str();
  return contents;
}

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

/// LLVM's OpenMP runtime, opened once and privately (RTLD_LOCAL): the host
/// process may have another OpenMP runtime (PyTorch's libgomp), and a
/// global libomp would take over its GOMP_* symbols. Null when absent.
static void *openOpenMPRuntime() {
  static void *handle = []() -> void * {
    std::optional<std::string> path = findOpenMPRuntime();
    return path ? dlopen(path->c_str(), RTLD_NOW | RTLD_LOCAL) : nullptr;
  }();
  return handle;
}

/// Refuses an object for another architecture or CPU than this host's:
/// its code would die on an illegal instruction.
static llvm::Error checkHost(const ModuleContents &contents) {
  llvm::Triple host(llvm::sys::getProcessTriple());
  llvm::Triple object(contents.triple);
  if (host.getArch() != object.getArch())
    return createStringError(inconvertibleErrorCode(),
                             "the module was compiled for " + contents.triple +
                                 ", this machine is " + host.str());
  std::string hostChip = llvm::sys::getHostCPUName().str();
  if (!contents.chip.empty() && contents.chip != hostChip)
    return createStringError(inconvertibleErrorCode(),
                             "the module was compiled for the CPU '" +
                                 contents.chip + "', this machine's is '" +
                                 hostChip + "': compile it here");
  return llvm::Error::success();
}

LoadedModule::~LoadedModule() = default;

llvm::Expected<std::unique_ptr<LoadedModule>>
LoadedModule::create(ModuleContents contents) {
  if (llvm::Error error = checkHost(contents))
    return std::move(error);
  // A process that only loads saved modules has compiled nothing, so no
  // LLVM target is registered yet.
  initializeKeLLVMTargets();
  auto machine = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!machine)
    return machine.takeError();
  auto jit = llvm::orc::LLJITBuilder()
                 .setJITTargetMachineBuilder(std::move(*machine))
                 .create();
  if (!jit)
    return jit.takeError();
  llvm::orc::JITDylib &main = (*jit)->getMainJITDylib();
  char prefix = (*jit)->getDataLayout().getGlobalPrefix();
  auto process =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix);
  if (!process)
    return process.takeError();
  main.addGenerator(std::move(*process));
  if (void *openmp = openOpenMPRuntime())
    main.addGenerator(
        std::make_unique<llvm::orc::DynamicLibrarySearchGenerator>(
            llvm::sys::DynamicLibrary(openmp), prefix));
  llvm::orc::MangleAndInterner mangle(main.getExecutionSession(),
                                      (*jit)->getDataLayout());
  llvm::orc::SymbolMap runtime;
  runtime[mangle("memrefCopy")] = {
      llvm::orc::ExecutorAddr::fromPtr(getMemrefCopyFunction()),
      llvm::JITSymbolFlags::Exported};
  if (llvm::Error error =
          main.define(llvm::orc::absoluteSymbols(std::move(runtime))))
    return std::move(error);

  if (llvm::Error error = (*jit)->addObjectFile(
          llvm::MemoryBuffer::getMemBufferCopy(contents.object, "ke-module")))
    return std::move(error);

  std::unique_ptr<LoadedModule> loaded(new LoadedModule());
  for (const FunctionSignature &signature : contents.functions) {
    auto entry = (*jit)->lookup("_mlir_ciface_" + signature.name);
    if (!entry) {
      std::string message = llvm::toString(entry.takeError());
      if (llvm::StringRef(message).contains("__kmpc") && !openOpenMPRuntime())
        message += " (the code uses OpenMP threads: install LLVM's OpenMP "
                   "runtime, libomp-22-dev, or set KE_LIBOMP)";
      return createStringError(inconvertibleErrorCode(), message);
    }
    loaded->entries.push_back(entry->toPtr<void *>());
  }
  loaded->jit = std::move(*jit);
  loaded->contents = std::move(contents);
  return loaded;
}

//===----------------------------------------------------------------------===//
// Calling
//===----------------------------------------------------------------------===//

namespace {
/// The most memref arguments a call takes (inputs and results).
constexpr size_t kMaxArguments = 64;

/// Calls a C function of N pointer arguments (memref descriptors).
using Caller = void (*)(void *entry, void *const *args);

template <size_t... I>
void callWithPointers(void *entry, void *const *args,
                      std::index_sequence<I...>) {
  using Function = void (*)(
      std::conditional_t<true, void *, std::integral_constant<size_t, I>>...);
  reinterpret_cast<Function>(entry)(args[I]...);
}

template <size_t N> void callWithPointers(void *entry, void *const *args) {
  callWithPointers(entry, args, std::make_index_sequence<N>());
}

template <size_t... N>
constexpr std::array<Caller, sizeof...(N)>
makeCallers(std::index_sequence<N...>) {
  return {&callWithPointers<N>...};
}

/// The caller for each argument count, 0 to kMaxArguments.
constexpr std::array<Caller, kMaxArguments + 1> kCallers =
    makeCallers(std::make_index_sequence<kMaxArguments + 1>());

/// Why descriptor `index` does not fit `type`, or "" when it does.
std::string checkDescriptor(const int64_t *descriptor,
                            const ArgumentType &type) {
  int64_t rank = type.shape.size();
  const int64_t *sizes = descriptor + 3, *strides = descriptor + 3 + rank;
  int64_t elements = 1;
  for (int64_t d = 0; d < rank; ++d)
    elements *= type.shape[d];
  std::string message;
  llvm::raw_string_ostream os(message);
  for (int64_t d = 0; d < rank; ++d)
    if (sizes[d] != type.shape[d]) {
      os << "has sizes [";
      llvm::interleaveComma(llvm::ArrayRef(sizes, rank), os);
      os << "], expected [";
      llvm::interleaveComma(type.shape, os);
      os << "]";
      return message;
    }
  int64_t expected = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (type.shape[d] != 1 && strides[d] != expected) {
      os << "is not contiguous (stride " << strides[d] << " in dimension " << d
         << ", expected " << expected << ")";
      return message;
    }
    expected *= type.shape[d];
  }
  if (elements > 0 && descriptor[1] == 0)
    os << "has a null data pointer";
  return message;
}
} // namespace

llvm::Error capi::callFunction(void *entry, const FunctionSignature &signature,
                               void *const *descriptors, size_t count) {
  size_t expected = signature.inputs.size() + signature.results.size();
  if (count != expected)
    return createStringError(
        inconvertibleErrorCode(),
        "function '" + signature.name + "' takes " + llvm::Twine(expected) +
            " buffers (inputs, then results), got " + llvm::Twine(count));
  if (count > kMaxArguments)
    return createStringError(inconvertibleErrorCode(),
                             "function '" + signature.name + "' has " +
                                 llvm::Twine(count) +
                                 " memref arguments; ke calls at most " +
                                 llvm::Twine(kMaxArguments));
  if (count > 0 && !descriptors)
    return createStringError(inconvertibleErrorCode(), "no descriptors given");
  for (size_t i = 0; i < count; ++i) {
    bool isInput = i < signature.inputs.size();
    const ArgumentType &type =
        isInput ? signature.inputs[i]
                : signature.results[i - signature.inputs.size()];
    std::string problem =
        descriptors[i] ? checkDescriptor(
                             static_cast<const int64_t *>(descriptors[i]), type)
                       : "is null";
    if (!problem.empty())
      return createStringError(
          inconvertibleErrorCode(),
          llvm::Twine(isInput ? "input " : "result ") +
              llvm::Twine(isInput ? i : i - signature.inputs.size()) + " of '" +
              signature.name + "' " + problem);
  }
  kCallers[count](entry, descriptors);
  return llvm::Error::success();
}
