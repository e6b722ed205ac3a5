//===- Subcommands.cpp - The subcommands and their shared options --------===//

#include "Subcommands.h"

namespace cl = llvm::cl;
using namespace ke;

cl::SubCommand &ke::getWorkloadsCommand() {
  static cl::SubCommand command(
      "workloads",
      "Print the tuning workloads of MLIR files: one JSON object per line "
      "with key, op, kind, count, shapes, element types, flops, bytes and "
      "fusable neighbours");
  return command;
}
cl::SubCommand &ke::getTargetCommand() {
  static cl::SubCommand command(
      "target", "Describe targets as JSON, one per line (default: cpu, this "
                "machine). Forms: cpu, cpu:<model>, cuda:sm_<NN>, "
                "rocm:gfx<N>; an unknown name lists them all");
  return command;
}
cl::SubCommand &ke::getSketchesCommand() {
  static cl::SubCommand command(
      "sketches", "Print, for each workload, the sketch rule that applies, "
                  "its knobs and the transform script of its default (or "
                  "given) knob values");
  return command;
}
cl::SubCommand &ke::getTuneCommand() {
  static cl::SubCommand command(
      "tune", "Search schedules for the workloads of MLIR files on this "
              "CPU or a GPU (evolutionary search with a cost model, then "
              "droplet search; --search=random for the baseline) and store "
              "every measured candidate in the tuning database");
  return command;
}
cl::SubCommand &ke::getCompileCommand() {
  static cl::SubCommand command(
      "compile", "Apply the best tuned schedule (or the default) to each "
                 "workload and emit code: an object file for cpu targets "
                 "(x86-64, AArch64, A64FX), PTX/cubin for cuda targets, "
                 "HSACO for rocm targets (--emit=scheduled|mlir|llvm|asm|obj)");
  return command;
}
cl::SubCommand &ke::getBenchCommand() {
  static cl::SubCommand command(
      "bench", "Time the untuned-default, best-recorded and reference code "
               "of each workload, and check it");
  return command;
}
cl::SubCommand &ke::getDbCommand() {
  static cl::SubCommand command(
      "db", "Read and move tuning records: list (per workload and target), "
            "best (the fastest valid record of each), export (JSONL), "
            "import FILE.jsonl");
  return command;
}

cl::list<std::string> ke::inputFiles(cl::Positional, cl::ZeroOrMore,
                                     cl::desc("<input.mlir>..."),
                                     cl::sub(getTuneCommand()),
                                     cl::sub(getCompileCommand()),
                                     cl::sub(getBenchCommand()),
                                     cl::sub(getSketchesCommand()));
cl::opt<std::string> ke::targetOption(
    "target", cl::desc("Target (see `ke-opt target --help`)"), cl::init("cpu"),
    cl::sub(getTuneCommand()), cl::sub(getCompileCommand()),
    cl::sub(getBenchCommand()), cl::sub(getSketchesCommand()));
cl::opt<bool> ke::allowTF32Option(
    "allow-tf32",
    cl::desc("Let f32 contractions run on TF32 tensor cores (CUDA sm_80 and "
             "later; 10 mantissa bits: changes numerics, off by default as "
             "in PyTorch). Same as naming the target cuda:sm_NN+tf32"),
    cl::init(false), cl::sub(getTuneCommand()), cl::sub(getCompileCommand()),
    cl::sub(getBenchCommand()), cl::sub(getSketchesCommand()));
cl::opt<std::string> ke::dbOption(
    "db", cl::desc("Tuning database (default $KE_DB or ke-tuning.db)"),
    cl::sub(getTuneCommand()), cl::sub(getCompileCommand()),
    cl::sub(getBenchCommand()), cl::sub(getDbCommand()));
cl::opt<uint64_t> ke::seedOption("seed", cl::desc("Random seed"), cl::init(0),
                                 cl::sub(getTuneCommand()),
                                 cl::sub(getBenchCommand()));

cl::opt<bool> ke::noPrepareGraphOption(
    "no-prepare-graph",
    cl::desc("Take the inputs as they are: skip the graph preparation "
             "(transposes and broadcasts folded into their consumers, "
             "elementwise chains fused, dead results dropped; "
             "docs/workloads.md)"),
    cl::init(false), cl::sub(getWorkloadsCommand()),
    cl::sub(getSketchesCommand()), cl::sub(getTuneCommand()),
    cl::sub(getCompileCommand()), cl::sub(getBenchCommand()));
cl::opt<bool> ke::demoteF64Option(
    "demote-f64",
    cl::desc("Graph preparation: compute in f32 what the input computes in "
             "f64 from f32 data, as PyTorch's kernels do (default true; "
             "--demote-f64=false keeps f64)"),
    cl::init(true), cl::sub(getWorkloadsCommand()),
    cl::sub(getSketchesCommand()), cl::sub(getTuneCommand()),
    cl::sub(getCompileCommand()), cl::sub(getBenchCommand()));

llvm::ArrayRef<Subcommand> ke::getSubcommands() {
  static const Subcommand subcommands[] = {
      {&getWorkloadsCommand(), runWorkloadsCommand},
      {&getTargetCommand(), runTargetCommand},
      {&getSketchesCommand(), runSketchesCommand},
      {&getTuneCommand(), runTuneCommand},
      {&getCompileCommand(), runCompileCommand},
      {&getBenchCommand(), runBenchCommand},
      {&getDbCommand(), runDbCommand}};
  return subcommands;
}
