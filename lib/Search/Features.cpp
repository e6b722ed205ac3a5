//===- Features.cpp - Cost-model features of a scheduled candidate --------===//
//
// Features are computed from the rule's LoopNestDescription and the anchor's
// operands (indexing maps, shapes, element types). Every feature is written
// by one `add` call whether or not it applies (NaN when it does not), so the
// layout, and getFeatureNames(), are the same for every candidate.
//
//===----------------------------------------------------------------------===//

#include "ke/Search/Features.h"

#include "ke/Workload/Workload.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineExpr.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

#include <cmath>
#include <limits>
#include <map>

using namespace mlir;
using namespace ke;

namespace {

/// Loops with per-dimension features; deeper nests (none in the suite: 3-D
/// convolutions have 9 loops) are described by their first kMaxDims loops.
constexpr unsigned kMaxDims = 9;

double NaN() { return std::numeric_limits<double>::quiet_NaN(); }
/// log2 of a positive quantity; NaN for anything else (unknown, empty).
double lg(double x) { return x > 0 && std::isfinite(x) ? std::log2(x) : NaN(); }

/// One term `coefficient * d_loop` of an affine index expression.
struct Term {
  unsigned loop;
  int64_t coefficient;
};

/// An operand as the features see it: per dimension, the loops that index
/// it (std::nullopt when the index is not linear in the loops).
struct Operand {
  bool isInit = false;
  SmallVector<int64_t> shape;
  SmallVector<std::optional<SmallVector<Term>>> index;
  double elementBytes = 4;
};

/// Decomposes `expr` into terms of loops; false when it is not linear.
bool linearTerms(AffineExpr expr, int64_t scale, SmallVector<Term> &terms) {
  if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
    terms.push_back({dim.getPosition(), scale});
    return true;
  }
  if (isa<AffineConstantExpr>(expr))
    return true;
  auto binary = dyn_cast<AffineBinaryOpExpr>(expr);
  if (!binary)
    return false;
  if (binary.getKind() == AffineExprKind::Add)
    return linearTerms(binary.getLHS(), scale, terms) &&
           linearTerms(binary.getRHS(), scale, terms);
  if (binary.getKind() == AffineExprKind::Mul) {
    if (auto c = dyn_cast<AffineConstantExpr>(binary.getRHS()))
      return linearTerms(binary.getLHS(), scale * c.getValue(), terms);
    if (auto c = dyn_cast<AffineConstantExpr>(binary.getLHS()))
      return linearTerms(binary.getRHS(), scale * c.getValue(), terms);
  }
  return false;
}

double bytesOf(Type type) {
  Type element = getElementTypeOrSelf(type);
  if (element.isIntOrFloat())
    return std::max(1u, element.getIntOrFloatBitWidth()) / 8.0;
  return 8; // index
}

Operand makeOperand(Type type, AffineMap map, bool isInit) {
  Operand operand;
  operand.isInit = isInit;
  operand.elementBytes = bytesOf(type);
  if (auto shaped = dyn_cast<ShapedType>(type))
    operand.shape.assign(shaped.getShape().begin(), shaped.getShape().end());
  for (AffineExpr expr : map.getResults()) {
    SmallVector<Term> terms;
    if (linearTerms(expr, 1, terms))
      operand.index.push_back(std::move(terms));
    else
      operand.index.push_back(std::nullopt);
  }
  return operand;
}

/// What the features need of the anchor.
struct Anchor {
  WorkloadKind kind = WorkloadKind::Elementwise;
  double flops = NaN(), bytes = NaN();
  /// Inputs, then inits.
  SmallVector<Operand> operands;
  unsigned elementBits = 32;
  bool isFloat = true;

  /// Input `i` (inits excluded), or null.
  const Operand *input(unsigned i) const {
    for (const Operand &operand : operands)
      if (!operand.isInit && i-- == 0)
        return &operand;
    return nullptr;
  }
  const Operand *init() const {
    for (const Operand &operand : operands)
      if (operand.isInit)
        return &operand;
    return nullptr;
  }
};

