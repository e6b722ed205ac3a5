//===- GpuBinaryFile.cpp - A lowered GPU kernel group in a file -----------===//

#include "GpuBinaryFile.h"

#include "llvm/Support/Base64.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace ke;

static llvm::json::Array toJSON(const std::array<uint32_t, 3> &v) {
  return llvm::json::Array{v[0], v[1], v[2]};
}

llvm::Error ke::writeGpuKernelBinary(llvm::StringRef path,
                                     const GpuKernelBinary &binary) {
  llvm::json::Array launches;
  for (const GpuLaunch &launch : binary.launches) {
    llvm::json::Array arguments;
    for (const GpuLaunchArgument &arg : launch.arguments)
      arguments.push_back(llvm::json::Array{unsigned(arg.kind), arg.buffer,
                                            arg.field, arg.value});
    launches.push_back(llvm::json::Object{
        {"kernel", launch.kernelName},
        {"grid", toJSON(launch.grid)},
        {"block", toJSON(launch.block)},
        {"dynamic_shared", launch.dynamicSharedMemoryBytes},
        {"arguments", std::move(arguments)}});
  }
  llvm::json::Array scratch;
  for (const GpuScratchBuffer &buffer : binary.scratch)
    scratch.push_back(llvm::json::Object{
        {"shape", llvm::json::Array(buffer.shape)}, {"bytes", buffer.bytes}});
  llvm::json::Array maps;
  for (const GpuTensorMap &map : binary.tensorMaps)
    maps.push_back(llvm::json::Object{{"scratch", map.scratch},
                                      {"buffer", map.buffer},
                                      {"data_type", map.dataType},
                                      {"element_bytes", map.elementBytes},
                                      {"shape", llvm::json::Array(map.shape)},
                                      {"box", llvm::json::Array(map.box)},
                                      {"swizzle", map.swizzleBytes}});
  llvm::json::Object o{{"format", binary.format},
                       {"image", llvm::encodeBase64(binary.image)},
                       {"assembly", binary.assembly},
                       {"launches", std::move(launches)},
                       {"scratch", std::move(scratch)},
                       {"tensor_maps", std::move(maps)},
                       {"assembler_log", binary.assemblerLog},
                       {"registers", binary.registers},
                       {"spill_store_bytes", binary.spillStoreBytes},
                       {"spill_load_bytes", binary.spillLoadBytes}};
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec);
  if (ec)
    return llvm::createStringError(ec, "cannot write " + path);
  out << llvm::json::Value(std::move(o));
  out.close();
  if (out.has_error())
    return llvm::createStringError(out.error(), "cannot write " + path);
  return llvm::Error::success();
}

/// The error of a file that is not what writeGpuKernelBinary wrote.
static llvm::Error malformed(llvm::StringRef path, llvm::StringRef what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "malformed GPU binary file " + path + ": " +
                                     what);
}

/// Three unsigned numbers.
static bool readTriple(const llvm::json::Array *array,
                       std::array<uint32_t, 3> &out) {
  if (!array || array->size() != 3)
    return false;
  for (unsigned i = 0; i < 3; ++i) {
    std::optional<int64_t> v = (*array)[i].getAsInteger();
    if (!v || *v < 0)
      return false;
    out[i] = uint32_t(*v);
  }
  return true;
}

