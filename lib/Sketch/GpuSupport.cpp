//===- GpuSupport.cpp - What the GPU sketch rules share -------------------===//

#include "GpuSupport.h"

#include "ke/Workload/Kernel.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace ke;

GpuLoops ke::analyzeGpuLoops(linalg::LinalgOp op) {
  GpuLoops loops;
  loops.ranges = op.getStaticLoopRanges();
  for (auto [index, type] : llvm::enumerate(op.getIteratorTypesArray()))
    (type == utils::IteratorType::parallel ? loops.parallel : loops.reduction)
        .push_back(index);
  for (unsigned loop : llvm::reverse(loops.parallel))
    if (loops.mapped.size() < 3 && loops.ranges[loop] > 1)
      loops.mapped.insert(loops.mapped.begin(), loop);
  for (unsigned loop : llvm::reverse(loops.reduction))
    if (loops.ranges[loop] > 1) {
      loops.innerReduction = loop;
      break;
    }
  if (op->getNumResults() > 0) {
    Type element = getElementTypeOrSelf(op->getResult(0).getType());
    if (element.isIntOrFloat())
      loops.elementBits = std::max(8u, element.getIntOrFloatBitWidth());
  }
  return loops;
}

int64_t ke::vectorElements(unsigned elementBits) {
  return std::max<int64_t>(1, 128 / elementBits);
}

SmallVector<int64_t> ke::threadsPerLoop(const GpuLoops &loops,
                                        ArrayRef<int64_t> block,
                                        ArrayRef<int64_t> thread) {
  SmallVector<int64_t> threads;
  for (unsigned loop : loops.mapped) {
    int64_t b = std::min(block[loop], loops.ranges[loop]);
    int64_t t = std::min(std::max<int64_t>(1, thread[loop]), b);
    threads.push_back(llvm::divideCeil(b, t));
  }
  return threads;
}

std::array<int64_t, 3> ke::blockDims(ArrayRef<int64_t> threads) {
  assert(threads.size() <= 3 && "a block has at most three dimensions");
  std::array<int64_t, 3> dims{1, 1, 1};
  for (auto [position, count] : llvm::enumerate(llvm::reverse(threads)))
    dims[position] = count;
  return dims;
}

LogicalResult ke::checkBlockLimits(const TargetDescription &target,
                                   std::array<int64_t, 3> dims,
                                   int64_t registersPerThread,
                                   std::string &reason) {
  int64_t threads = dims[0] * dims[1] * dims[2];
  if (threads > target.gpu.maxThreadsPerBlock) {
    reason = llvm::formatv("{0} threads per block exceed the {1} allowed",
                           threads, target.gpu.maxThreadsPerBlock);
    return failure();
  }
  // Per-dimension limits of CUDA and HIP alike.
  if (dims[0] > 1024 || dims[1] > 1024 || dims[2] > 64) {
    reason = llvm::formatv("block of {0}x{1}x{2} threads exceeds the "
                           "per-dimension limits (1024, 1024, 64)",
                           dims[0], dims[1], dims[2]);
    return failure();
  }
  if (registersPerThread > target.gpu.maxRegistersPerThread) {
    reason = llvm::formatv("about {0} registers per thread exceed the {1} "
                           "allowed",
                           registersPerThread,
                           target.gpu.maxRegistersPerThread);
    return failure();
  }
  if (registersPerThread * threads > target.gpu.registersPerMultiprocessor) {
    reason = llvm::formatv("{0} threads of about {1} registers exceed the {2} "
                           "registers of a multiprocessor",
                           threads, registersPerThread,
                           target.gpu.registersPerMultiprocessor);
    return failure();
  }
  return success();
}

uint64_t ke::staticSharedMemoryLimit(const TargetDescription &target) {
  uint64_t limit = target.gpu.sharedMemoryPerBlockBytes;
  if (target.family == TargetFamily::Cuda)
    limit = std::min<uint64_t>(limit, 48 * 1024);
  return limit;
}

std::string ke::mappingAttr(llvm::StringRef kind, unsigned position,
                            unsigned count) {
  assert(count <= 3 && position < count &&
         "a mapping position among at most three (x, y, z)");
  static const char *const ids[] = {"x", "y", "z"};
  return ("#gpu." + kind + "<" + ids[count - 1 - position] + ">").str();
}