std::optional<Anchor> analyzeAnchor(Operation *op) {
  if (!op || !isWorkloadAnchor(op))
    return std::nullopt;
  Anchor anchor;
  anchor.kind = classifyWorkload(op);
  if (std::optional<uint64_t> flops = countFlops(op))
    anchor.flops = *flops;
  if (std::optional<ByteCounts> bytes = countBytes(op))
    anchor.bytes = double(bytes->read) + double(bytes->written);
  Type result;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    for (OpOperand &operand : op->getOpOperands())
      anchor.operands.push_back(makeOperand(
          operand.get().getType(), linalgOp.getMatchingIndexingMap(&operand),
          linalgOp.isDpsInit(&operand)));
    if (linalgOp.getNumDpsInits() > 0)
      result = linalgOp.getDpsInits()[0].getType();
  } else if (auto softmax = dyn_cast<linalg::SoftmaxOp>(op)) {
    // One loop per tensor dimension, read and written element by element.
    auto type = cast<ShapedType>(softmax.getInput().getType());
    AffineMap identity =
        AffineMap::getMultiDimIdentityMap(type.getRank(), op->getContext());
    anchor.operands.push_back(makeOperand(type, identity, false));
    anchor.operands.push_back(
        makeOperand(softmax.getOutput().getType(), identity, true));
    result = softmax.getOutput().getType();
  }
  if (result) {
    Type element = getElementTypeOrSelf(result);
    anchor.isFloat = isa<FloatType>(element);
    if (element.isIntOrFloat())
      anchor.elementBits = std::max(8u, element.getIntOrFloatBitWidth());
  }
  return anchor;
}

/// Elements of `operand` that a box of `tile` loop iterations touches: per
/// dimension, the span of the index over the box (`oh + kh` windows give
/// tile_oh + tile_kh - 1), at most the dimension's size.
double touchedElements(const Operand &operand, ArrayRef<int64_t> tile) {
  double elements = 1;
  for (auto [dim, terms] : llvm::enumerate(operand.index)) {
    double size =
        dim < operand.shape.size() && !ShapedType::isDynamic(operand.shape[dim])
            ? double(operand.shape[dim])
            : NaN();
    double span = size;
    if (terms) {
      span = 1;
      for (const Term &term : *terms)
        if (term.loop < tile.size())
          span +=
              double(std::abs(term.coefficient)) * double(tile[term.loop] - 1);
      if (!std::isnan(size))
        span = std::min(span, size);
    }
    elements *= span;
  }
  return elements;
}

/// The innermost dimension's span (contiguous elements per row) of the
/// operand for `tile`; NaN for scalars.
double contiguousElements(const Operand &operand, ArrayRef<int64_t> tile) {
  if (operand.index.empty())
    return NaN();
  Operand last = operand;
  last.index.erase(last.index.begin(), last.index.end() - 1);
  last.shape.erase(last.shape.begin(),
                   last.shape.end() - std::min<size_t>(1, last.shape.size()));
  return touchedElements(last, tile);
}

/// How the operand is read along the vector loop: 1 unit stride (its
/// innermost index is the loop), 0 broadcast (no index uses it), -1 other
/// (a strided or transposed access).
double vectorAccess(const Operand &operand, unsigned vectorLoop) {
  if (operand.index.empty())
    return 0;
  const auto &last = operand.index.back();
  if (last && last->size() == 1 && (*last)[0].loop == vectorLoop &&
      (*last)[0].coefficient == 1)
    return 1;
  for (const auto &terms : operand.index) {
    if (!terms)
      return -1;
    for (const Term &term : *terms)
      if (term.loop == vectorLoop)
        return -1;
  }
  return 0;
}

double volume(ArrayRef<int64_t> tile) {
  double v = 1;
  for (int64_t t : tile)
    v *= double(t);
  return v;
}

/// Architectural vector registers, as cpu.tile's limits count them.
unsigned vectorRegisters(const TargetDescription &target) {
  return target.cpu.vectorBits >= 512 ||
                 llvm::StringRef(target.triple).starts_with("aarch64")
             ? 32
             : 16;
}

/// The tile of each role: the level's own, else the enclosing level's (a
/// sketch without a cache level keeps its thread tiles there).
struct Levels {
  static constexpr TileLevelRole roles[] = {
      TileLevelRole::Threads, TileLevelRole::Cache, TileLevelRole::Register,
      TileLevelRole::Inner};
  static constexpr const char *names[] = {"threads", "cache", "register",
                                          "inner"};
  SmallVector<int64_t> tile[4];
  double trips[4] = {NaN(), NaN(), NaN(), NaN()};
  bool known = false;

