# Use ccache for C, C++ and CUDA when it is installed.
find_program(C2_CCACHE ccache)
if(C2_CCACHE)
  set(CMAKE_C_COMPILER_LAUNCHER "${C2_CCACHE}")
  set(CMAKE_CXX_COMPILER_LAUNCHER "${C2_CCACHE}")
  set(CMAKE_CUDA_COMPILER_LAUNCHER "${C2_CCACHE}")
endif()