std::string ke::mappingList(llvm::StringRef kind, const GpuLoops &loops,
                            ArrayRef<unsigned> tiled) {
  SmallVector<std::string> attrs;
  for (unsigned loop : tiled) {
    unsigned position = llvm::find(loops.mapped, loop) - loops.mapped.begin();
    assert(position < loops.mapped.size() && "tiled loops must be mapped");
    attrs.push_back(mappingAttr(kind, position, loops.mapped.size()));
  }
  return "[" + llvm::join(attrs, ", ") + "]";
}

std::string ke::tileUsingForallMapped(ScriptWriter &w,
                                      const std::string &target,
                                      ArrayRef<int64_t> sizes,
                                      const std::string &mapping,
                                      std::string &forall) {
  std::string tiled = w.fresh("op");
  forall = w.fresh("forall");
  w.line(tiled + ", " + forall + " = transform.structured.tile_using_forall " +
         target + " tile_sizes " + ScriptWriter::list(sizes) +
         " (mapping = " + mapping +
         ") : (!transform.any_op) -> (!transform.any_op, !transform.any_op)");
  return tiled;
}

void ke::emitGpuEpilogue(ScriptWriter &w, std::array<int64_t, 3> dims,
                         bool mapToBlocks, bool eliminateBarriers,
                         std::optional<std::array<int64_t, 3>> grid) {
  w.comment("vectorize the static per-thread tiles and lower the vector ops");
  w.vectorizeFunction(
      {"vector.lower_contraction lowering_strategy = \"outerproduct\"",
       "vector.lower_multi_reduction lowering_strategy = \"innerreduction\"",
       "vector.transfer_permutation_patterns", "vector.lower_outerproduct",
       "canonicalization"});
  std::string func = w.fresh("func"), bufferized = w.fresh("func");
  w.line(func + " = transform.structured.match ops{[\"func.func\"]} in %root "
                ": (!transform.any_op) -> !transform.any_op");
  w.comment("bufferize in place on the kernel's buffers");
  w.line(bufferized + " = transform.bufferization.one_shot_bufferize " + func +
         " : (!transform.any_op) -> !transform.any_op");
  if (!mapToBlocks)
    return;
  std::string launch = w.fresh("launch");
  w.comment("block foralls -> gpu.launch, thread foralls -> thread ids "
            "(with a barrier after each)");
  std::string gridDims =
      grid ? llvm::formatv(" grid_dims = [{0}, {1}, {2}]", (*grid)[0],
                           (*grid)[1], (*grid)[2])
                 .str()
           : "";
  w.line(launch + " = transform.gpu.map_forall_to_blocks " + bufferized +
         " generate_gpu_launch" + gridDims +
         " : (!transform.any_op) -> !transform.any_op");
  w.line(llvm::formatv("{0} = transform.gpu.map_nested_forall_to_threads {1} "
                       "block_dims = [{2}, {3}, {4}] : (!transform.any_op) -> "
                       "!transform.any_op",
                       w.fresh("launch"), launch, dims[0], dims[1], dims[2]));
  if (!eliminateBarriers)
    return;
  // map_nested_forall_to_threads puts a barrier after every thread forall;
  // many only separate a thread's accesses from its own (a partial result's
  // init and update) or from memory nobody touches until the next barrier.
  // Upstream's barrier elimination keeps each barrier that orders a
  // conflicting pair of accesses not ordered by another one.
  std::string kernelFunc = w.fresh("func");
  w.line(kernelFunc + " = transform.structured.match ops{[\"func.func\"]} in "
                      "%root : (!transform.any_op) -> !transform.any_op");
  w.line("transform.apply_patterns to " + kernelFunc + " {");
  w.line("  transform.apply_patterns.gpu.eliminate_barriers");
  w.line("} : !transform.any_op");
}

std::string ke::tileRowInterleaved(ScriptWriter &w, const std::string &op,
                                   unsigned rank, int64_t threads,
                                   int64_t vec, std::string &loop,
                                   std::string &forall) {
  SmallVector<std::string> loops;
  std::string stepped =
      w.tileUsingFor(op, lastDimTile(rank, threads * vec), loops);
  loop = w.fresh("loop");
  w.line(loop + " = transform.cast " + loops.front() +
         " : !transform.op<\"scf.for\"> to !transform.any_op");
  return tileUsingForallMapped(w, stepped, lastDimTile(rank, vec),
                               "[#gpu.thread<x>]", forall);
}