  explicit Levels(const LoopNestDescription &d) {
    if (d.empty())
      return;
    known = true;
    SmallVector<int64_t> current = d.ranges;
    for (unsigned r = 0; r < 4; ++r) {
      trips[r] = 1;
      if (const TileLevel *level = d.findLevel(roles[r])) {
        current = level->tile;
        trips[r] = volume(level->tripCounts);
      }
      tile[r] = current;
    }
  }
};

/// Fraction of the iterations in tiles that are partial along some loop at
/// the innermost level, and the work padding adds when they are padded.
std::pair<double, double> partialWork(const LoopNestDescription &d) {
  double full = 1, padded = 1;
  for (unsigned loop = 0; loop < d.ranges.size(); ++loop) {
    if (d.ranges[loop] <= 0)
      continue;
    // Tile extents along this loop and how many tiles have each.
    std::map<int64_t, int64_t> extents{{d.ranges[loop], 1}};
    int64_t innermost = d.ranges[loop];
    for (const TileLevel &level : d.levels) {
      int64_t size = level.tile[loop];
      std::map<int64_t, int64_t> next;
      for (auto [extent, count] : extents) {
        if (extent / size > 0)
          next[size] += count * (extent / size);
        if (extent % size > 0)
          next[extent % size] += count;
      }
      extents = std::move(next);
      innermost = size;
    }
    double fullIterations = 0, paddedIterations = 0;
    for (auto [extent, count] : extents) {
      if (extent == innermost)
        fullIterations += double(count) * double(extent);
      paddedIterations += double(count) * double(innermost);
    }
    full *= fullIterations / double(d.ranges[loop]);
    padded *= paddedIterations / double(d.ranges[loop]);
  }
  return {1 - full, padded - 1};
}

/// Appends named values; NaN marks those that do not apply.
class FeatureWriter {
public:
  explicit FeatureWriter(std::vector<std::string> *names) : names(names) {}

  void add(const llvm::Twine &name, double value) {
    values.push_back(float(value));
    if (names)
      names->push_back(name.str());
  }
  void addFlag(const llvm::Twine &name, bool known, bool value) {
    add(name, known ? double(value) : NaN());
  }

  std::vector<float> values;

private:
  std::vector<std::string> *names;
};

