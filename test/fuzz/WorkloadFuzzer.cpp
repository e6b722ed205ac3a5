//===- WorkloadFuzzer.cpp - libFuzzer over parsing + workload extraction --===//
//
// Any input must either fail to parse (a diagnostic, swallowed here) or yield
// workloads whose keys, flops, bytes and JSON can be computed without a crash.
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

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static DialectRegistry *registry = [] {
    auto *r = new DialectRegistry();
    ke::registerKeDialects(*r);
    return r;
  }();
  // A fresh context per input: nothing interned by one input changes how the
  // next one parses, and memory does not grow over a long run.
  MLIRContext context(*registry, MLIRContext::Threading::DISABLED);
  ScopedDiagnosticHandler ignoreDiagnostics(&context,
                                            [](Diagnostic &) { return success(); });
  // The MLIR lexer expects a NUL after the buffer, as files read through
  // MemoryBuffer have; libFuzzer's data has none, so copy it into a string.
  std::string text(reinterpret_cast<const char *>(data), size);
  // ke-opt parses under crash recovery because some upstream op parsers
  // crash on malformed input (see ke/Support/CrashSafety.h); do the same, and
  // keep such inputs out of the corpus.
  OwningOpRef<ModuleOp> module;
  if (!ke::runCrashSafely([&] {
        module = parseSourceString<ModuleOp>(text, ParserConfig(&context));
      }))
    return -1;
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
