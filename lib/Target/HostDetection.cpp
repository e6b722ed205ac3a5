//===- HostDetection.cpp - What `cpu` means on this machine ---------------===//
//
// Reads the host's CPU name and features from LLVM, its core count from the
// scheduler affinity (so containers and taskset limits are honoured), and its
// cache sizes from Linux sysfs. Anything that cannot be read keeps the
// conservative defaults of CpuDescription.
//
//===----------------------------------------------------------------------===//

#include "ke/Target/Target.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Threading.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>

using namespace ke;
using llvm::StringRef;

namespace {

/// Reads a small sysfs file, trimmed; empty when it does not exist.
std::string readSysfs(const llvm::Twine &path) {
  auto buffer = llvm::MemoryBuffer::getFileAsStream(path);
  if (!buffer)
    return "";
  return (*buffer)->getBuffer().trim().str();
}

/// Parses sysfs sizes such as "48K", "2048K" or "32M".
uint64_t parseCacheSize(StringRef text) {
  uint64_t scale = 1;
  if (text.consume_back("K"))
    scale = 1024;
  else if (text.consume_back("M"))
    scale = 1024 * 1024;
  uint64_t value = 0;
  if (text.getAsInteger(10, value))
    return 0;
  return value * scale;
}

/// Counts the CPUs in a sysfs list such as "0-3,8,10-11".
unsigned countCpuList(StringRef list) {
  unsigned count = 0;
  llvm::SmallVector<StringRef> ranges;
  list.split(ranges, ',', -1, /*KeepEmpty=*/false);
  for (StringRef range : ranges) {
    auto [lo, hi] = range.split('-');
    unsigned a = 0, b = 0;
    if (lo.getAsInteger(10, a))
      continue;
    if (hi.empty() || hi.getAsInteger(10, b))
      b = a;
    count += b >= a ? b - a + 1 : 0;
  }
  return count;
}

void detectCaches(CpuDescription &cpu) {
  for (int index = 0; index < 8; ++index) {
    std::string dir =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    std::string level = readSysfs(dir + "/level");
    if (level.empty())
      break;
    std::string type = readSysfs(dir + "/type");
    uint64_t size = parseCacheSize(readSysfs(dir + "/size"));
    if (size == 0 || type == "Instruction")
      continue;
    if (level == "1")
      cpu.l1dBytes = size;
    else if (level == "2") {
      cpu.l2Bytes = size;
      unsigned sharers =
          countCpuList(readSysfs(dir + "/shared_cpu_list"));
      // Hyper-threads share a core's L2; count cores, not logical CPUs.
      unsigned siblings = countCpuList(
          readSysfs("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list"));
      cpu.l2SharedByCores = std::max(1u, sharers / std::max(1u, siblings));
    } else if (level == "3")
      cpu.l3Bytes = size;
  }
}

} // namespace

TargetDescription ke::detectHostTarget() {
  TargetDescription t;
  t.name = "cpu";
  t.family = TargetFamily::Cpu;
  t.detectedFromHost = true;
  t.triple = llvm::sys::getProcessTriple();
  t.chip = llvm::sys::getHostCPUName().str();

  llvm::SmallVector<std::string> enabled;
  for (const auto &feature : llvm::sys::getHostCPUFeatures())
    if (feature.second)
      enabled.push_back("+" + feature.first().str());
  llvm::sort(enabled);
  t.features = llvm::join(enabled, ",");
  auto has = [&](StringRef name) {
    return llvm::is_contained(enabled, ("+" + name).str());
  };

  CpuDescription &cpu = t.cpu;
  if (has("avx512f"))
    cpu.vectorBits = 512;
  else if (has("avx"))
    cpu.vectorBits = 256;
  else if (has("sve")) {
    cpu.vectorBits = 128;
    cpu.scalableVectors = true;
  } else
    cpu.vectorBits = 128;

  // Physical cores, but never more than the CPUs this process may run on.
  unsigned usable = llvm::hardware_concurrency().compute_thread_count();
  int physical = llvm::get_physical_cores();
  cpu.cores = std::max(1u, physical > 0
                               ? std::min<unsigned>(physical, usable)
                               : usable);
  detectCaches(cpu);
  return t;
}
