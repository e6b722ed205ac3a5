//===- CompileCommand.cpp - ke-opt compile --------------------------------===//
//
// `ke-opt compile IN.mlir --target cpu [--db PATH] [-o OUT] [--emit=KIND]`:
// schedules every workload with its best record in the tuning database (or
// the default schedule; --ke-apply-tuned-schedules), lowers the module with
// ke's CPU pipeline (lowerModuleToLLVM), translates it to LLVM IR, optimizes
// it at -O3 for the target's triple, CPU and features, and writes an object
// file. --emit stops earlier. See docs/compile.md.
//
//===----------------------------------------------------------------------===//

#include "Subcommands.h"
#include "ToolSupport.h"

#include "ke/Codegen/CpuModuleLowering.h"
#include "ke/Codegen/CpuPipeline.h"
#include "ke/Codegen/GpuPipeline.h"
#include "ke/Database/Database.h"
#include "ke/Schedule/Schedule.h"
#include "ke/Workload/Kernel.h"
#include "ke/Workload/Workload.h"
#include "ke/Codegen/LLVMTargets.h"
#include "ke/Support/CrashSafety.h"
#include "ke/Support/InputFile.h"
#include "ke/Transforms/Passes.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;
using namespace ke;
namespace cl = llvm::cl;

namespace {

/// How far compile goes.
enum class EmitKind { Scheduled, Mlir, Llvm, Asm, Obj };

cl::opt<std::string> outputFile("o",
                                cl::desc("Output file (default: the "
                                         "input's name with .o for "
                                         "objects, stdout otherwise)"),
                                cl::value_desc("file"),
                                cl::sub(getCompileCommand()));
cl::opt<EmitKind> emitKind(
    "emit", cl::desc("What to write"), cl::init(EmitKind::Obj),
    cl::values(
        clEnumValN(EmitKind::Scheduled, "scheduled",
                   "the input with the schedules applied (MLIR on tensors)"),
        clEnumValN(EmitKind::Mlir, "mlir", "the LLVM dialect"),
        clEnumValN(EmitKind::Llvm, "llvm", "optimized LLVM IR"),
        clEnumValN(EmitKind::Asm, "asm", "assembly"),
        clEnumValN(EmitKind::Obj, "obj", "an object file (default)")),
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

/// The database to read: --db (which must exist), else $KE_DB (likewise),
/// else ke-tuning.db in the working directory when there is one. Empty:
/// default schedules only. std::nullopt after an error.
std::optional<std::string> resolveDatabase() {
  std::string path = dbOption;
  if (path.empty())
    path = llvm::sys::Process::GetEnv("KE_DB").value_or("");
  if (path.empty())
    return llvm::sys::fs::exists("ke-tuning.db") ? "ke-tuning.db" : "";
  if (!llvm::sys::fs::exists(path)) {
    error() << "tuning database '" << path << "' does not exist\n";
    return std::nullopt;
  }
  return path;
}

/// Where the output goes when -o is not given.
std::string defaultOutput(llvm::StringRef input) {
  if (emitKind != EmitKind::Obj)
    return "-";
  TargetFamily family = parseTargetOption("compile")->family;
  if (family != TargetFamily::Cpu) {
    llvm::StringRef extension = family == TargetFamily::Cuda ? "ptx" : "hsaco";
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

std::unique_ptr<llvm::TargetMachine>
createTargetMachine(const TargetDescription &target) {
  initializeKeLLVMTargets();
  llvm::Triple triple(target.triple);
  std::string message;
  const llvm::Target *llvmTarget =
      llvm::TargetRegistry::lookupTarget(triple, message);
  if (!llvmTarget) {
    error() << "no LLVM backend for '" << target.triple << "': " << message
            << "\n";
    return nullptr;
  }
  // Position-independent, so the object links into executables (PIE) and
  // shared libraries alike.
  std::unique_ptr<llvm::TargetMachine> machine(llvmTarget->createTargetMachine(
      triple, target.chip, target.features, llvm::TargetOptions(),
      llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    error() << "cannot create a target machine for '" << target.triple << "' ("
            << target.chip << ")\n";
  return machine;
}

/// Translates the LLVM-dialect module, optimizes it and writes what --emit
/// asks for. Returns the exit code.
int emitCode(ModuleOp module, const TargetDescription &target,
             llvm::ToolOutputFile &output) {
  std::unique_ptr<llvm::TargetMachine> machine = createTargetMachine(target);
  if (!machine)
    return 1;
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext);
  if (!llvmModule) {
    error() << "cannot translate the lowered module to LLVM IR (see the "
               "errors above)\n";
    return 1;
  }
  llvmModule->setTargetTriple(machine->getTargetTriple());
  llvmModule->setDataLayout(machine->createDataLayout());
  // Recorded on every function as well, so the LLVM IR (--emit=llvm)
  // describes its target on its own, as clang's does. Fixed-length SVE
  // (A64FX) goes on as vscale_range(N, N): the AArch64 backend then lowers
  // MLIR's fixed-length vectors to SVE registers (without it, to NEON), as
  // -aarch64-sve-vector-bits-min would, but per function and without
  // touching LLVM's global options. Scalable SVE (generic aarch64) gets
  // the architectural range vscale_range(1,16) (128 to 2048 bits): the
  // code's vectors are [N] x vscale wide and correct on every length.
  std::optional<unsigned> vscale = getFixedSveVscale(target);
  bool scalableSve = target.isCpu() && target.cpu.scalableVectors &&
                     StringRef(target.triple).starts_with("aarch64");
  for (llvm::Function &function : *llvmModule) {
    if (function.isDeclaration())
      continue;
    function.addFnAttr("target-cpu", target.chip);
    if (!target.features.empty())
      function.addFnAttr("target-features", target.features);
    if (vscale)
      function.addFnAttr(llvm::Attribute::getWithVScaleRangeArgs(
          llvmContext, *vscale, *vscale));
    else if (scalableSve)
      function.addFnAttr(
          llvm::Attribute::getWithVScaleRangeArgs(llvmContext, 1, 16));
  }
  if (llvm::Error err = makeOptimizingTransformer(
          /*optLevel=*/3, /*sizeLevel=*/0, machine.get())(llvmModule.get())) {
    error() << "LLVM optimization failed: " << llvm::toString(std::move(err))
            << "\n";
    return 1;
  }
  if (emitKind == EmitKind::Llvm) {
    llvmModule->print(output.os(), nullptr);
    return 0;
  }
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, output.os(), nullptr,
                                   emitKind == EmitKind::Asm
                                       ? llvm::CodeGenFileType::AssemblyFile
                                       : llvm::CodeGenFileType::ObjectFile)) {
    error() << "the LLVM backend for '" << target.triple
            << "' cannot emit this kind of file\n";
    return 1;
  }
  codegen.run(*llvmModule);
  return 0;
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

/// CUDA and ROCm: each kernel group (a workload's anchor with its fused
/// fills and consumer) gets its best record in the database or its default
/// schedule, and is lowered on its own (ke/Codegen/GpuPipeline.h).
/// CUDA: the output holds one PTX module per group, each after a
/// `// -----// workload KEY` line and a line per launch; with one group it
/// is a plain PTX file. When ptxas is available, OUT.cubin (OUT.<i>.cubin
/// for group i of several) is written too, and each group's registers and
/// spills go to stderr.
/// ROCm: the output is the HSA code object (writeHsaco), or with --emit=asm
/// the AMDGCN assembly laid out like the PTX; each kernel's registers, LDS
/// and scratch go to stderr.
int compileForGpu(ModuleOp module, const TargetDescription &target,
                   llvm::StringRef database, llvm::StringRef path,
                   llvm::ToolOutputFile &output) {
  std::unique_ptr<TuningDatabase> db;
  if (!database.empty()) {
    llvm::Expected<std::unique_ptr<TuningDatabase>> opened =
        TuningDatabase::openExisting(database);
    if (!opened) {
      error() << llvm::toString(opened.takeError()) << "\n";
      return 1;
    }
    db = std::move(*opened);
  }
  std::vector<Workload> workloads;
  collectWorkloads(module, workloads);
  llvm::erase_if(workloads, [&](const Workload &w) {
    return getFusingAnchor(w.firstOp, getKernelFusion(target.isGpu())) !=
           nullptr;
  });
  if (workloads.empty()) {
    error() << "'" << inputFiles.front() << "' has no workload to compile\n";
    return 1;
  }
  for (auto [index, workload] : llvm::enumerate(workloads)) {
    FailureOr<KernelModule> kernel = buildKernelModule(
        workload.firstOp, getKernelFusion(target.isGpu()));
    if (failed(kernel))
      return 1;
    Operation *anchor = findKernelAnchor(*kernel->module);
    // The best record under this lowering's hash, else the default, with a
    // remark that says which and why (as the CPU apply pass does).
    FailureOr<Schedule> schedule = failure();
    std::string why = "no tuning database given";
    if (db) {
      std::string hash = getGpuPipelineHash(target);
      llvm::Expected<std::optional<TuningRecord>> best =
          db->getBest(workload.key, target.name, hash);
      if (!best) {
        error() << "cannot read the tuning database '" << database
                << "': " << llvm::toString(best.takeError()) << "\n";
        return 1;
      }
      if (*best) {
        llvm::Expected<Schedule> tuned = scheduleFromKnobsText(
            (*best)->sketch, (*best)->knobs, anchor, target);
        if (tuned) {
          schedule = *tuned;
          emitRemark(workload.firstOp->getLoc(), "ke: applied tuned schedule ")
              << schedule->describe() << " (median "
              << llvm::formatv("{0:e3}", (*best)->medianSeconds)
              << " s, record from " << database << ")";
        } else {
          why = "the tuned record for workload " + workload.key +
                " does not fit this ke (" + llvm::toString(tuned.takeError()) +
                ")";
        }
      } else {
        llvm::Expected<std::string> miss =
            db->explainNoBest(workload.key, target.name, hash);
        if (!miss) {
          error() << "cannot read the tuning database '" << database
                  << "': " << llvm::toString(miss.takeError()) << "\n";
          return 1;
        }
        why = *miss;
      }
    }
    if (failed(schedule)) {
      schedule = getDefaultSchedule(anchor, target);
      if (failed(schedule))
        return 1;
      emitRemark(workload.firstOp->getLoc(), "ke: ")
          << why << "; applied the default schedule " << schedule->describe();
    }
    OwningOpRef<ModuleOp> script = parseScript(
        schedule->getScript(anchor, target), module.getContext());
    if (!script || failed(applySchedule(*kernel->module, *script)))
      return 1;
    if (emitKind == EmitKind::Scheduled) {
      output.os() << "// -----// workload " << workload.key << "\n"
                  << *kernel->module << "\n";
      continue;
    }
    FailureOr<GpuKernelBinary> binary =
        lowerKernelToGpuBinary(*kernel->module, target);
    if (failed(binary))
      return 1;
    if (emitKind == EmitKind::Mlir) {
      output.os() << "// -----// workload " << workload.key << "\n"
                  << *kernel->module << "\n";
      continue;
    }
    if (target.family == TargetFamily::Rocm) {
      llvm::errs() << llvm::formatv("ke: workload {0} {1} ({2}):\n",
                                    workload.key, workload.opName,
                                    schedule->rule->getName())
                   << binary->assemblerLog;
      if (emitKind == EmitKind::Obj) {
        if (workloads.size() > 1)
          output.os() << "// -----// workload " << workload.key << " "
                      << workload.opName << " " << schedule->rule->getName()
                      << "\n";
        if (!writeHsaco(*binary, path, index, workloads.size(), output))
          return 1;
        continue;
      }
    }
    if (workloads.size() > 1) {
      output.os() << "// -----// workload " << workload.key << " "
                  << workload.opName << " "
                  << schedule->rule->getName() << "\n";
      for (const GpuLaunch &launch : binary->launches)
        output.os() << llvm::formatv(
            "// launch {0} grid {1}x{2}x{3} block {4}x{5}x{6}\n",
            launch.kernelName, launch.grid[0], launch.grid[1], launch.grid[2],
            launch.block[0], launch.block[1], launch.block[2]);
    }
    output.os() << binary->assembly;
    if (binary->format != "cubin")
      continue;
    std::string cubin =
        path == "-" ? "" :
        workloads.size() > 1
            ? llvm::formatv("{0}.{1}.cubin", path, index).str()
            : (path + ".cubin").str();
    llvm::errs() << llvm::formatv(
        "ke: workload {0} {1} ({2}): {3} registers, {4} bytes spill stores, "
        "{5} bytes spill loads\n",
        workload.key, workload.opName, schedule->rule->getName(),
        binary->registers, binary->spillStoreBytes, binary->spillLoadBytes);
    if (cubin.empty())
      continue;
    std::string message;
    std::unique_ptr<llvm::ToolOutputFile> file =
        openOutputFile(cubin, &message);
    if (!file) {
      error() << message << "\n";
      return 1;
    }
    file->os() << binary->image;
    file->keep();
  }
  return 0;
}

/// Schedules, lowers and writes `module`. Returns the exit code.
int compileModule(ModuleOp module, const TargetDescription &target,
                  llvm::StringRef database, llvm::ToolOutputFile &output) {
  if (!referenceOnly) {
    PassManager pm(module.getContext());
    ApplyTunedSchedulesPassOptions apply;
    apply.db = database.str();
    apply.target = target.name;
    pm.addPass(createApplyTunedSchedulesPass(apply));
    if (failed(pm.run(module)))
      return 1;
  }
  ModuleLoweringOptions lowering;
  lowering.openmp = useOpenMP;
  lowering.scalableVectors = target.isCpu() && target.cpu.scalableVectors;
  if (emitKind != EmitKind::Scheduled &&
      failed(lowerModuleToLLVM(module, lowering)))
    return 1;
  if (emitKind == EmitKind::Scheduled || emitKind == EmitKind::Mlir) {
    module->print(output.os());
    output.os() << "\n";
    return 0;
  }
  return emitCode(module, target, output);
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
      llvm::outs() << (target->isCpu() ? getCpuPipelineHash()
                                       : getGpuPipelineHash(*target))
                   << "\n";
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

  if (target->isGpu()) {
    int code = 1;
    if (!runCrashSafely([&] {
          code = compileForGpu(*module, *target, *database, path, *output);
        })) {
      error() << "MLIR or LLVM crashed while compiling '" << inputFiles.front()
              << "' for " << target->name << " (an upstream bug)\n";
      return 1;
    }
    if (code == 0)
      output->keep();
    return code;
  }

  // An upstream crash on some input (a transform, a lowering, the backend)
  // is an error with exit code 1, not a crash of the build.
  int code = 1;
  if (!runCrashSafely([&] {
        code = compileModule(*module, *target, *database, *output);
      })) {
    error() << "MLIR or LLVM crashed while compiling '" << inputFiles.front()
            << "' (an upstream bug): see the errors above\n";
    return 1;
  }
  if (code == 0)
    output->keep();
  return code;
}
