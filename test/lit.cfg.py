# lit configuration for ke's FileCheck tests (test/<Component>/*.mlir).
# Tools are found on PATH: ke-opt's build directory first, then LLVM 22's
# bin directory (FileCheck, not, split-file, mlir-opt), as upstream does.
import os
import subprocess
import lit.formats

config.name = "ke"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "unit", "fuzz", "package", "suite", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.ke_obj_root, "test")

path = [os.path.dirname(config.ke_opt), config.llvm_tools_dir,
        config.environment.get("PATH", os.environ.get("PATH", ""))]
config.environment["PATH"] = os.pathsep.join(path)
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
config.substitutions.append(("%ke_src_root", config.ke_src_root))
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
