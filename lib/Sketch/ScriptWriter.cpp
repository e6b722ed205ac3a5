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
                                       llvm::SmallVectorImpl<std::string> &loops) {
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
       " tile_sizes " + list(sizes) + " : (!transform.any_op) -> (" + types +
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

std::string ScriptWriter::finish() {
  return "module attributes {transform.with_named_sequence} {\n"
         "  transform.named_sequence @__transform_main(%root: "
         "!transform.any_op {transform.readonly}) {\n" +
         body +
         "    transform.yield\n"
         "  }\n"
         "}\n";
}

std::string ScriptWriter::list(llvm::ArrayRef<int64_t> values) {
  return "[" +
         llvm::join(llvm::map_range(values,
                                    [](int64_t v) { return std::to_string(v); }),
                    ", ") +
         "]";
}
