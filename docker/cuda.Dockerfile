# CUDA images of the caffe2 runtime: Debian 12 with NVIDIA's CUDA, cuDNN and NCCL packages for
# Debian 12 (NVIDIA's own images are Ubuntu or RHEL based; the project builds on Debian's packages).
#   docker build -f docker/cuda.Dockerfile --target runtime -t caffe2:cuda .
#   docker run --gpus all caffe2:cuda
# CUDA_VERSION picks the toolkit (major-minor, as NVIDIA's package names spell it).
ARG CUDA_VERSION=12-6

# ---- build: the project's dependencies, the CUDA toolkit, cuDNN and NCCL; the wheel made ----
FROM debian:12 AS build
ARG CUDA_VERSION
RUN apt-get update -q \
 && apt-get install -y -q --no-install-recommends sudo ca-certificates wget \
 && wget -q https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/cuda-keyring_1.1-1_all.deb \
 && dpkg -i cuda-keyring_1.1-1_all.deb && rm cuda-keyring_1.1-1_all.deb \
 && apt-get update -q \
 && apt-get install -y -q --no-install-recommends \
      cuda-toolkit-${CUDA_VERSION} libcudnn9-dev-cuda-12 libnccl-dev \
 && rm -rf /var/lib/apt/lists/*
ENV PATH=/usr/local/cuda/bin:$PATH
WORKDIR /src
COPY scripts/install_deps.sh scripts/install_deps.sh
RUN apt-get update -q && bash scripts/install_deps.sh && rm -rf /var/lib/apt/lists/*
COPY . /src
# No GPU at build time: the CUDA code compiles for C2_CUDA_ARCHS (default 90), e.g.
# --build-arg C2_CMAKE_ARGS="-DC2_CUDA_ARCHS=80;90".
ARG C2_CMAKE_ARGS=""
RUN C2_USE_CUDA=ON C2_CMAKE_ARGS="${C2_CMAKE_ARGS}" bash scripts/setup_env.sh \
 && C2_USE_CUDA=ON C2_CMAKE_ARGS="${C2_CMAKE_ARGS}" .venv/bin/python -m pip wheel \
      --no-build-isolation --no-deps --no-index -w /wheels .

# ---- runtime: the CUDA, cuDNN and NCCL runtime libraries, Debian's Python, the wheel ----
FROM debian:12 AS runtime
ARG CUDA_VERSION
RUN apt-get update -q \
 && apt-get install -y -q --no-install-recommends ca-certificates wget \
 && wget -q https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/cuda-keyring_1.1-1_all.deb \
 && dpkg -i cuda-keyring_1.1-1_all.deb && rm cuda-keyring_1.1-1_all.deb \
 && apt-get update -q \
 && apt-get install -y -q --no-install-recommends \
      cuda-cudart-${CUDA_VERSION} libcublas-${CUDA_VERSION} libcurand-${CUDA_VERSION} \
      libcudnn9-cuda-12 libnccl2 \
      python3 python3-venv python3-numpy python3-protobuf \
      zlib1g liblmdb0 libleveldb1d libgomp1 libdnnl2 libhiredis0.14 libgloo0 libgoogle-glog0v6 \
      libprotobuf-lite32 \
      libopencv-core406 libopencv-imgproc406 libopencv-imgcodecs406 libopenmpi3 \
 && apt-get purge -y wget && rm -rf /var/lib/apt/lists/*
COPY --from=build /wheels /wheels
RUN python3 -m venv --system-site-packages /opt/caffe2 \
 && /opt/caffe2/bin/pip install --no-index --no-deps /wheels/caffe2-*.whl \
 && rm -rf /wheels
ENV PATH=/opt/caffe2/bin:$PATH
CMD ["python", "-c", "import caffe2; from caffe2.python import workspace; print('caffe2', caffe2.__version__, 'GPU support:', workspace.has_gpu_support)"]