LoopNestDescription ke::describeRowPerBlock(ArrayRef<int64_t> ranges,
                                            int64_t threads, int64_t inner) {
  unsigned rank = ranges.size();
  LoopNestDescription d;
  d.ranges.assign(ranges.begin(), ranges.end());
  d.reduction.assign(rank, false);
  d.reduction.back() = true;
  SmallVector<int64_t> block(rank, 1);
  block.back() = 0;
  d.addLevel(TileLevelRole::Threads, block, /*parallel=*/true);
  int64_t chunk = ranges.back() / threads;
  d.addLevel(TileLevelRole::Register, lastDimTile(rank, chunk),
             /*parallel=*/true);
  if (inner > 0)
    d.addLevel(TileLevelRole::Inner, lastDimTile(rank, inner),
               /*parallel=*/false);
  d.threads = threads;
  d.vectorLoop = rank - 1;
  d.vectorWidth = inner > 0 ? inner : chunk;
  return d;
}

SmallVector<int64_t> ke::rowThreadChoices(int64_t cols,
                                          const TargetDescription &target,
                                          int64_t maxChunk) {
  SmallVector<int64_t> choices;
  int64_t warp = target.gpu.warpSize;
  for (int64_t t = warp;
       t <= std::min<int64_t>(target.gpu.maxThreadsPerBlock, cols); t *= 2)
    if (cols % t == 0 && (maxChunk == 0 || cols / t <= maxChunk))
      choices.push_back(t);
  return choices;
}

Knob ke::makeRowVectorKnob(llvm::StringRef name, const Knob &threads,
                           int64_t cols, int64_t vector, int64_t most) {
  // By default a 128-bit vector, or less when the default thread count
  // leaves each thread fewer elements (wave64 on short rows).
  Knob knob{name.str(), {}, 0};
  for (int64_t v = 1; v <= most; v *= 2)
    knob.choices.push_back(v);
  int64_t chunk = cols / threads.choices[threads.defaultIndex];
  for (auto [index, v] : llvm::enumerate(knob.choices))
    if (v <= vector && chunk % v == 0)
      knob.defaultIndex = index;
  return knob;
}

SmallVector<int64_t> ke::lastDimTile(unsigned rank, int64_t size) {
  assert(rank > 0 && "a last dimension needs a rank of at least 1");
  SmallVector<int64_t> tiles(rank, 0);
  tiles.back() = size;
  return tiles;
}

void ke::emitRowReductionOverThreads(ScriptWriter &w, const std::string &op,
                                     const std::string &init,
                                     const std::string &producer,
                                     unsigned rank, int64_t threads,
                                     int64_t kvec) {
  auto [fill, partial, combine, forall] = w.tileReductionUsingForall(
      op, lastDimTile(rank, threads), "[#gpu.thread<x>]");
  if (!producer.empty()) {
    std::string fused = producer;
    w.fuseInto(fused, forall);
  }
  // The partial results: one column per thread, each initialized by its
  // own thread, in shared memory so that the combining thread reads them.
  std::string fillForall, initForall, combineForall;
  tileUsingForallMapped(w, fill, lastDimTile(rank, 1), "[#gpu.thread<x>]",
                        fillForall);
  w.bufferizeDestination(fillForall, kWorkgroup);
  // The row's result, in shared memory too: every thread reads it after.
  tileUsingForallMapped(w, init, lastDimTile(rank - 1, 1), "[#gpu.thread<x>]",
                        initForall);
  w.bufferizeDestination(initForall, kWorkgroup);
  SmallVector<int64_t> combineTiles = lastDimTile(rank - 1, 1);
  combineTiles.push_back(0);
  tileUsingForallMapped(w, combine, combineTiles, "[#gpu.thread<x>]",
                        combineForall);
  if (kvec > 0) {
    SmallVector<std::string> loops;
    w.tileUsingFor(partial, lastDimTile(rank, kvec), loops);
  }
}
