//===- DistributedTuning.h - Tuning with the ranks of an mpirun -*- C++ -*-===//
//
// `mpirun -n N ke-opt tune ...` (docs/tuning.md, Tuning on a cluster).
// Every rank parses the same inputs into the same workloads. Rank 0 runs
// the search, the cost model, the database and the output. The other ranks
// serve (serveTuning): each makes its own evaluator per workload (its own
// reference, its own GPU: the node-local rank picks it) and measures the
// shares of batches it is sent, building in its own children on its own
// cores.
//
// Rank 0's evaluators (DistributedEvaluator, made by TuningCoordinator's
// factory) measure the workloads' references, untuned defaults and
// one-schedule sketches with rank 0's own evaluator, splitting each batch
// into one contiguous share per rank. The search's rounds then run
// concurrently (getConcurrentRounds, ke/Search/ConcurrentRounds.h): a
// round's batch goes to free devices, one when enough workloads are left to
// keep every device busy, several when fewer are, and rank 0 searches the
// next rounds while they measure. Rank 0's own device is then served by a
// child forked with rank 0's evaluators, so that its measurements never
// wait for the search.
//
// A rank that cannot evaluate a workload (no device of its own, a failed
// reference) answers with why, and rank 0 measures that share itself. A
// rank that dies ends the run through the launcher; every record measured
// until then is in the database, and the rerun resumes from it.
//
//===----------------------------------------------------------------------===//
#ifndef KE_DISTRIBUTED_DISTRIBUTEDTUNING_H
#define KE_DISTRIBUTED_DISTRIBUTEDTUNING_H

#include "ke/Distributed/Mpi.h"
#include "ke/Search/Tuner.h"

namespace ke {

/// A candidate's record as a serving rank sends it back: everything but
/// the schedule, which rank 0 already has.
llvm::json::Value candidateRecordToMessage(const CandidateRecord &record);
/// The record of `schedule` from candidateRecordToMessage's JSON.
llvm::Expected<CandidateRecord>
candidateRecordFromMessage(const llvm::json::Value &message,
                           const Schedule &schedule);

/// The searching side of a tuning run whose rounds run concurrently: rank
/// 0 of an MPI run (while it lives, the other ranks serve it; its
/// destructor, or stop(), tells them to stop), or, without `world`, a GPU
/// tuning run of one process, whose device serves two rounds in turn (one
/// measured while the next is searched).
class TuningCoordinator {
public:
  /// `measuredBy` names rank 0's own process and device in its records
  /// (empty in a run of one process).
  TuningCoordinator(MpiWorld *world, std::string measuredBy);
  ~TuningCoordinator();

  /// The evaluator factory of TuneOptions: rank 0's own evaluator, with
  /// the serving ranks told to make theirs.
  EvaluatorFactory getEvaluatorFactory();
  /// Rounds of different workloads at once, one device each (TuneOptions::
  /// concurrent): rank 0 searches while every rank, rank 0's own device
  /// through a child of rank 0, measures.
  ConcurrentRounds *getConcurrentRounds();
  /// Tells every serving rank to stop (once).
  void stop();
  /// Names rank 0's process and device in its records.
  void setMeasuredBy(std::string measuredBy);

  struct State;

private:
  std::shared_ptr<State> state;
};

/// What a serving rank knows of itself.
struct ServingRank {
  /// Names the rank and its device in the records it measures.
  std::string measuredBy;
  /// Why this rank cannot measure at all (its device missing, its inputs
  /// unreadable); it then answers every share with it. Empty when it can.
  std::string setupError;
};

/// A serving rank's loop: makes the evaluators rank 0 asks for (for
/// `workloads`, as tuneWorkloads would with `options`) and measures the
/// shares it is sent, until rank 0 says stop. Fails when a message cannot
/// be sent or received.
llvm::Error serveTuning(MpiWorld &world, llvm::ArrayRef<Workload> workloads,
                        const TargetDescription &target,
                        const TuneOptions &options, const ServingRank &self);

} // namespace ke

#endif // KE_DISTRIBUTED_DISTRIBUTEDTUNING_H
