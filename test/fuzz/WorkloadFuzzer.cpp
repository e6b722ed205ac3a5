//===- WorkloadFuzzer.cpp - libFuzzer over parsing + workload extraction --===//
//
// Any input must either fail to parse (a diagnostic, swallowed here) or yield
// workloads whose keys, flops, bytes and JSON can be computed without a crash,
// and without leaking memory (LeakSanitizer is on; see RunFuzzer.cmake).
//
//===----------------------------------------------------------------------===//

#include "ke/InitAll/InitAll.h"
#include "ke/Support/CrashSafety.h"
#include "ke/Workload/Workload.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>

using namespace mlir;

// LeakSanitizer's per-thread switch (compiler-rt's lsan_interface.h): what
// is allocated between disable and enable is never reported as a leak.
extern "C" void __lsan_disable();
extern "C" void __lsan_enable();

namespace {
/// The dialects every input parses with, built once.
const DialectRegistry &getRegistry() {
  static DialectRegistry *registry = [] {
    auto *r = new DialectRegistry();
    ke::registerKeDialects(*r);
    return r;
  }();
  return *registry;
}

/// Parses `text` in a fresh context under crash recovery, as ke-opt does:
/// some upstream op parsers crash on malformed input (see
/// ke/Support/CrashSafety.h). Returns false when the parser crashed.
bool parseCrashSafely(const std::string &text,
                      std::unique_ptr<MLIRContext> &context,
                      OwningOpRef<ModuleOp> &module) {
  // A fresh context per input: nothing interned by one input changes how the
  // next one parses, and memory does not grow over a long run.
  context = std::make_unique<MLIRContext>(getRegistry(),
                                          MLIRContext::Threading::DISABLED);
  context->getDiagEngine().registerHandler([](Diagnostic &) { return success(); });
  return ke::runCrashSafely([&] {
    module = parseSourceString<ModuleOp>(text, ParserConfig(context.get()));
  });
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // The MLIR lexer expects a NUL after the buffer, as files read through
  // MemoryBuffer have; libFuzzer's data has none, so copy it into a string.
  std::string text(reinterpret_cast<const char *>(data), size);

  // A recovered crash unwinds past the parser's frames, and what they owned
  // (StringMap buckets, SmallVector buffers) is abandoned: a leak by design,
  // inside upstream code. So the first parse is a probe with LeakSanitizer
  // off for this thread. An input that crashes the parser is rejected (kept
  // out of the corpus) with exactly that parse's memory unreported. Any
  // other input is parsed again with leak detection on, so that leaks in
  // parsing, workload extraction and ke's printers are all still caught.
  {
    std::unique_ptr<MLIRContext> probeContext;
    OwningOpRef<ModuleOp> probeModule;
    __lsan_disable();
    bool parsed = parseCrashSafely(text, probeContext, probeModule);
    __lsan_enable();
    if (!parsed)
      return -1; // The probe's context is still destroyed (as ke-opt's is).
  }

  std::unique_ptr<MLIRContext> context;
  OwningOpRef<ModuleOp> module;
  if (!parseCrashSafely(text, context, module))
    return -1; // Not reached: the probe parsed the same text.
  if (!module)
    return 0;
  std::vector<ke::Workload> workloads;
  ke::collectWorkloads(*module, workloads);
  llvm::raw_null_ostream sink;
  for (const ke::Workload &workload : workloads) {
    ke::printWorkloadJSON(workload, sink);
    sink << ke::getCanonicalSignature(workload.firstOp);
  }
  return 0;
}
