//===- Passes.td - ke's passes for MLIR pass pipelines -----*- tablegen -*-===//
//
// The passes ke contributes to MLIR pass pipelines: ke-opt's mlir-opt mode,
// `ke-opt compile`, and upstream mlir-opt through the pass plugin
// (KePlugin.so). See docs/compile.md.
//
//===----------------------------------------------------------------------===//
#ifndef KE_TRANSFORMS_PASSES
#define KE_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def ApplyTunedSchedulesPass
    : Pass<"ke-apply-tuned-schedules", "::mlir::ModuleOp"> {
  let summary = "Schedule every workload with its best tuned record, or the "
                "default schedule";
  let description = [{
    For each workload anchor on tensors (a linalg structured op or
    linalg.softmax with static shapes), grouped with the fills of its inits
    and its single elementwise consumer as `ke-opt tune` measured it (see
    ke/Workload/Kernel.h), this pass looks up the best valid record of the
    anchor's workload key for `target` and the current CPU pipeline hash in
    the tuning database `db`. It rebuilds that record's schedule (sketch rule
    and knob values) against the op, or takes the rule's default schedule
    when there is no usable record, and applies the transform script to the
    group alone: the group is outlined into a private function of a scratch
    module shaped like the kernel the record was measured on, scheduled
    there, and inlined back in place of the original ops.

    Every scheduled group gets a remark at its anchor saying which schedule
    was applied. scf.forall loops of a schedule that asks for OpenMP threads
    carry `ke.num_threads`; ke's CPU lowering gives each loop that many
    threads. A `db` that does not exist or cannot be read is an error; no
    `db` at all means default schedules only.

    Example: `--ke-apply-tuned-schedules="db=ke-tuning.db target=cpu"`.
  }];
  let options = [
    Option<"db", "db", "std::string", /*default=*/"\"\"",
           "Tuning database (SQLite) to take records from; empty: apply "
           "default schedules only">,
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "Target string the records were tuned for (see `ke-opt target`)">,
  ];
}

#endif // KE_TRANSFORMS_PASSES
