"""get_build_options() and caffe2.python.build_info tell the truth about the build: each switch
agrees with what the build registered and installed, versions are given exactly for the backends
built."""
import glob
import os
import platform
import subprocess
import sys

from caffe2.python import build_info, workspace

PACKAGE_DIR = os.path.dirname(os.path.abspath(workspace.__file__))
SWITCHES = [
    "USE_CUDA",
    "USE_CUDNN",
    "USE_NCCL",
    "USE_DNNL",
    "USE_OPENMP",
    "USE_GLOO",
    "USE_MPI",
    "USE_REDIS",
]


def test_every_switch_is_on_or_off_and_every_version_present():
    options = workspace.C.get_build_options()
    for key in SWITCHES:
        assert options[key] in ("ON", "OFF"), (key, options[key])
    for switch, version in [
        ("USE_CUDA", "CUDA_VERSION"),
        ("USE_CUDNN", "CUDNN_VERSION"),
        ("USE_NCCL", "NCCL_VERSION"),
        ("USE_DNNL", "DNNL_VERSION"),
    ]:
        if options[switch] == "ON":
            assert options[version].count(".") >= 1, (version, options[version])
        else:
            assert options[version] == "", (version, options[version])
    assert options["VERSION"] and options["BUILD_TYPE"] and options["PROTOBUF_VERSION"]


def test_cuda_switch_matches_the_installed_gpu_library():
    cuda_lib = glob.glob(os.path.join(PACKAGE_DIR, "libcaffe2_cuda.so"))
    assert (workspace.C.get_build_options()["USE_CUDA"] == "ON") == bool(cuda_lib)


def test_switches_match_the_registered_operators():
    ops = set(workspace.C.registered_cpu_operators())
    options = workspace.C.get_build_options()
    assert (options["USE_DNNL"] == "ON") == ("Conv_ENGINE_DNNL" in ops)
    assert (options["USE_GLOO"] == "ON") == ("Allreduce_ENGINE_GLOO" in ops)
    assert (options["USE_REDIS"] == "ON") == ("RedisStoreHandlerCreate" in ops)


def test_cpu_arch_is_in_the_compiler_flags():
    options = workspace.C.get_build_options()
    if options["CPU_ARCH"] and platform.machine() in ("x86_64", "AMD64"):
        assert "-march=" + options["CPU_ARCH"] in options["CXX_FLAGS"]


def test_engines_and_preference():
    conv = build_info.engines("Conv")
    assert "EIGEN" in conv["CPU"]
    assert ("DNNL" in conv["CPU"]) == build_info.has_backend("DNNL")
    assert build_info.engines("NoSuchOp")["CPU"] == []
    # The defaults, in a fresh process (upstream's TestCase clears the preferences for op tests).
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "from caffe2.python import build_info; " "print(build_info.engine_preference())",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "{'CPU': ['DNNL'], 'CUDA': ['CUDNN']}"


def test_summary_from_the_command_line():
    out = subprocess.run(
        [sys.executable, "-m", "caffe2.python.build_info"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "USE_DNNL" in out and "engines:" in out and "engine preference:" in out
