//===- CompileCommand.cpp - ke-opt compile --------------------------------===//
//
// `ke-opt compile IN.mlir --target T [--db PATH] [-o OUT] [--emit=KIND]`:
// compiles the module with its tuned schedules by compileModule
// (ke/Compiler/Compiler.h) and writes what it produces: an object file (or
// an earlier stage, --emit) for CPU targets, PTX and cubins or HSA code
// objects for GPU targets. See docs/compile.md.
//
//===----------------------------------------------------------------------===//

#include "Subcommands.h"
#include "ToolSupport.h"

#include "ke/Codegen/CpuPipeline.h"
#include "ke/Codegen/GpuPipeline.h"
#include "ke/Compiler/Compiler.h"
#include "ke/Support/CrashSafety.h"
#include "ke/Support/InputFile.h"
#include "ke/TunedSchedules/TunedSchedules.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace ke;
namespace cl = llvm::cl;

namespace {

cl::opt<std::string> outputFile("o",
                                cl::desc("Output file (default: the "
                                         "input's name with .o for "
                                         "objects, stdout otherwise)"),
                                cl::value_desc("file"),
                                cl::sub(getCompileCommand()));
cl::opt<CompileStage> emitKind(
    "emit", cl::desc("What to write"), cl::init(CompileStage::Obj),
    cl::values(
        clEnumValN(CompileStage::Scheduled, "scheduled",
                   "the input with the schedules applied (MLIR on tensors)"),
        clEnumValN(CompileStage::Mlir, "mlir", "the LLVM dialect"),
        clEnumValN(CompileStage::Llvm, "llvm", "optimized LLVM IR"),
        clEnumValN(CompileStage::Asm, "asm", "assembly"),
        clEnumValN(CompileStage::Obj, "obj", "an object file (default)"),
        clEnumValN(CompileStage::SharedLibrary, "so",
                   "cuda targets: the whole model as one shared library "
                   "(ke-c/ke_model.h); the default when -o ends in .so")),
    cl::sub(getCompileCommand()));

cl::opt<bool> printPipelineHash(
    "print-pipeline-hash",
    cl::desc("Print the hash of the target's lowering pipeline (records "
             "made under another hash are not applied) and exit"),
    cl::sub(getCompileCommand()));

cl::opt<bool> printPipelineText(
    "print-pipeline",
    cl::desc("Print the target's lowering pipeline, the text its pipeline "
             "hash covers (every step and pass option), and exit"),
    cl::sub(getCompileCommand()));

cl::opt<bool> useOpenMP(
    "openmp",
    cl::desc("Run the loops of schedules with threads on OpenMP (the object "
             "then needs LLVM's libomp); --openmp=false makes them "
             "sequential (default: true)"),
    cl::init(true), cl::sub(getCompileCommand()));

cl::opt<bool> referenceOnly(
    "reference",
    cl::desc("Apply no schedule: linalg ops become plain loops, the "
             "reference that candidates are checked against (cpu targets)"),
    cl::sub(getCompileCommand()));

llvm::raw_ostream &error() { return subcommandError("compile"); }

/// The database to read (resolveDatabasePath): empty for default schedules
/// only, std::nullopt after an error.
std::optional<std::string> resolveDatabase() {
  llvm::Expected<std::string> path = resolveDatabasePath(dbOption);
  if (!path) {
    error() << llvm::toString(path.takeError()) << "\n";
    return std::nullopt;
  }
  return *path;
}

/// Where the output goes when -o is not given.
std::string defaultOutput(llvm::StringRef input) {
  if (emitKind != CompileStage::Obj && emitKind != CompileStage::SharedLibrary)
    return "-";
  TargetFamily family = parseTargetOption("compile")->family;
  if (family != TargetFamily::Cpu) {
    llvm::StringRef extension = emitKind == CompileStage::SharedLibrary ? "so"
                                : family == TargetFamily::Cuda      ? "ptx"
                                                                    : "hsaco";
    llvm::SmallString<128> path(llvm::sys::path::filename(input));
    llvm::sys::path::replace_extension(path, extension);
    return input == "-" ? ("a." + extension).str() : path.str().str();
  }
  if (input == "-")
    return "a.o";
  llvm::SmallString<128> path(llvm::sys::path::filename(input));
  llvm::sys::path::replace_extension(path, "o");
  return path.str().str();
}

/// Writes the HSA code object of kernel group `index` of `count`: to the
/// output itself when there is one group, else to OUT's stem .<index>.hsaco
/// (one code object per group: each group is its own gpu.module), and the
/// output lists the groups, their launches and files. Returns false after
/// an error.
bool writeHsaco(const GpuKernelBinary &binary, llvm::StringRef path,
                size_t index, size_t count, llvm::ToolOutputFile &output) {
  if (count == 1) {
    output.os() << binary.image;
    return true;
  }
  if (path == "-") {
    error() << "several kernel groups need one file each: give -o FILE\n";
    return false;
  }
  llvm::SmallString<128> file(path);
  llvm::sys::path::replace_extension(file, "");
  file += llvm::formatv(".{0}.hsaco", index).str();
  std::string message;
  std::unique_ptr<llvm::ToolOutputFile> out = openOutputFile(file, &message);
  if (!out) {
    error() << message << "\n";
    return false;
  }
  out->os() << binary.image;
  out->keep();
  for (const GpuLaunch &launch : binary.launches)
    output.os() << llvm::formatv(
        "// launch {0} grid {1}x{2}x{3} block {4}x{5}x{6}\n",
        launch.kernelName, launch.grid[0], launch.grid[1], launch.grid[2],
        launch.block[0], launch.block[1], launch.block[2]);
  output.os() << "// code object " << file << "\n";
  return true;
}

/// Writes the GPU kernels of `compiled` to `output` (at `path`).
/// CUDA: the output holds one PTX module per group, each after a
/// `// -----// workload KEY` line and a line per launch; with one group it
/// is a plain PTX file. When ptxas is available, OUT.cubin (OUT.<i>.cubin
/// for group i of several) is written too, and each group's registers and
/// spills go to stderr.
/// ROCm: the output is the HSA code object (writeHsaco), or with --emit=asm
/// the AMDGCN assembly laid out like the PTX; each kernel's registers, LDS
/// and scratch go to stderr. Returns false after an error.
bool writeGpuKernels(const CompiledModule &compiled,
                     const TargetDescription &target, llvm::StringRef path,
                     llvm::ToolOutputFile &output) {
  size_t count = compiled.gpuKernels.size();
  for (auto [index, kernel] : llvm::enumerate(compiled.gpuKernels)) {
    if (emitKind == CompileStage::Scheduled ||
        emitKind == CompileStage::Mlir) {
      output.os() << "// -----// workload " << kernel.workloadKey << "\n"
                  << kernel.mlir << "\n";
      continue;
    }
    const GpuKernelBinary &binary = kernel.binary;
    if (target.family == TargetFamily::Rocm) {
      llvm::errs() << llvm::formatv("ke: workload {0} {1} ({2}):\n",
                                    kernel.workloadKey, kernel.opName,
                                    kernel.ruleName)
                   << binary.assemblerLog;
      if (emitKind == CompileStage::Obj) {
        if (count > 1)
          output.os() << "// -----// workload " << kernel.workloadKey << " "
                      << kernel.opName << " " << kernel.ruleName << "\n";
        if (!writeHsaco(binary, path, index, count, output))
          return false;
        continue;
      }
    }
    if (count > 1) {
      output.os() << "// -----// workload " << kernel.workloadKey << " "
                  << kernel.opName << " " << kernel.ruleName << "\n";
      for (const GpuLaunch &launch : binary.launches)
        output.os() << llvm::formatv(
            "// launch {0} grid {1}x{2}x{3} block {4}x{5}x{6}\n",
            launch.kernelName, launch.grid[0], launch.grid[1], launch.grid[2],
            launch.block[0], launch.block[1], launch.block[2]);
    }
    output.os() << binary.assembly;
    if (binary.format != "cubin")
      continue;
    std::string cubin =
        path == "-" ? ""
        : count > 1 ? llvm::formatv("{0}.{1}.cubin", path, index).str()
                    : (path + ".cubin").str();
    llvm::errs() << llvm::formatv(
        "ke: workload {0} {1} ({2}): {3} registers, {4} bytes spill stores, "
        "{5} bytes spill loads\n",
        kernel.workloadKey, kernel.opName, kernel.ruleName, binary.registers,
        binary.spillStoreBytes, binary.spillLoadBytes);
    if (cubin.empty())
      continue;
    std::string message;
    std::unique_ptr<llvm::ToolOutputFile> file =
        openOutputFile(cubin, &message);
    if (!file) {
      error() << message << "\n";
      return false;
    }
    file->os() << binary.image;
    file->keep();
  }
  return true;
}

} // namespace

