# Where CUDA's conversion headers (cuda_fp16.h, cuda_bf16.h, cuda_fp8.h,
# cuda_fp6.h, cuda_fp4.h: CUDA 12.8 or later) are, for the tests' validation
# oracle and the conversion benchmark's baseline. Nothing else needs them.
#
# Looked for, in order:
#   1. LPLAB_CUDA_INCLUDE_DIR, when given;
#   2. the CUDA toolkit CMake finds (/usr/local/cuda, CUDAToolkit_ROOT, nvcc);
#   3. build/cuda-oracle/include, where scripts/test.sh puts the headers of
#      NVIDIA's PyPI wheels (nvidia-cuda-runtime-cu12's include/,
#      nvidia-cuda-nvcc-cu12's include/crt/ and nvidia-cuda-cccl-cu12's
#      include/nv/) when there is no toolkit.
# Sets LPLAB_CUDA_ORACLE (TRUE/FALSE), LPLAB_CUDA_INCLUDE_DIR and
# LPLAB_CUDA_INCLUDE_DIRS (with include/cccl where CUDA 13 keeps nv/target).
set(LPLAB_CUDA_INCLUDE_DIR "" CACHE PATH
    "Directory with CUDA's cuda_fp*.h headers (12.8+), the tests' validation oracle")

set(_lplab_cuda_candidates "")
if(LPLAB_CUDA_INCLUDE_DIR)
  list(APPEND _lplab_cuda_candidates "${LPLAB_CUDA_INCLUDE_DIR}")
endif()
if(CUDAToolkit_FOUND)
  list(APPEND _lplab_cuda_candidates ${CUDAToolkit_INCLUDE_DIRS})
endif()
list(APPEND _lplab_cuda_candidates "${PROJECT_SOURCE_DIR}/build/cuda-oracle/include")

set(LPLAB_CUDA_ORACLE FALSE)
foreach(dir IN LISTS _lplab_cuda_candidates)
  # cuda_fp4.h arrived last (CUDA 12.8): its presence means all five are
  # there; crt/host_defines.h and nv/target are what they include besides.
  if(EXISTS "${dir}/cuda_fp4.h" AND EXISTS "${dir}/cuda_fp6.h" AND EXISTS "${dir}/cuda_fp8.h"
     AND EXISTS "${dir}/crt/host_defines.h"
     AND (EXISTS "${dir}/nv/target" OR EXISTS "${dir}/cccl/nv/target"))
    set(LPLAB_CUDA_ORACLE TRUE)
    set(LPLAB_CUDA_INCLUDE_DIR "${dir}" CACHE PATH
        "Directory with CUDA's cuda_fp*.h headers (12.8+), the tests' validation oracle" FORCE)
    break()
  endif()
endforeach()

set(LPLAB_CUDA_INCLUDE_DIRS "")
if(LPLAB_CUDA_ORACLE)
  set(LPLAB_CUDA_INCLUDE_DIRS "${LPLAB_CUDA_INCLUDE_DIR}")
  if(NOT EXISTS "${LPLAB_CUDA_INCLUDE_DIR}/nv/target")
    list(APPEND LPLAB_CUDA_INCLUDE_DIRS "${LPLAB_CUDA_INCLUDE_DIR}/cccl")
  endif()
  message(STATUS "CUDA oracle headers: ${LPLAB_CUDA_INCLUDE_DIRS}")
else()
  set(LPLAB_CUDA_ORACLE_MISSING
      "CUDA's cuda_fp*.h headers (12.8+) were not found: install the CUDA toolkit, or let scripts/test.sh fetch them from PyPI, or configure with -DLPLAB_CUDA_INCLUDE_DIR=<a directory with cuda_fp4.h, crt/host_defines.h and nv/target or cccl/nv/target>")
endif()
unset(_lplab_cuda_candidates)
