//===- Compile.cpp - MLIR text to a module the C API can call -------------===//

#include "Compile.h"

#include "ke/Compiler/Compiler.h"
#include "ke/InitAll/InitAll.h"
#include "ke/Support/CrashSafety.h"
#include "ke/Support/InputFile.h"
#include "ke/Target/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace ke;
using namespace ke::capi;
using llvm::createStringError;
using llvm::inconvertibleErrorCode;

/// The name of a memref element type the C API passes ("f32", "i64", ...),
/// or "" for one it does not.
static std::string getElementTypeName(Type type) {
  if (type.isF32())
    return "f32";
  if (type.isF64())
    return "f64";
  if (type.isF16())
    return "f16";
  if (type.isBF16())
    return "bf16";
  if (type.isSignlessInteger(1) || type.isSignlessInteger(8) ||
      type.isSignlessInteger(16) || type.isSignlessInteger(32) ||
      type.isSignlessInteger(64))
    return "i" + std::to_string(type.getIntOrFloatBitWidth());
  return "";
}

/// The argument type of `type` (a tensor of static shape), or an error at
/// `func` naming what it is.
static FailureOr<ArgumentType> getArgumentType(func::FuncOp func, Type type,
                                               StringRef what) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  std::string element =
      tensor ? getElementTypeName(tensor.getElementType()) : std::string();
  if (!tensor || !tensor.hasStaticShape() || element.empty())
    return func.emitError("ke: ")
           << what << " of @" << func.getSymName() << " is " << type
           << "; the C API takes tensors of static shapes with f32, f64, f16, "
              "bf16 or signless integer elements (dynamic shapes are not "
              "supported yet)";
  return ArgumentType{llvm::to_vector(tensor.getShape()), element};
}

/// The signatures of the public functions of `module`.
static FailureOr<std::vector<FunctionSignature>>
getSignatures(ModuleOp module) {
  std::vector<FunctionSignature> signatures;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!func.isPublic() || func.isExternal())
      continue;
    FunctionSignature signature;
    signature.name = func.getSymName().str();
    FunctionType type = func.getFunctionType();
    for (auto [i, input] : llvm::enumerate(type.getInputs())) {
      FailureOr<ArgumentType> arg =
          getArgumentType(func, input, "argument " + std::to_string(i));
      if (failed(arg))
        return failure();
      signature.inputs.push_back(*arg);
    }
    for (auto [i, result] : llvm::enumerate(type.getResults())) {
      FailureOr<ArgumentType> arg =
          getArgumentType(func, result, "result " + std::to_string(i));
      if (failed(arg))
        return failure();
      signature.results.push_back(*arg);
    }
    signatures.push_back(std::move(signature));
  }
  if (signatures.empty())
    return module.emitError("ke: the module has no public function to call");
  return signatures;
}

/// `file:line:col` of the first file location in `loc` (torch-mlir nests
/// them in call sites), else `loc` as MLIR prints it.
static std::string formatLocation(Location loc) {
  std::string text;
  llvm::raw_string_ostream os(text);
  loc->walk([&](Location inner) {
    if (auto file = dyn_cast<FileLineColLoc>(inner)) {
      os << file.getFilename().getValue() << ":" << file.getLine() << ":"
         << file.getColumn();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (text.empty())
    os << loc;
  return text;
}

/// Runs `fn` with upstream crashes turned into a false return, then gives
/// the host process its own signal handlers back.
static bool runGuarded(llvm::function_ref<void()> fn) {
  bool ok = runCrashSafely(fn);
  llvm::CrashRecoveryContext::Disable();
  return ok;
}

llvm::Expected<ModuleContents> capi::compileText(StringRef text,
                                                 StringRef sourceName,
                                                 StringRef targetSpec,
                                                 StringRef databasePath) {
  llvm::Expected<TargetDescription> target = parseTarget(targetSpec);
  if (!target)
    return target.takeError();
  if (!target->isCpu())
    return createStringError(inconvertibleErrorCode(),
                             "ke: the C API compiles for cpu targets only so "
                             "far, not '" +
                                 target->name + "'");

  DialectRegistry registry;
  registerKeDialects(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  // Errors name the op and its location; a dump of the whole function after
  // a failed pass would bury the message the caller sees.
  context.printOpOnDiagnostic(false);
  std::string errors, remarks;
  llvm::raw_string_ostream errorStream(errors), remarkStream(remarks);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, sourceName), llvm::SMLoc());
  SourceMgrDiagnosticHandler printer(sourceMgr, &context, errorStream);
  // Remarks (which schedule each workload got) are kept apart from errors.
  ScopedDiagnosticHandler remarkHandler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() != DiagnosticSeverity::Remark)
      return failure();
    remarkStream << formatLocation(diag.getLocation()) << ": remark: " << diag
                 << "\n";
    return success();
  });
  auto fail = [&](StringRef fallback) {
    return createStringError(inconvertibleErrorCode(),
                             errors.empty() ? fallback.str() : errors);
  };

  if (isBlankInput(text))
    return createStringError(inconvertibleErrorCode(),
                             sourceName + ":1:1: error: empty input");
  OwningOpRef<ModuleOp> module;
  if (!runGuarded([&] {
        module = parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
      }))
    return fail("ke: MLIR crashed while parsing the input (an upstream bug)");
  if (!module)
    return fail("ke: the input does not parse");

  FailureOr<std::vector<FunctionSignature>> signatures = getSignatures(*module);
  if (failed(signatures))
    return fail("ke: unsupported function signature");

  CompileOptions options;
  options.databasePath = databasePath.str();
  options.stage = CompileStage::Obj;
  options.resultsToOutParams = true;
  FailureOr<CompiledModule> compiled = failure();
  if (!runGuarded([&] { compiled = compileModule(*module, *target, options); }))
    return fail("ke: MLIR or LLVM crashed while compiling (an upstream bug)");
  if (failed(compiled))
    return fail("ke: compilation failed");

  ModuleContents contents;
  contents.triple = target->triple;
  contents.chip = target->chip;
  contents.functions = std::move(*signatures);
  contents.object = std::move(compiled->cpuCode);
  contents.remarks = std::move(remarks);
  return contents;
}