int ke::runCompileCommand() {
  if (printPipelineHash || printPipelineText) {
    std::optional<TargetDescription> target = parseTargetOption("compile");
    if (!target)
      return 1;
    if (printPipelineText) {
      CpuLoweringOptions hashed; // as getCpuPipelineHash prints it
      hashed.numThreads = 1;
      llvm::outs() << (target->isCpu() ? getCpuLoweringPipeline(hashed)
                                       : getGpuPipelineText(*target))
                   << "\n";
    }
    if (printPipelineHash)
      llvm::outs() << getPipelineHash(*target) << "\n";
    return 0;
  }
  if (!requireInputFiles("compile"))
    return 1;
  if (inputFiles.size() != 1) {
    error() << "compile takes one input file, got " << inputFiles.size()
            << "\n";
    return 1;
  }
  std::optional<TargetDescription> target = parseTargetOption("compile");
  if (!target)
    return 1;
  if (referenceOnly && target->isGpu()) {
    error() << "--reference compiles for cpu targets only\n";
    return 1;
  }
  std::optional<std::string> database = resolveDatabase();
  if (!database)
    return 1;

  std::unique_ptr<MLIRContext> context = createToolContext();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, context.get());
  OwningOpRef<ModuleOp> module =
      parseInputFile(inputFiles.front(), *context, sourceMgr);
  if (!module)
    return 1;

  // Opened first so that a bad path fails before any work; the file is
  // removed again unless everything succeeds.
  std::string path =
      outputFile.empty() ? defaultOutput(inputFiles.front()) : outputFile;
  std::string message;
  std::unique_ptr<llvm::ToolOutputFile> output = openOutputFile(path, &message);
  if (!output) {
    error() << message << "\n";
    return 1;
  }

  CompileOptions options;
  options.databasePath = *database;
  options.stage = emitKind;
  // `-o model.so` for a GPU target asks for the whole model.
  if (!emitKind.getNumOccurrences() && target->isGpu() &&
      llvm::StringRef(path).ends_with(".so"))
    options.stage = CompileStage::SharedLibrary;
  options.openmp = useOpenMP;
  options.reference = referenceOnly;
  options.prepareGraph = !noPrepareGraphOption;
  options.graphPreparation = getGraphPreparationOptions();
  // An upstream crash on some input (a transform, a lowering, the backend)
  // is an error with exit code 1, not a crash of the build.
  FailureOr<CompiledModule> compiled = failure();
  if (!runCrashSafely(
          [&] { compiled = compileModule(*module, *target, options); })) {
    error() << "MLIR or LLVM crashed while compiling '" << inputFiles.front()
            << "' for " << target->name
            << " (an upstream bug): see the errors above\n";
    return 1;
  }
  if (failed(compiled))
    return 1;
  if (options.stage == CompileStage::SharedLibrary)
    output->os() << compiled->sharedLibrary;
  else if (target->isCpu())
    output->os() << compiled->cpuCode;
  else if (!writeGpuKernels(*compiled, *target, path, *output))
    return 1;
  output->keep();
  return 0;
}
