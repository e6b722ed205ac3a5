# Static linking against MLIR and LLVM.
#
# Debian's exported CMake targets for the static MLIR libraries also pull in
# libLLVM.so and libMLIR.so (two copies of MLIR in one process), so ke links
# the archives by path instead: every libMLIR*.a (minus the C API and test
# libraries) plus LLVM's static component libraries, in one --start-group.
# Archive members are only pulled in when referenced, and --gc-sections drops
# the rest, so what ke registers (lib/InitAll) decides what the binary holds.
# The result depends only on libc/libm (glibc >= 2.36) and runs on machines
# with no LLVM installed.

find_program(KE_LLVM_CONFIG NAMES llvm-config-22 llvm-config
             HINTS ${LLVM_TOOLS_BINARY_DIR} REQUIRED)
execute_process(COMMAND ${KE_LLVM_CONFIG} --link-static --libs all
                OUTPUT_VARIABLE KE_LLVM_STATIC_LIBS
                OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
separate_arguments(KE_LLVM_STATIC_LIBS UNIX_COMMAND "${KE_LLVM_STATIC_LIBS}")
# llvm-config lists Polly, which Debian ships only as a plugin, not an archive.
list(FILTER KE_LLVM_STATIC_LIBS EXCLUDE REGEX "^-lPolly")
execute_process(COMMAND ${KE_LLVM_CONFIG} --libdir
                OUTPUT_VARIABLE KE_LLVM_LIBDIR
                OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)

file(GLOB KE_MLIR_STATIC_ARCHIVES "${KE_LLVM_LIBDIR}/libMLIR*.a")
list(FILTER KE_MLIR_STATIC_ARCHIVES EXCLUDE REGEX "/libMLIR(CAPI[^/]*|[^/]*Test[^/]*)\\.a$")
list(LENGTH KE_MLIR_STATIC_ARCHIVES KE_MLIR_ARCHIVE_COUNT)
message(STATUS "ke: linking ${KE_MLIR_ARCHIVE_COUNT} MLIR archives statically")

find_program(KE_LLD NAMES ld.lld-22 ld.lld HINTS ${LLVM_TOOLS_BINARY_DIR})
if(KE_LLD)
  set(KE_LINKER_FLAG "-fuse-ld=lld")
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    # g++ finds ld.lld only on PATH; point it at the versioned binary.
    get_filename_component(KE_LLD_DIR "${KE_LLD}" DIRECTORY)
    set(KE_LINKER_FLAG "-fuse-ld=lld" "-B${LLVM_TOOLS_BINARY_DIR}")
  endif()
else()
  message(WARNING "ke: ld.lld not found; GNU ld links ke-opt in ~15 s and 1.9 GB")
endif()

# An interface target that every executable linking MLIR uses.
add_library(ke_mlir_static INTERFACE)
target_link_options(ke_mlir_static INTERFACE
  ${KE_LINKER_FLAG} -Wl,--gc-sections -static-libstdc++ -static-libgcc)
target_link_libraries(ke_mlir_static INTERFACE
  -L${KE_LLVM_LIBDIR} -Wl,--start-group ${KE_MLIR_STATIC_ARCHIVES} ${KE_LLVM_STATIC_LIBS} -Wl,--end-group
  -Wl,-Bstatic -lzstd -lz -Wl,-Bdynamic -lpthread -ldl -lm -lrt)
