//===- PipelineHash.h - Which lowering made a tuning record -----*- C++ -*-===//
//
// A tuning record's time holds only for the code it was measured with, so
// every record carries the hash of the lowering that made it, and records
// under another hash are misses (stale). The hash covers:
//   - the pipeline text of the target family's lowering, built from the very
//     step list the lowering runs (getCpuLoweringPipeline, getGpuPipelineText);
//   - the lowering's sources: a SHA-256 over lib/Codegen, lib/Sketch,
//     lib/Schedule and their headers, computed at build time
//     (cmake/LoweringSourceHash.cmake). A change inside a step, which no
//     pipeline text shows (e45f996 changed where barriers go), changes the
//     hash too; so does any edit of those files, comments included, which
//     costs a retune, never a wrong time;
//   - ke's and LLVM's versions.
//
//===----------------------------------------------------------------------===//
#ifndef KE_CODEGEN_PIPELINEHASH_H
#define KE_CODEGEN_PIPELINEHASH_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace ke {

/// 16 hex digits identifying `pipelineText` lowered by this build of ke: the
/// text, the lowering sources' hash, ke's and LLVM's versions.
std::string hashLoweringPipeline(llvm::StringRef pipelineText);

/// The SHA-256 (hex) of the lowering sources this ke was built from.
llvm::StringRef getLoweringSourceHash();

} // namespace ke

#endif // KE_CODEGEN_PIPELINEHASH_H
