//===- CrashSafety.h - Turning upstream crashes into errors -----*- C++ -*-===//
//
// Some of MLIR 22's custom op parsers dereference null attributes on
// malformed input (linalg.reduce/transpose/broadcast with a bad integer
// list, found by ke's fuzzer). ke must answer bad input with a diagnostic and
// a non-zero exit, never a crash, so parsing runs under an
// llvm::CrashRecoveryContext: a crash there becomes a failure that the
// caller reports. The process should exit soon after a recovered crash, as
// the interrupted code may have left memory or locks behind.
//
//===----------------------------------------------------------------------===//
#ifndef KE_SUPPORT_CRASHSAFETY_H
#define KE_SUPPORT_CRASHSAFETY_H

#include "llvm/ADT/STLFunctionalExtras.h"

namespace ke {

/// Runs `fn`; returns false when it crashed (SIGSEGV, SIGBUS, SIGILL, SIGFPE,
/// abort) instead of returning. Safe to call from several threads.
bool runCrashSafely(llvm::function_ref<void()> fn);

} // namespace ke

#endif // KE_SUPPORT_CRASHSAFETY_H
