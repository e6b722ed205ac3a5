//===- Mpi.cpp - The ranks of an mpirun, through OpenMPI at run time ------===//
//
// OpenMPI's handles (MPI_COMM_WORLD, MPI_BYTE) are addresses of global
// objects in libmpi, so the library is opened with RTLD_GLOBAL (its plugins
// resolve symbols against it) and the handles are looked up like the
// functions.
//
//===----------------------------------------------------------------------===//

#include "ke/Distributed/Mpi.h"

#include "llvm/Support/Process.h"

#include <chrono>
#include <thread>

#ifdef KE_HAVE_MPI
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>
#include <dlfcn.h>
#endif

using namespace ke;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 message.str());
}

static std::optional<int> getIntegerEnv(const char *name) {
  std::optional<std::string> value = llvm::sys::Process::GetEnv(name);
  int parsed;
  if (!value || llvm::StringRef(*value).getAsInteger(10, parsed))
    return std::nullopt;
  return parsed;
}

bool ke::isLaunchedByMpi() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"})
    if (std::optional<int> size = getIntegerEnv(name))
      return *size > 1;
  return false;
}

#ifndef KE_HAVE_MPI

bool ke::isMpiSupported() { return false; }

struct MpiWorld::Api {};

llvm::Expected<std::unique_ptr<MpiWorld>> MpiWorld::create() {
  return makeError("this ke-opt was built without MPI support (Debian's "
                   "libopenmpi-dev was not there at configure time)");
}
MpiWorld::~MpiWorld() = default;
llvm::Error MpiWorld::send(int, llvm::StringRef) {
  return makeError("no MPI");
}
llvm::Expected<std::optional<MpiMessage>>
MpiWorld::receive(int, std::optional<double>) {
  return makeError("no MPI");
}
void MpiWorld::abort(int code) { std::_Exit(code); }

#else

bool ke::isMpiSupported() { return true; }

/// The functions and handles ke uses, resolved in the opened library.
struct MpiWorld::Api {
  void *library = nullptr;
  decltype(&MPI_Init_thread) init = nullptr;
  decltype(&MPI_Finalize) finalize = nullptr;
  decltype(&MPI_Comm_rank) commRank = nullptr;
  decltype(&MPI_Comm_size) commSize = nullptr;
  decltype(&MPI_Get_processor_name) processorName = nullptr;
  decltype(&MPI_Send) sendBytes = nullptr;
  decltype(&MPI_Recv) receiveBytes = nullptr;
  decltype(&MPI_Probe) probe = nullptr;
  decltype(&MPI_Iprobe) probeNow = nullptr;
  decltype(&MPI_Get_count) getCount = nullptr;
  decltype(&MPI_Abort) abortAll = nullptr;
  MPI_Comm world = nullptr;
  MPI_Datatype byte = nullptr;
};

