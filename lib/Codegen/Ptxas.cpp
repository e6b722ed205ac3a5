//===- Ptxas.cpp - Assembling PTX with NVIDIA's ptxas ---------------------===//

#include "ke/Codegen/Ptxas.h"

#include "ExternalTool.h"

#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"

using namespace mlir;
using namespace ke;

std::string ke::findPtxas() {
  if (std::optional<std::string> path =
          llvm::sys::Process::GetEnv("KE_PTXAS");
      path && !path->empty())
    return *path;
  if (llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName("ptxas"))
    return *found;
  return "";
}

llvm::SmallVector<PtxasKernelReport> ke::parsePtxasReport(llvm::StringRef log) {
  llvm::SmallVector<PtxasKernelReport> reports;
  llvm::Regex function("Compiling entry function '([^']+)'");
  llvm::Regex spills("([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads");
  llvm::Regex usage("Used ([0-9]+) registers");
  llvm::Regex smem("([0-9]+) bytes smem");
  llvm::SmallVector<llvm::StringRef> lines, m;
  log.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    if (function.match(line, &m)) {
      reports.push_back({m[1].str()});
      continue;
    }
    if (reports.empty())
      continue;
    PtxasKernelReport &r = reports.back();
    if (spills.match(line, &m)) {
      m[1].getAsInteger(10, r.spillStoreBytes);
      m[2].getAsInteger(10, r.spillLoadBytes);
    }
    if (usage.match(line, &m))
      m[1].getAsInteger(10, r.registers);
    if (smem.match(line, &m))
      m[1].getAsInteger(10, r.sharedMemoryBytes);
  }
  return reports;
}

FailureOr<std::string> ke::assemblePtx(llvm::StringRef ptx,
                                       llvm::StringRef chip,
                                       std::string &log) {
  std::string ptxas = findPtxas();
  if (ptxas.empty()) {
    log = "ptxas not found (set $KE_PTXAS or put ptxas on PATH)";
    return failure();
  }
  ExternalTool tool{ptxas, "ptxas", "ptx", "cubin", "cubin"};
  return runExternalTool(
      tool, ptx,
      [&](llvm::StringRef input, llvm::StringRef output) {
        return llvm::SmallVector<std::string>{
            ptxas, ("-arch=" + chip).str(), "-v", "-O3", input.str(), "-o",
            output.str()};
      },
      log);
}
