//===- PipelineHash.cpp - Which lowering made a tuning record -------------===//

#include "ke/Codegen/PipelineHash.h"

#include "ke/Config.h"
#include "ke/LoweringSourceHash.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/SHA256.h"

llvm::StringRef ke::getLoweringSourceHash() { return KE_LOWERING_SOURCE_HASH; }

std::string ke::hashLoweringPipeline(llvm::StringRef pipelineText) {
  std::string text = (pipelineText + "|" + getLoweringSourceHash() +
                      "|" KE_VERSION "|" LLVM_VERSION_STRING)
                         .str();
  std::array<uint8_t, 32> digest =
      llvm::SHA256::hash(llvm::arrayRefFromStringRef(text));
  return llvm::toHex(llvm::ArrayRef<uint8_t>(digest).take_front(8),
                     /*LowerCase=*/true);
}
