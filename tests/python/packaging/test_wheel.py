"""The package as users install it: `pip wheel .` gives a wheel with its metadata, license and
libraries (libcaffe2_cuda included when built), whose shared objects find each other through $ORIGIN
only; installed into a fresh venv (Debian's Python with its system packages: numpy, protobuf), it
imports and runs a net from a folder outside the checkout."""
import glob
import json
import os
import subprocess
import sys
import zipfile

import pytest

from caffe2.version import __version__

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
SYSTEM_PYTHON = "/usr/bin/python3"

USE_IT = r"""
import importlib.metadata, json, os, subprocess, sys
import numpy as np
import caffe2
from caffe2.python import core, workspace
from caffe2.python import caffe2_pybind11_state  # noqa: F401 (the CPU module loads)
gpu_module = None
try:
    from caffe2.python import caffe2_pybind11_state_gpu  # noqa: F401
    gpu_module = "loaded"
except ImportError as e:
    gpu_module = str(e)
workspace.FeedBlob("x", np.array([[1.0, -2.0], [3.0, -4.0]], np.float32))
workspace.FeedBlob("w", np.array([[1.0, 0.0], [0.0, 1.0]], np.float32))
workspace.FeedBlob("b", np.array([0.5, 0.5], np.float32))
net = core.Net("n")
net.Relu(net.FC(["x", "w", "b"], "y"), "z")
workspace.RunNetOnce(net)
meta = importlib.metadata.metadata("caffe2")
folder = os.path.dirname(caffe2.python.__file__)
runpaths = {}
for name in os.listdir(folder):
    if name.endswith(".so"):
        out = subprocess.run(["readelf", "-d", os.path.join(folder, name)],
                             capture_output=True, text=True).stdout
        lines = [line for line in out.splitlines() if "RUNPATH" in line]
        runpaths[name] = [line.split("[", 1)[1].rstrip("]") for line in lines]
print(json.dumps({
    "version": caffe2.__version__,
    "file": caffe2.__file__,
    "z": workspace.FetchBlob("z").tolist(),
    "gpu_module": gpu_module,
    "requires": meta.get_all("Requires-Dist"),
    "license": meta.get("License"),
    "runpaths": runpaths,
}))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    if not os.path.exists(SYSTEM_PYTHON):
        pytest.skip("Debian's /usr/bin/python3 is needed")
    out = tmp_path_factory.mktemp("wheel")
    # Reuses the checkout's build folder (and its options: the C++ tests stay configured).
    env = dict(os.environ, C2_BUILD_TESTS="ON", C2_BUILD_DIR=os.path.join(ROOT, "build"))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index"]
        + ["-q", "-w", str(out), ROOT],
        env=env,
        check=True,
        cwd=ROOT,
    )
    wheels = glob.glob(str(out / "caffe2-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_wheel_holds_the_package_license_and_libraries(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "caffe2/python/libcaffe2.so" in names
    assert any(n.startswith("caffe2/python/caffe2_pybind11_state.") for n in names)
    assert "caffe2/proto/caffe2_pb2.py" in names
    assert "caffe2/version.py" in names
    assert any(n.endswith(".dist-info/LICENSE") for n in names), names
    if os.path.exists(os.path.join(ROOT, "python", "caffe2", "python", "libcaffe2_cuda.so")):
        assert "caffe2/python/libcaffe2_cuda.so" in names
        assert any(n.startswith("caffe2/python/caffe2_pybind11_state_gpu.") for n in names)
    assert not any(n.startswith(("tests/", "build/")) for n in names)


def test_wheel_installs_into_a_fresh_venv_and_runs_a_net(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    subprocess.run(
        [python, "-m", "pip", "install", "-q", "--no-index", "--no-deps", wheel], check=True
    )
    away = tmp_path / "elsewhere"  # not the checkout: nothing can come from its python/ folder
    away.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "C2_"))}
    result = subprocess.run(
        [python, "-c", USE_IT], cwd=str(away), env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout.strip().splitlines()[-1])
    assert got["version"] == __version__
    assert got["file"].startswith(str(venv)), got["file"]
    assert got["z"] == [[1.5, 0.0], [3.5, 0.0]]
    assert sorted(got["requires"]) == ["numpy", "protobuf"]
    assert "BSD" in got["license"]
    if "libcaffe2_cuda.so" in got["runpaths"]:
        assert got["gpu_module"] == "loaded", got["gpu_module"]
    assert "cannot open shared object" not in result.stderr, result.stderr
    for name, runpath in got["runpaths"].items():
        assert runpath, name
        for entry in runpath[0].split(":"):
            assert entry == "$ORIGIN" or not entry.startswith(ROOT), (name, runpath)
