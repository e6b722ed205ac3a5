# lit configuration for ke's FileCheck tests (test/<Component>/*.mlir).
# Tools are found on PATH: ke-opt's build directory first, then LLVM 22's
# bin directory (FileCheck, not, split-file, mlir-opt), as upstream does.
import os
import sys
import shutil
import subprocess
import lit.formats

config.name = "ke"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "unit", "fuzz", "package", "suite", "layering", "fresh-root", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.ke_obj_root, "test")

path = [os.path.dirname(config.ke_opt), config.llvm_tools_dir,
        config.environment.get("PATH", os.environ.get("PATH", ""))]
config.environment["PATH"] = os.pathsep.join(path)
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
config.substitutions.append(("%ke_src_root", config.ke_src_root))
# The Python that runs lit, for tests that load what ke writes (ctypes).
config.substitutions.append(("%python", sys.executable))
# Tests must not depend on the caller's database or colours.
config.environment.pop("KE_DB", None)
config.environment["TERM"] = "dumb"

# LLVM's libraries (libomp for objects that use OpenMP threads).
config.substitutions.append(
    ("%llvm_libdir", os.path.join(os.path.dirname(config.llvm_tools_dir), "lib")))
# ke's mlir-opt pass plugin (tools/ke-plugin), for upstream mlir-opt-22.
config.substitutions.append(
    ("%ke_plugin", os.path.join(config.ke_obj_root, "lib", "KePlugin.so")))
# Tuning records are applied only under the pipeline hash they were made
# with; tests that write records take the current one from ke-opt.
try:
    ke_pipeline_hash = subprocess.run(
        [config.ke_opt, "compile", "--print-pipeline-hash"],
        capture_output=True, text=True, check=True).stdout.strip()
except (OSError, subprocess.CalledProcessError):
    ke_pipeline_hash = "unknown"
config.substitutions.append(("%ke_pipeline_hash", ke_pipeline_hash))
try:
    ke_cuda_pipeline_hash = subprocess.run(
        [config.ke_opt, "compile", "--target", "cuda:sm_90", "--print-pipeline-hash"],
        capture_output=True, text=True, check=True).stdout.strip()
except (OSError, subprocess.CalledProcessError):
    ke_cuda_pipeline_hash = "unknown"
config.substitutions.append(("%ke_cuda_pipeline_hash", ke_cuda_pipeline_hash))

# CUDA's libdevice, which the PTX tests' math functions (__nv_expf...) link
# from: a CUDA toolkit named by $CUDA_HOME (or found through $KE_PTXAS or
# /usr/local/cuda by ke-opt), else the pip wheel of ptxas and libdevice that
# scripts/fetch-ptxas.sh installs into the build directory (scripts/test.sh
# fetches it before ctest). lit passes no environment through unasked.
for name in ("KE_PTXAS", "CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"):
    if os.environ.get(name):
        config.environment[name] = os.environ[name]
wheel_ptxas = os.path.join(config.ke_obj_root, "ptxas", "nvidia", "cuda_nvcc", "bin", "ptxas")
if "KE_PTXAS" not in config.environment and os.path.exists(wheel_ptxas):
    config.environment["KE_PTXAS"] = wheel_ptxas
# Where /usr/local/cuda has no libdevice, a test can take every other source
# away and see ke-opt's diagnostic for a kernel that needs it.
if not os.path.exists("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc"):
    config.available_features.add("no-system-cuda")
# Tests of multi-threaded CPU schedules (cpu.loops.parallel needs 2 cores).
if (os.cpu_count() or 1) > 1:
    config.available_features.add("multicore")
# MPI tuning (issue #18; docs/tuning.md, Tuning on a cluster): ke-opt built
# with OpenMPI's headers and an mpirun to start it. The tests run as root in
# CI, which OpenMPI refuses unless told.
if config.ke_mpi and shutil.which("mpirun", path=config.environment["PATH"]):
    config.available_features.add("mpi")
    config.environment["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    config.environment["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    # No network transports to probe on a test machine.
    config.environment["OMPI_MCA_btl_tcp_if_include"] = "lo"
    config.environment["OMPI_MCA_oob_tcp_if_include"] = "lo"
    for name in ("HOME", "TMPDIR"):
        if os.environ.get(name):
            config.environment[name] = os.environ[name]
