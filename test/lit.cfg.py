# lit configuration for lmc's tests: FileCheck tests of the passes, the
# importer and the driver, gradient checks, and end-to-end training runs.
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "lmc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".onnxtxt", ".lmc", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.lmc_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in",
                   "Inputs", "reference"]

config.substitutions.append(("%lmc_src", config.lmc_src_root))
config.substitutions.append(("%lmc_build", config.lmc_obj_root))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(
    ("%llvm_lib_dir", os.path.join(os.path.dirname(config.llvm_tools_dir), "lib")))
# --target cuda builds (no GPU needed): lmc was built with the CUDA toolkit.
if config.lmc_have_cuda:
    config.available_features.add("cuda-toolkit")
config.substitutions.append(("%cuda_toolkit", config.lmc_cuda_toolkit))
# A machine with an NVIDIA GPU and driver (the --target cuda executables
# then train instead of reporting that there is none).
if os.path.exists("/dev/nvidiactl"):
    config.available_features.add("cuda-device")
# The features this machine must have (LMC_EXPECT_FEATURES, comma-separated;
# .ci/run names the CI machine's): one that is missing stops the run instead
# of turning its tests into a quieter green of "Unsupported".
_why_missing = {
    "cuda-toolkit": "lmc was configured without the CUDA toolkit "
                    "(runtime/CMakeLists.txt looks in LMC_CUDA_TOOLKIT, "
                    "/usr/local/cuda by default)",
    "cuda-device": "no /dev/nvidiactl (no NVIDIA GPU and driver)",
}
for _feature in filter(None, os.environ.get("LMC_EXPECT_FEATURES", "").split(",")):
    if _feature not in config.available_features:
        lit_config.fatal(
            f"feature '{_feature}' is expected on this machine "
            f"(LMC_EXPECT_FEATURES) but missing: "
            f"{_why_missing.get(_feature, 'no such lit feature')}")

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.lmc_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(
    ["lmc", "lmc-opt", "lmc-gradcheck", "lmc-onnx-conformance"],
    [config.lmc_tools_dir])

# libomp registers each process in /dev/shm/__KMP_REGISTERED_LIB_<pid>_<uid>
# and unlinks the file at exit. Processes the tests kill on purpose (a dead
# rank, a timeout) leave theirs behind; a later process that gets the same
# pid can then abort with "OMP: Error #15 ... unknown library already
# initialized". Remove the files of processes that no longer exist.
def _remove_stale_libomp_registrations():
    shm = "/dev/shm"
    if not os.path.isdir(shm):
        return
    for name in os.listdir(shm):
        if not name.startswith("__KMP_REGISTERED_LIB_"):
            continue
        pid = name[len("__KMP_REGISTERED_LIB_"):].split("_")[0]
        if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
            try:
                os.unlink(os.path.join(shm, name))
            except OSError:
                pass


_remove_stale_libomp_registrations()
