# CPU images of the caffe2 runtime, on Debian 12 as the project's packages are.
#   docker build -f docker/cpu.Dockerfile --target runtime -t caffe2:cpu .   # the wheel, runtime only
#   docker build -f docker/cpu.Dockerfile --target dev -t caffe2:cpu-dev .   # builds and runs the tests
# The checkout is the build context; .dockerignore keeps a built checkout's build/ and .venv out.

# ---- build: every build and test dependency, the project built, its wheel made ----
FROM debian:12 AS build
RUN apt-get update -q \
 && apt-get install -y -q --no-install-recommends sudo ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY scripts/install_deps.sh scripts/install_deps.sh
RUN apt-get update -q && bash scripts/install_deps.sh && rm -rf /var/lib/apt/lists/*
COPY . /src
RUN bash scripts/setup_env.sh \
 && C2_USE_CUDA=OFF .venv/bin/python -m pip wheel --no-build-isolation --no-deps --no-index \
      -w /wheels .

# ---- dev: the build with its test suite run (the image exists only if the tests pass) ----
FROM build AS dev
RUN C2_SKIP_SANITIZERS=1 bash scripts/run_tests.sh
CMD ["bash", "scripts/run_main.sh"]

# ---- runtime: Debian's Python and the runtime libraries, the wheel installed, nothing else ----
FROM debian:12 AS runtime
RUN apt-get update -q \
 && apt-get install -y -q --no-install-recommends \
      python3 python3-venv python3-numpy python3-protobuf \
      zlib1g liblmdb0 libleveldb1d libgomp1 libdnnl2 libhiredis0.14 libgloo0 libgoogle-glog0v6 \
      libprotobuf-lite32 \
      libopencv-core406 libopencv-imgproc406 libopencv-imgcodecs406 libopenmpi3 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /wheels /wheels
RUN python3 -m venv --system-site-packages /opt/caffe2 \
 && /opt/caffe2/bin/pip install --no-index --no-deps /wheels/caffe2-*.whl \
 && rm -rf /wheels
ENV PATH=/opt/caffe2/bin:$PATH
CMD ["python", "-c", "import caffe2; print('caffe2', caffe2.__version__)"]
