//===- ConcurrentRounds.h - Rounds of several workloads at once -*- C++ -*-===//
//
// With several measuring devices (the ranks of an MPI run, docs/tuning.md),
// the tuner keeps them busy by running rounds of different workloads at
// once: while one rank measures workload A's round, the search picks
// workload B's next round and sends it to another rank. The search code
// (cost models, evolution, droplet, the database and the outputs) stays
// single-threaded in effect: each round runs in a thread of its own, but
// only the thread holding the `baton` runs; a round gives the baton up only
// while it waits for its measurements (inside Evaluator::evaluateBatch, on
// `changed`). The tuner's own thread holds the baton between its calls to
// wait(), in which the implementation moves messages to and from the
// devices.
//
//===----------------------------------------------------------------------===//
#ifndef KE_SEARCH_CONCURRENTROUNDS_H
#define KE_SEARCH_CONCURRENTROUNDS_H

#include <condition_variable>
#include <mutex>

namespace ke {

class ConcurrentRounds {
public:
  virtual ~ConcurrentRounds();

  /// Rounds that may be in flight at once (the devices that measure).
  virtual unsigned getMaxRounds() const = 0;
  /// Called once with the baton held, after every workload is prepared and
  /// before the first concurrent round; false when rounds cannot run
  /// concurrently after all (the tuner then runs them one by one).
  virtual bool begin() = 0;
  /// Called with the baton held by the tuner's own thread while rounds are
  /// in flight: moves messages to and from the devices, then waits on
  /// `changed` for at most a few milliseconds.
  virtual void wait(std::unique_lock<std::mutex> &baton) = 0;
  /// Called once with the baton held, after the last round.
  virtual void end() = 0;
  /// Told by the tuner whenever it launched or ended rounds: rounds in
  /// flight but not measuring yet will want a device soon, and when none
  /// will, a round's batch may take every free device.
  void setRoundsInFlight(unsigned count) { inFlight = count; }
  unsigned getRoundsInFlight() const { return inFlight; }

  /// Held by whichever thread runs search code.
  std::mutex baton;
  /// Notified whenever a round may go on (its records came, a device
  /// became free) or a round ended.
  std::condition_variable changed;

private:
  unsigned inFlight = 0;
};

} // namespace ke

#endif // KE_SEARCH_CONCURRENTROUNDS_H
