//===- WorkloadsCommand.cpp - ke-opt workloads ----------------------------===//
//
// Prints one JSON object per line and workload, merged by key across all
// inputs. A file that fails to load is reported with its location; the
// others are still printed, and the exit code is 1.
//
//===----------------------------------------------------------------------===//

#include "Subcommands.h"

#include "ke/InitAll/InitAll.h"
#include "ke/Support/InputFile.h"
#include "ke/Workload/Workload.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

using namespace mlir;
namespace cl = llvm::cl;

llvm::cl::SubCommand ke::workloadsCommand(
    "workloads",
    "Print the tuning workloads of MLIR files: one JSON object per line with "
    "key, op, kind, count, shapes, element types, flops, bytes and fusable "
    "neighbours");

static cl::list<std::string>
    inputFiles(cl::Positional, cl::OneOrMore, cl::desc("<input.mlir>..."),
               cl::sub(ke::workloadsCommand));
static cl::opt<bool> printSignatures(
    "print-signatures",
    cl::desc("Add the canonical signature that each key hashes"),
    cl::sub(ke::workloadsCommand));

int ke::runWorkloadsCommand() {
  DialectRegistry registry;
  registerKeDialects(registry);
  MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  llvm::SmallVector<OwningOpRef<ModuleOp>> modules;
  std::vector<Workload> workloads;
  bool failed = false;
  for (const std::string &file : inputFiles) {
    OwningOpRef<ModuleOp> module = parseInputFile(file, context, sourceMgr);
    if (!module) {
      failed = true;
      continue;
    }
    collectWorkloads(*module, workloads);
    modules.push_back(std::move(module)); // workloads point into the IR
  }

  if (workloads.empty() && !failed)
    llvm::errs() << "ke-opt workloads: remark: no linalg ops in the input; "
                    "nothing to tune\n";
  for (const Workload &workload : workloads) {
    if (!printSignatures) {
      printWorkloadJSON(workload, llvm::outs());
    } else {
      // Re-emit the object with the signature appended.
      std::string text;
      llvm::raw_string_ostream os(text);
      printWorkloadJSON(workload, os);
      text.pop_back(); // the closing brace
      llvm::outs() << text << ",\"signature\":"
                   << llvm::json::Value(getCanonicalSignature(workload.firstOp))
                   << "}";
    }
    llvm::outs() << '\n';
  }
  return failed ? 1 : 0;
}
