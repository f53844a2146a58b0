"""Builds the caffe2 package: CMake (+ Ninja) compiles libcaffe2, the extension module and the
generated protobuf modules into python/caffe2/, and setuptools packages python/caffe2."""
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
        ]
        if shutil.which("ninja") and not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
            configure += ["-G", "Ninja"]
        configure += os.environ.get("C2_CMAKE_ARGS", "").split()
        subprocess.check_call(configure)
        subprocess.check_call(["cmake", "--build", build_dir, "-j", jobs])
        for ext in self.extensions:
            self._place(ext)

    def _place(self, ext):
        """Copies the built module and libcaffe2 next to where setuptools expects the module."""
        target = self.get_ext_fullpath(ext.name)
        built_dir = os.path.join(PACKAGE_DIR, "python")
        module = [
            f
            for f in os.listdir(built_dir)
            if f.startswith("caffe2_pybind11_state") and f.endswith(".so")
        ]
        if not module:
            raise RuntimeError("the CMake build produced no caffe2_pybind11_state module")
        target_dir = os.path.dirname(os.path.abspath(target))
        if os.path.abspath(built_dir) == target_dir:
            return
        os.makedirs(target_dir, exist_ok=True)
        for name in module + ["libcaffe2.so"]:
            shutil.copy2(os.path.join(built_dir, name), target_dir)
        proto_src = os.path.join(PACKAGE_DIR, "proto")
        proto_dst = os.path.join(os.path.dirname(target_dir), "proto")
        os.makedirs(proto_dst, exist_ok=True)
        for name in os.listdir(proto_src):
            if name.endswith("_pb2.py"):
                shutil.copy2(os.path.join(proto_src, name), proto_dst)


setup(
    name="caffe2",
    version="0.1.0",
    description="A Caffe2-compatible deep-learning runtime",
    package_dir={"": "python"},
    packages=find_packages(where="python"),
    ext_modules=[CMakeExtension("caffe2.python.caffe2_pybind11_state")],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.9",
    zip_safe=False,
)
