"""Builds the caffe2 package (pyproject.toml holds the metadata): CMake + Ninja compile libcaffe2
(and libcaffe2_cuda), the extension modules and the generated protobuf modules into python/caffe2/,
and setuptools packages python/ (caffe2, and gloo for upstream's `gloo.python.IoError`).

Environment variables:
  C2_BUILD_DIR    the CMake build folder (default: ./build, reused by later builds)
  C2_BUILD_JOBS   parallel compile jobs (default: the CPU count)
  C2_BUILD_TYPE   CMake build type (default Release)
  C2_BUILD_TESTS  ON to also build the C++ tests (default OFF; scripts/setup_env.sh sets ON)
  C2_USE_CUDA     ON, OFF or AUTO (default AUTO: on when nvcc, the toolkit and cuDNN are found)
  C2_CMAKE_ARGS   more CMake arguments, space-separated
The build prints Ninja's progress ([done/total] per step); `pip install -v` shows it.
"""
import glob
import os
import shutil
import subprocess
import sys

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
PACKAGE_DIR = os.path.join(ROOT, "python", "caffe2")


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


def _switch(name, default, allowed):
    value = os.environ.get(name, default).upper()
    if value not in allowed:
        raise SystemExit("{}={!r}: use one of {}".format(name, value, ", ".join(allowed)))
    return value


class CMakeBuild(build_ext):
    def run(self):
        build_dir = os.environ.get("C2_BUILD_DIR", os.path.join(ROOT, "build"))
        jobs = os.environ.get("C2_BUILD_JOBS", str(os.cpu_count() or 2))
        configure = [
            "cmake",
            "-S",
            ROOT,
            "-B",
            build_dir,
            "-DCMAKE_BUILD_TYPE=" + os.environ.get("C2_BUILD_TYPE", "Release"),
            "-DPython3_EXECUTABLE=" + sys.executable,
            "-DC2_PYTHON_PACKAGE_DIR=" + PACKAGE_DIR,
            "-DC2_BUILD_TESTS=" + _switch("C2_BUILD_TESTS", "OFF", ("ON", "OFF")),
            "-DC2_USE_CUDA=" + _switch("C2_USE_CUDA", "AUTO", ("ON", "OFF", "AUTO")),
        ]
        if shutil.which("ninja") and not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
            configure += ["-G", "Ninja"]
        configure += os.environ.get("C2_CMAKE_ARGS", "").split()
        subprocess.check_call(configure)
        subprocess.check_call(["cmake", "--build", build_dir, "-j", jobs])
        for ext in self.extensions:
            self._place(ext)

    def _place(self, ext):
        """Copies the built modules, libcaffe2 and libcaffe2_cuda next to where setuptools expects
        the module (they find each other through their $ORIGIN RUNPATH), and the generated
        protobuf modules into the package."""
        target = self.get_ext_fullpath(ext.name)
        built_dir = os.path.join(PACKAGE_DIR, "python")
        modules = glob.glob(os.path.join(built_dir, "caffe2_pybind11_state*.so"))
        if not modules:
            raise RuntimeError("the CMake build produced no caffe2_pybind11_state module")
        libraries = [os.path.join(built_dir, "libcaffe2.so")]
        libraries += glob.glob(os.path.join(built_dir, "libcaffe2_cuda.so"))
        target_dir = os.path.dirname(os.path.abspath(target))
        if os.path.abspath(built_dir) == target_dir:
            return
        os.makedirs(target_dir, exist_ok=True)
        for path in modules + libraries:
            shutil.copy2(path, target_dir)
        proto_src = os.path.join(PACKAGE_DIR, "proto")
        proto_dst = os.path.join(os.path.dirname(target_dir), "proto")
        os.makedirs(proto_dst, exist_ok=True)
        for name in os.listdir(proto_src):
            if name.endswith("_pb2.py"):
                shutil.copy2(os.path.join(proto_src, name), proto_dst)


setup(
    # setuptools' own staging folders, inside the CMake build folder's parent but apart from it.
    options={"build": {"build_base": os.path.join("build", "setuptools")}},
    package_dir={"": "python"},
    packages=find_packages(where="python"),
    ext_modules=[CMakeExtension("caffe2.python.caffe2_pybind11_state")],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
)
