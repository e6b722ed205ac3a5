//===- ScriptWriter.cpp - Building transform scripts as text --------------===//

#include "ScriptWriter.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace ke;

ScriptWriter::ScriptWriter() = default;

std::string ScriptWriter::fresh(llvm::StringRef stem) {
  return ("%" + stem + llvm::Twine(counter++)).str();
}

void ScriptWriter::line(const std::string &text) {
  body += "    " + text + "\n";
}

void ScriptWriter::comment(const std::string &text) {
  body += "    // " + text + "\n";
}

std::string ScriptWriter::match(llvm::StringRef opName,
                                llvm::StringRef attribute) {
  std::string handle = fresh("op");
  std::string filter;
  if (!opName.empty())
    filter += "ops{[\"" + opName.str() + "\"]} ";
  if (!attribute.empty())
    filter += "attributes {" + attribute.str() + "} ";
  line(handle + " = transform.structured.match " + filter +
       "in %root : (!transform.any_op) -> !transform.any_op");
  return handle;
}

std::string ScriptWriter::tileUsingFor(const std::string &target,
                                       llvm::ArrayRef<int64_t> sizes,
                                       llvm::SmallVectorImpl<std::string> &loops,
                                       llvm::ArrayRef<bool> scalable) {
  std::string tiled = fresh("op");
  std::string results = tiled, types = "!transform.any_op";
  for (int64_t size : sizes) {
    if (size == 0)
      continue;
    loops.push_back(fresh("loop"));
    results += ", " + loops.back();
    types += ", !transform.op<\"scf.for\">";
  }
  line(results + " = transform.structured.tile_using_for " + target +
       " tile_sizes " + list(sizes, scalable) + " : (!transform.any_op) -> (" +
       types +
       ")");
  return tiled;
}

std::string ScriptWriter::tileUsingForall(const std::string &target,
                                          llvm::ArrayRef<int64_t> sizes,
                                          std::string &forall) {
  std::string tiled = fresh("op");
  forall = fresh("forall");
  line(tiled + ", " + forall + " = transform.structured.tile_using_forall " +
       target + " tile_sizes " + list(sizes) +
       " : (!transform.any_op) -> (!transform.any_op, !transform.any_op)");
  return tiled;
}

void ScriptWriter::fuseInto(std::string &producer, std::string &container) {
  std::string fused = fresh("op"), newContainer = fresh("forall");
  line(fused + ", " + newContainer +
       " = transform.structured.fuse_into_containing_op " + producer +
       " into " + container +
       " : (!transform.any_op, !transform.any_op) -> (!transform.any_op, "
       "!transform.any_op)");
  producer = fused;
  container = newContainer;
}

void ScriptWriter::fuseIntoLoop(std::string &producer, const std::string &loop) {
  std::string container = fresh("loop");
  line(container + " = transform.cast " + loop +
       " : !transform.op<\"scf.for\"> to !transform.any_op");
  fuseInto(producer, container);
}

ScriptWriter::ReductionTiles
ScriptWriter::tileReductionUsingForall(const std::string &target,
                                       llvm::ArrayRef<int64_t> numThreads,
                                       llvm::StringRef mapping) {
  ReductionTiles t{fresh("fill"), fresh("partial"), fresh("combine"),
                   fresh("forall")};
  line(t.fill + ", " + t.partial + ", " + t.combine + ", " + t.forall +
       " = transform.structured.tile_reduction_using_forall " + target +
       " by num_threads = " + list(numThreads) +
       (mapping.empty() ? std::string() : (" mapping = " + mapping).str()) +
       " : (!transform.any_op) -> (!transform.any_op, !transform.any_op, "
       "!transform.any_op, !transform.any_op)");
  return t;
}

ScriptWriter::ReductionTiles
ScriptWriter::tileReductionUsingFor(const std::string &target,
                                    llvm::ArrayRef<int64_t> tileSizes) {
  ReductionTiles t{fresh("init"), fresh("partial"), fresh("combine"),
                   fresh("loop")};
  line(t.fill + ", " + t.partial + ", " + t.combine + ", " + t.forall +
       " = transform.structured.tile_reduction_using_for " + target +
       " by tile_sizes = " + list(tileSizes) +
       " : (!transform.any_op) -> (!transform.any_op, !transform.any_op, "
       "!transform.any_op, !transform.any_op)");
  return t;
}

llvm::SmallVector<std::string>
ScriptWriter::splitHandle(const std::string &all, size_t n,
                          llvm::StringRef stem) {
  llvm::SmallVector<std::string> parts;
  for (size_t i = 0; i < n; ++i)
    parts.push_back(fresh(stem));
  line(llvm::join(parts, ", ") + " = transform.split_handle " + all +
       " : (!transform.any_op) -> (" +
       llvm::join(llvm::SmallVector<std::string>(n, "!transform.any_op"),
                  ", ") +
       ")");
  return parts;
}