llvm::Expected<std::unique_ptr<MpiWorld>> MpiWorld::create() {
  auto api = std::make_unique<Api>();
  std::string name = llvm::sys::Process::GetEnv("KE_MPI_LIBRARY")
                         .value_or("libmpi.so.40");
  api->library = dlopen(name.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!api->library) {
    const char *why = dlerror();
    return makeError("no OpenMPI library (" + name + ": " +
                     (why ? why : "dlopen failed") +
                     "); install Debian's openmpi-bin, or point "
                     "LD_LIBRARY_PATH or $KE_MPI_LIBRARY at OpenMPI's "
                     "libmpi.so.40");
  }
  auto resolve = [&](auto &slot, const char *symbol) -> bool {
    void *address = dlsym(api->library, symbol);
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(address);
    return address != nullptr;
  };
  struct {
    const char *symbol;
    bool found;
  } symbols[] = {
      {"MPI_Init_thread", resolve(api->init, "MPI_Init_thread")},
      {"MPI_Finalize", resolve(api->finalize, "MPI_Finalize")},
      {"MPI_Comm_rank", resolve(api->commRank, "MPI_Comm_rank")},
      {"MPI_Comm_size", resolve(api->commSize, "MPI_Comm_size")},
      {"MPI_Get_processor_name",
       resolve(api->processorName, "MPI_Get_processor_name")},
      {"MPI_Send", resolve(api->sendBytes, "MPI_Send")},
      {"MPI_Recv", resolve(api->receiveBytes, "MPI_Recv")},
      {"MPI_Probe", resolve(api->probe, "MPI_Probe")},
      {"MPI_Iprobe", resolve(api->probeNow, "MPI_Iprobe")},
      {"MPI_Get_count", resolve(api->getCount, "MPI_Get_count")},
      {"MPI_Abort", resolve(api->abortAll, "MPI_Abort")},
      // OpenMPI's handles: MPI_COMM_WORLD and MPI_BYTE are their addresses.
      {"ompi_mpi_comm_world",
       resolve(api->world, "ompi_mpi_comm_world")},
      {"ompi_mpi_byte", resolve(api->byte, "ompi_mpi_byte")},
  };
  for (const auto &symbol : symbols)
    if (!symbol.found)
      return makeError(name + " lacks " + symbol.symbol +
                       ": ke needs OpenMPI's library (libmpi.so.40, OpenMPI "
                       "4 or 5), not another MPI's");

  // Candidates run in forked children that never call MPI; the parent
  // calls MPI from its main thread only, while rank 0's rounds run in
  // threads of their own (ke/Search/ConcurrentRounds.h).
  int provided = 0;
  if (api->init(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) !=
      MPI_SUCCESS)
    return makeError("MPI_Init_thread failed");
  std::unique_ptr<MpiWorld> world(new MpiWorld());
  world->api = std::move(api);
  Api &a = *world->api;
  a.commRank(a.world, &world->rank);
  a.commSize(a.world, &world->size);
  char processor[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  if (a.processorName(processor, &length) == MPI_SUCCESS)
    world->nodeName.assign(processor, length);
  // The launchers' local rank: OpenMPI's, then Slurm's, then MPICH's.
  for (const char *name : {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID",
                           "MPI_LOCALRANKID"})
    if (std::optional<int> local = getIntegerEnv(name)) {
      world->localRank = *local;
      break;
    }
  for (const char *name : {"OMPI_COMM_WORLD_LOCAL_SIZE",
                           "SLURM_NTASKS_PER_NODE", "MPI_LOCALNRANKS"})
    if (std::optional<int> local = getIntegerEnv(name)) {
      world->localSize = *local;
      break;
    }
  return world;
}

MpiWorld::~MpiWorld() {
  if (api && api->finalize)
    api->finalize();
}

llvm::Error MpiWorld::send(int destination, llvm::StringRef text) {
  if (api->sendBytes(text.data(), int(text.size()), api->byte, destination,
                     /*tag=*/0, api->world) != MPI_SUCCESS)
    return makeError("MPI_Send to rank " + llvm::Twine(destination) +
                     " failed");
  return llvm::Error::success();
}

llvm::Expected<std::optional<MpiMessage>>
MpiWorld::receive(int source, std::optional<double> timeoutSeconds) {
  int from = source < 0 ? MPI_ANY_SOURCE : source;
  MPI_Status status;
  if (timeoutSeconds) {
    // Polled, so that a rank that stopped answering is noticed.
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::duration<double>(*timeoutSeconds);
    int arrived = 0;
    while (true) {
      if (api->probeNow(from, 0, api->world, &arrived, &status) !=
          MPI_SUCCESS)
        return makeError("MPI_Iprobe failed");
      if (arrived)
        break;
      if (std::chrono::steady_clock::now() > deadline)
        return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  } else if (api->probe(from, 0, api->world, &status) != MPI_SUCCESS) {
    return makeError("MPI_Probe failed");
  }
  int count = 0;
  api->getCount(&status, api->byte, &count);
  MpiMessage message;
  message.source = status.MPI_SOURCE;
  message.text.resize(count);
  if (api->receiveBytes(message.text.data(), count, api->byte,
                        status.MPI_SOURCE, 0, api->world,
                        MPI_STATUS_IGNORE) != MPI_SUCCESS)
    return makeError("MPI_Recv from rank " + llvm::Twine(status.MPI_SOURCE) +
                     " failed");
  return message;
}

void MpiWorld::abort(int code) {
  api->abortAll(api->world, code);
  std::_Exit(code);
}

#endif