/// Writes every feature. With `anchorOp` null (for the names) every value
/// is NaN.
void writeFeatures(FeatureWriter &f, Operation *anchorOp,
                   const Schedule *schedule, const TargetDescription &target) {
  std::optional<Anchor> anchor = analyzeAnchor(anchorOp);
  LoopNestDescription d;
  if (anchor && schedule && schedule->rule)
    d = schedule->rule->describeLoopNest(anchorOp, target,
                                         schedule->getAssignment());
  bool known = !d.empty();
  unsigned numLoops = d.ranges.size();
  Levels levels(d);
  double iterations = known ? volume(d.ranges) : NaN();
  double flops = anchor ? anchor->flops : NaN();
  double flopsPerIteration = flops / iterations;

  // The workload.
  f.add("log2_flops", lg(flops));
  f.add("log2_bytes", lg(anchor ? anchor->bytes : NaN()));
  f.add("log2_intensity", lg(anchor ? anchor->flops / anchor->bytes : NaN()));
  static constexpr WorkloadKind kinds[] = {
      WorkloadKind::Contraction, WorkloadKind::Convolution,
      WorkloadKind::Pooling,     WorkloadKind::Reduction,
      WorkloadKind::Softmax,     WorkloadKind::Elementwise,
      WorkloadKind::Fill,        WorkloadKind::DataMovement};
  for (WorkloadKind kind : kinds)
    f.addFlag("kind." + stringifyWorkloadKind(kind), bool(anchor),
              anchor && anchor->kind == kind);
  llvm::StringRef sketch =
      schedule && schedule->rule ? schedule->rule->getName() : "";
  // The GPU rules too: gpu.mma (gpu.wgmma, gpu.mfma) and gpu.tile schedule
  // the same matmuls on tensor (matrix) cores and on CUDA cores, which tile
  // sizes alone do not tell.
  static constexpr llvm::StringLiteral sketches[] = {
      "cpu.tile",    "cpu.rfactor", "cpu.softmax", "cpu.loops",
      "cpu.loops.parallel",
      "gpu.mma",     "gpu.wgmma",   "gpu.mfma",    "gpu.ffma",
      "gpu.tile",
      "gpu.reduce",  "gpu.softmax", "gpu.argrow",  "gpu.rownorm",
      "gpu.elementwise"};
  for (llvm::StringRef name : sketches)
    f.addFlag("sketch." + name, !sketch.empty(), sketch == name);
  f.addFlag("sketch.other", !sketch.empty(),
            !llvm::is_contained(sketches, sketch));
  // GPU contractions' pipelines: how tiles are copied, how many are in
  // flight, how blocks are rasterized (gpu.wgmma's tma, stages, group.m).
  f.addFlag("tile_copy.cp_async", known,
            d.tileCopy == LoopNestDescription::TileCopy::CpAsync);
  f.addFlag("tile_copy.tma", known,
            d.tileCopy == LoopNestDescription::TileCopy::Tma);
  f.add("log2_pipeline_stages", known ? lg(d.pipelineStages) : NaN());
  f.add("log2_raster_group", known ? lg(d.rasterGroup) : NaN());
  f.add("log2_element_bits", anchor ? std::log2(anchor->elementBits) : NaN());
  f.addFlag("is_float", bool(anchor), anchor && anchor->isFloat);
  f.add("num_loops", known ? double(numLoops) : NaN());
  f.add("num_reduction_loops",
        known ? double(llvm::count(d.reduction, true)) : NaN());
  for (unsigned dim = 0; dim < kMaxDims; ++dim) {
    bool has = dim < numLoops;
    f.add("log2_range.d" + llvm::Twine(dim), has ? lg(d.ranges[dim]) : NaN());
    f.addFlag("is_reduction.d" + llvm::Twine(dim), has,
              has && d.reduction[dim]);
  }

  // The target.
  double lanes =
      std::max(1u, target.cpu.vectorBits / (anchor ? anchor->elementBits : 32));
  double cores = std::max(1u, target.cpu.cores);
  f.add("log2_lanes", anchor ? std::log2(lanes) : NaN());
  f.add("log2_cores", std::log2(cores));

  // Each tiling level: tile extents, trip counts, bytes each operand's tile
  // touches, footprint against the caches, arithmetic intensity.
  const char *slots[] = {"in0", "in1", "out"};
  const Operand *slotOperands[] = {anchor ? anchor->input(0) : nullptr,
                                   anchor ? anchor->input(1) : nullptr,
                                   anchor ? anchor->init() : nullptr};
  double l1 = double(target.cpu.l1dBytes);
  double l2 =
      double(target.cpu.l2Bytes) / std::max(1u, target.cpu.l2SharedByCores);
  for (unsigned r = 0; r < 4; ++r) {
    std::string prefix = std::string(Levels::names[r]) + ".";
    bool has = levels.known && anchor;
    ArrayRef<int64_t> tile = levels.tile[r];
    for (unsigned dim = 0; dim < kMaxDims; ++dim)
      f.add(prefix + "log2_tile.d" + llvm::Twine(dim),
            has && dim < numLoops ? lg(tile[dim]) : NaN());
    f.add(prefix + "log2_trips", lg(levels.trips[r]));
    double tileIterations = has ? volume(tile) : NaN();
    f.add(prefix + "log2_iterations", lg(tileIterations));
    for (unsigned s = 0; s < 3; ++s)
      f.add(prefix + "log2_bytes." + slots[s],
            has && slotOperands[s]
                ? lg(touchedElements(*slotOperands[s], tile) *
                     slotOperands[s]->elementBytes)
                : NaN());
    double footprint = 0;
    if (has)
      for (const Operand &operand : anchor->operands)
        footprint += touchedElements(operand, tile) * operand.elementBytes;
    else
      footprint = NaN();
    f.add(prefix + "log2_footprint", lg(footprint));
    f.add(prefix + "log2_footprint_vs_l1", lg(footprint / l1));
    f.add(prefix + "log2_footprint_vs_l2", lg(footprint / l2));
    f.add(prefix + "log2_intensity",
          lg(flopsPerIteration * tileIterations / footprint));
  }

  // Parallelism: tasks are the iterations of the parallel level.
  const TileLevel *threadLevel =
      known ? d.findLevel(TileLevelRole::Threads) : nullptr;
  double tasks = !known ? NaN()
                 : threadLevel && threadLevel->parallel
                     ? volume(threadLevel->tripCounts)
                     : 1;
  double threads = known ? double(std::max<int64_t>(1, d.threads)) : NaN();
  f.add("log2_threads", lg(threads));
  f.add("threads_vs_cores", threads / cores);
  f.add("log2_tasks", lg(tasks));
  f.add("log2_tasks_per_thread", lg(tasks / threads));
  f.add("load_imbalance", std::ceil(tasks / threads) * threads / tasks);
  f.add("used_cores", std::min(tasks, threads) / cores);
  f.add("log2_flops_per_task", lg(flops / tasks));

  // Vectors: the innermost vector dimension against the hardware's lanes,
  // and how each operand is read along it.
  bool vectorized = known && anchor && d.vectorLoop && *d.vectorLoop < numLoops;
  double width = vectorized ? double(d.vectorWidth) : NaN();
  f.add("log2_vector_width", lg(width));
  f.add("vector_width_vs_lanes", width / lanes);
  f.add("vector_remainder", std::fmod(width, lanes) / lanes);
  f.addFlag("vector_loop_is_reduction", vectorized,
            vectorized && d.reduction[*d.vectorLoop]);
  ArrayRef<int64_t> innerTile = levels.tile[3];
  for (unsigned s = 0; s < 3; ++s) {
    bool has = levels.known && slotOperands[s];
    double contiguous =
        has ? contiguousElements(*slotOperands[s], innerTile) : NaN();
    f.add("log2_contiguous." + llvm::Twine(slots[s]), lg(contiguous));
    f.add("contiguous_vs_lanes." + llvm::Twine(slots[s]), contiguous / lanes);
    f.add("vector_access." + llvm::Twine(slots[s]),
          vectorized && slotOperands[s]
              ? vectorAccess(*slotOperands[s], *d.vectorLoop)
              : NaN());
  }

  // Registers and straight-line code.
  const Operand *out = slotOperands[2];
  double accumulators =
      levels.known && out ? touchedElements(*out, innerTile) : NaN();
  f.add("log2_accumulators", lg(accumulators));
  f.add("accumulators_vs_registers",
        accumulators / (vectorRegisters(target) * lanes));
  double unroll = known ? double(std::max<int64_t>(1, d.unroll)) : NaN();
  f.add("log2_unroll", lg(unroll));
  f.add("log2_straight_line_ops",
        lg(levels.known ? volume(innerTile) * unroll : NaN()));

  // Partial tiles.
  std::pair<double, double> partial =
      known ? partialWork(d) : std::make_pair(NaN(), NaN());
  f.add("partial_fraction", partial.first);
  static constexpr std::pair<PartialTileHandling, const char *> handlings[] = {
      {PartialTileHandling::None, "none"},
      {PartialTileHandling::Peeled, "peeled"},
      {PartialTileHandling::Padded, "padded"}};
  for (auto [handling, name] : handlings)
    f.addFlag("partial." + llvm::Twine(name), known,
              d.partialTiles == handling);
  f.add("padding_overhead", !known ? NaN()
                            : d.partialTiles == PartialTileHandling::Padded
                                ? partial.second
                                : 0);
}

} // namespace

std::vector<float> ke::extractFeatures(Operation *anchor,
                                       const Schedule &schedule,
                                       const TargetDescription &target) {
  FeatureWriter f(nullptr);
  writeFeatures(f, anchor, &schedule, target);
  return std::move(f.values);
}

const std::vector<std::string> &ke::getFeatureNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> names;
    FeatureWriter f(&names);
    writeFeatures(f, nullptr, nullptr, TargetDescription());
    return names;
  }();
  return names;
}

unsigned ke::getNumFeatures() { return getFeatureNames().size(); }

const std::string &ke::getFeaturesVersion() {
  static const std::string version = [] {
    std::string names = llvm::join(getFeatureNames(), ",");
    std::array<uint8_t, 32> digest =
        llvm::SHA256::hash(llvm::arrayRefFromStringRef(names));
    return llvm::toHex(llvm::ArrayRef<uint8_t>(digest).take_front(8),
                       /*LowerCase=*/true);
  }();
  return version;
}