llvm::Expected<GpuKernelBinary> ke::readGpuKernelBinary(llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> contents =
      llvm::MemoryBuffer::getFile(path);
  if (!contents)
    return llvm::createStringError(contents.getError(), "cannot read " + path);
  llvm::Expected<llvm::json::Value> parsed =
      llvm::json::parse((*contents)->getBuffer());
  if (!parsed)
    return parsed.takeError();
  const llvm::json::Object *o = parsed->getAsObject();
  if (!o)
    return malformed(path, "not an object");
  GpuKernelBinary binary;
  binary.format = o->getString("format").value_or("").str();
  std::vector<char> image;
  if (llvm::Error error =
          llvm::decodeBase64(o->getString("image").value_or(""), image))
    return error;
  binary.image.assign(image.begin(), image.end());
  binary.assembly = o->getString("assembly").value_or("").str();
  binary.assemblerLog = o->getString("assembler_log").value_or("").str();
  binary.registers = o->getInteger("registers").value_or(0);
  binary.spillStoreBytes = o->getInteger("spill_store_bytes").value_or(0);
  binary.spillLoadBytes = o->getInteger("spill_load_bytes").value_or(0);
  const llvm::json::Array *launches = o->getArray("launches");
  const llvm::json::Array *scratch = o->getArray("scratch");
  if (!launches || !scratch)
    return malformed(path, "no launches or scratch");
  for (const llvm::json::Value &value : *launches) {
    const llvm::json::Object *l = value.getAsObject();
    GpuLaunch launch;
    if (!l || !readTriple(l->getArray("grid"), launch.grid) ||
        !readTriple(l->getArray("block"), launch.block))
      return malformed(path, "a launch without its grid and block");
    launch.kernelName = l->getString("kernel").value_or("").str();
    launch.dynamicSharedMemoryBytes =
        l->getInteger("dynamic_shared").value_or(0);
    const llvm::json::Array *arguments = l->getArray("arguments");
    if (!arguments)
      return malformed(path, "a launch without arguments");
    for (const llvm::json::Value &a : *arguments) {
      const llvm::json::Array *fields = a.getAsArray();
      if (!fields || fields->size() != 4)
        return malformed(path, "an argument is not 4 numbers");
      std::optional<int64_t> kind = (*fields)[0].getAsInteger(),
                             buffer = (*fields)[1].getAsInteger(),
                             field = (*fields)[2].getAsInteger(),
                             v = (*fields)[3].getAsInteger();
      if (!kind || !buffer || !field || !v || *kind < 0 ||
          *kind > int64_t(GpuLaunchArgument::Kind::TensorMap))
        return malformed(path, "an argument is not 4 numbers");
      GpuLaunchArgument arg;
      arg.kind = GpuLaunchArgument::Kind(*kind);
      arg.buffer = unsigned(*buffer);
      arg.field = unsigned(*field);
      arg.value = *v;
      launch.arguments.push_back(arg);
    }
    binary.launches.push_back(std::move(launch));
  }
  for (const llvm::json::Value &value : *scratch) {
    const llvm::json::Object *b = value.getAsObject();
    const llvm::json::Array *shape = b ? b->getArray("shape") : nullptr;
    if (!shape)
      return malformed(path, "a scratch buffer without its shape");
    GpuScratchBuffer buffer;
    for (const llvm::json::Value &d : *shape)
      buffer.shape.push_back(d.getAsInteger().value_or(0));
    buffer.bytes = b->getInteger("bytes").value_or(0);
    binary.scratch.push_back(std::move(buffer));
  }
  // Files from before tensor maps have none.
  if (const llvm::json::Array *maps = o->getArray("tensor_maps")) {
    auto readList = [](const llvm::json::Array *list,
                       std::vector<int64_t> &out) {
      if (!list)
        return false;
      for (const llvm::json::Value &d : *list)
        out.push_back(d.getAsInteger().value_or(0));
      return true;
    };
    for (const llvm::json::Value &value : *maps) {
      const llvm::json::Object *m = value.getAsObject();
      GpuTensorMap map;
      if (!m || !readList(m->getArray("shape"), map.shape) ||
          !readList(m->getArray("box"), map.box))
        return malformed(path, "a tensor map without its shape and box");
      map.scratch = m->getBoolean("scratch").value_or(false);
      map.buffer = m->getInteger("buffer").value_or(0);
      map.dataType = m->getInteger("data_type").value_or(0);
      map.elementBytes = m->getInteger("element_bytes").value_or(0);
      map.swizzleBytes = m->getInteger("swizzle").value_or(0);
      binary.tensorMaps.push_back(std::move(map));
    }
  }
  return binary;
}
