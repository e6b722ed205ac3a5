//===- Workload.cpp - Building, merging and printing workloads ------------===//
//
// Map of the Workload component (docs/workloads.md):
//   Workload.cpp       collectWorkloads: anchors found, merged by key, JSON
//   Classify.cpp       which ops are workloads, and of what kind
//   CanonicalKey.cpp   structural keys of anchors (shapes, types, maps)
//   Cost.cpp           flops and bytes
//   Fusion.cpp         elementwise producers and consumers of an anchor
//   Kernel.cpp         kernel groups (KernelFusion) and kernel modules
//
//===----------------------------------------------------------------------===//

#include "ke/Workload/Workload.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace ke;

namespace {

OperandInfo describeOperand(OpOperand &operand, bool isInit) {
  OperandInfo info;
  info.isInit = isInit;
  Type type = operand.get().getType();
  Type elementType = type;
  if (auto shaped = dyn_cast<ShapedType>(type)) {
    info.shape.assign(shaped.getShape().begin(), shaped.getShape().end());
    elementType = shaped.getElementType();
    info.container = isa<MemRefType>(type) ? "memref" : "tensor";
  } else {
    info.container = "scalar";
  }
  llvm::raw_string_ostream os(info.elementType);
  os << elementType;
  return info;
}

/// "file:line:col" of the first file location inside `loc`, else its
/// printed form.
std::string formatLocation(Location loc) {
  if (auto file = loc->findInstanceOf<FileLineColLoc>())
    return (file.getFilename().strref() + ":" + llvm::Twine(file.getLine()) +
            ":" + llvm::Twine(file.getColumn()))
        .str();
  std::string text;
  llvm::raw_string_ostream os(text);
  os << loc;
  return text;
}

} // namespace

Workload ke::buildWorkload(Operation *anchor) {
  Workload workload;
  workload.key = computeWorkloadKey(anchor);
  workload.opName = anchor->getName().getStringRef().str();
  workload.kind = classifyWorkload(anchor);
  auto dps = cast<DestinationStyleOpInterface>(anchor);
  for (OpOperand &operand : anchor->getOpOperands())
    workload.operands.push_back(describeOperand(operand, dps.isDpsInit(&operand)));
  workload.flops = countFlops(anchor);
  if (std::optional<ByteCounts> bytes = countBytes(anchor)) {
    workload.bytesRead = bytes->read;
    workload.bytesWritten = bytes->written;
  }
  workload.fusible = findFusionCandidates(anchor);
  workload.locations.push_back(anchor->getLoc());
  workload.firstOp = anchor;
  return workload;
}

void ke::collectWorkloads(Operation *root,
                          std::vector<Workload> &workloads) {
  llvm::StringMap<size_t> indexByKey;
  for (auto [index, workload] : llvm::enumerate(workloads))
    indexByKey[workload.key] = index;

  root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (!isWorkloadAnchor(op))
      return;
    Workload workload = buildWorkload(op);
    auto [it, inserted] = indexByKey.try_emplace(workload.key, workloads.size());
    if (inserted) {
      workloads.push_back(std::move(workload));
      return;
    }
    Workload &existing = workloads[it->second];
    existing.locations.push_back(op->getLoc());
    for (FusionCandidate &candidate : workload.fusible)
      if (!llvm::is_contained(existing.fusible, candidate))
        existing.fusible.push_back(std::move(candidate));
  });
}

void ke::printWorkloadJSON(const Workload &w, llvm::raw_ostream &os) {
  llvm::json::OStream json(os);
  auto optional = [&](llvm::StringRef name, std::optional<uint64_t> value) {
    if (value)
      json.attribute(name, *value);
    else
      json.attribute(name, nullptr);
  };
  auto printShape = [&](const OperandInfo &operand) {
    json.array([&] {
      for (int64_t dim : operand.shape)
        ShapedType::isDynamic(dim) ? json.value(nullptr) : json.value(dim);
    });
  };
  json.object([&] {
    json.attribute("key", w.key);
    json.attribute("op", w.opName);
    json.attribute("kind", stringifyWorkloadKind(w.kind));
    json.attribute("count", w.count());
    json.attributeArray("shapes", [&] {
      for (const OperandInfo &operand : w.operands)
        printShape(operand);
    });
    json.attributeArray("element_types", [&] {
      for (const OperandInfo &operand : w.operands)
        json.value(operand.elementType);
    });
    json.attributeArray("operands", [&] {
      for (const OperandInfo &operand : w.operands)
        json.object([&] {
          json.attribute("role", operand.isInit ? "init" : "input");
          json.attribute("container", operand.container);
          json.attributeBegin("shape");
          printShape(operand);
          json.attributeEnd();
          json.attribute("element_type", operand.elementType);
        });
    });
    optional("flops", w.flops);
    std::optional<uint64_t> bytes;
    if (w.bytesRead && w.bytesWritten)
      bytes = *w.bytesRead + *w.bytesWritten;
    optional("bytes", bytes);
    optional("bytes_read", w.bytesRead);
    optional("bytes_written", w.bytesWritten);
    json.attributeArray("fusible", [&] {
      for (const FusionCandidate &candidate : w.fusible)
        json.object([&] {
          json.attribute("role", candidate.isProducer ? "producer" : "consumer");
          json.attribute(candidate.isProducer ? "operand" : "result",
                         candidate.anchorOperandOrResult);
          json.attribute("op", candidate.opName);
          json.attribute("key", candidate.key);
        });
    });
    json.attributeArray("locations", [&] {
      for (Location loc : w.locations)
        json.value(formatLocation(loc));
    });
  });
}