void ScriptWriter::bufferizeDestination(const std::string &target,
                                        llvm::StringRef memorySpace,
                                        llvm::StringRef memcpyOp) {
  std::string shared = fresh("shared"), ops = fresh("ops");
  line(shared + ", " + ops +
       " = transform.structured.bufferize_to_allocation " + target +
       " {memory_space = " + memorySpace.str() +
       (memcpyOp.empty() ? std::string()
                         : ", memcpy_op = \"" + memcpyOp.str() + "\"") +
       ", bufferize_destination_only} : !transform.any_op");
}

std::string ScriptWriter::peel(const std::string &loop) {
  std::string main = fresh("main");
  line(main + ", " + fresh("rest") + " = transform.loop.peel " + loop +
       " : (!transform.op<\"scf.for\">) -> (!transform.any_op, "
       "!transform.any_op)");
  return main;
}

void ScriptWriter::vectorizeFunction(llvm::ArrayRef<std::string> patterns,
                                     bool vectorizePadding) {
  std::string func = fresh("func"), vectorized = fresh("func");
  line(func + " = transform.structured.match ops{[\"func.func\"]} in %root : "
              "(!transform.any_op) -> !transform.any_op");
  line(vectorized + " = transform.structured.vectorize_children_and_apply_"
                    "patterns " +
       func + (vectorizePadding ? " {vectorize_padding}" : "") +
       " : (!transform.any_op) -> !transform.any_op");
  line("transform.apply_patterns to " + vectorized + " {");
  for (const std::string &pattern : patterns)
    line("  transform.apply_patterns." + pattern);
  line("} : !transform.any_op");
  line("transform.apply_cse to " + vectorized + " : !transform.any_op");
  // Keep accumulator tiles in registers across the inner reduction loops:
  // without this, every iteration reads the tile from memory and writes it
  // back (half of the peak at best). match returns loops innermost first
  // (post-order), the order hoisting needs.
  std::string loops = fresh("loops");
  line(loops + " = transform.structured.match ops{[\"scf.for\"]} in " +
       vectorized + " : (!transform.any_op) -> !transform.any_op");
  line("transform.loop.hoist_loop_invariant_subsets " + loops +
       " : !transform.any_op");
}

void ScriptWriter::vectorizeOps(const std::string &target,
                                llvm::ArrayRef<int64_t> sizes,
                                llvm::ArrayRef<bool> scalable) {
  line("transform.structured.vectorize " + target + " vector_sizes " +
       list(sizes, scalable) + " : !transform.any_op");
}

void ScriptWriter::lowerMaskedVectors() {
  std::string func = fresh("func");
  line(func + " = transform.structured.match ops{[\"func.func\"]} in %root : "
              "(!transform.any_op) -> !transform.any_op");
  // Masked transfers first (their permutations and masks folded), then the
  // contractions: a scalable vector<4x[4]xf32> contraction becomes [4]-wide
  // FMAs, which the AArch64 backend turns into predicated SVE fmla.
  line("transform.apply_patterns to " + func + " {");
  line("  transform.apply_patterns.vector.reduction_to_contract");
  line("  transform.apply_patterns.vector.transfer_permutation_patterns");
  line("  transform.apply_patterns.vector.lower_masked_transfers");
  line("  transform.apply_patterns.vector.sink_ops");
  line("} : !transform.any_op");
  line("transform.apply_patterns to " + func + " {");
  line("  transform.apply_patterns.vector.lower_contraction lowering_strategy "
       "= \"outerproduct\"");
  line("  transform.apply_patterns.vector.lower_outerproduct");
  line("  transform.apply_patterns.canonicalization");
  line("} : !transform.any_op");
  line("transform.apply_cse to " + func + " : !transform.any_op");
  // No hoist_loop_invariant_subsets: it does not hoist masked transfers and
  // leaves a second, aliasing iter_arg that bufferizes to a copy per tile.
}

std::string ScriptWriter::finish() {
  return "module attributes {transform.with_named_sequence} {\n"
         "  transform.named_sequence @__transform_main(%root: "
         "!transform.any_op {transform.readonly}) {\n" +
         body +
         "    transform.yield\n"
         "  }\n"
         "}\n";
}

std::string ScriptWriter::list(llvm::ArrayRef<int64_t> values,
                               llvm::ArrayRef<bool> scalable) {
  llvm::SmallVector<std::string> items;
  for (auto [index, value] : llvm::enumerate(values)) {
    bool isScalable = index < scalable.size() && scalable[index];
    items.push_back(isScalable ? "[" + std::to_string(value) + "]"
                               : std::to_string(value));
  }
  return "[" + llvm::join(items, ", ") + "]";
}
