//===- CrashSafety.cpp - Turning upstream crashes into errors -------------===//

#include "ke/Support/CrashSafety.h"

#include "llvm/Support/CrashRecoveryContext.h"

bool ke::runCrashSafely(llvm::function_ref<void()> fn) {
  llvm::CrashRecoveryContext::Enable();
  llvm::CrashRecoveryContext context;
  return context.RunSafely(fn);
}
