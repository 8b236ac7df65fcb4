# Installs lplab from BUILD into a fresh prefix, then configures, builds and
# runs the consumer project against it with find_package(lplab).
set(work "${WORK}")
file(REMOVE_RECURSE "${work}")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${BUILD}" --prefix "${work}/prefix"
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "install failed")
endif()
# A sanitized lplab (the ASan build) is a static library that needs the
# sanitizers' runtimes: the consumer is then built with the same flags.
set(flags "")
if(SANITIZE)
  set(flags "-DCMAKE_CXX_FLAGS=-fsanitize=address,undefined"
            "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S "${SOURCE}" -B "${work}/build" -G Ninja
                "-DCMAKE_PREFIX_PATH=${work}/prefix" -DCMAKE_BUILD_TYPE=Release ${flags}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configure failed: ${out}${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build "${work}/build" RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "build failed: ${out}${err}")
endif()
execute_process(COMMAND "${work}/build/consumer" RESULT_VARIABLE rc OUTPUT_VARIABLE out)
message("${out}")
string(CONCAT expected "fp16\\(1e-8\\)=0 bf16\\(1e-8\\)=1.00117e-08 e4m3fn\\(465\\)=0x7f e3m4.max=15.5\n"
       "bulk e4m3: 38 7e 7f 00 overflow=1 underflow=1\n"
       "runtime float8_e4m3fn max=448 rz: 38 7e 7e 00\n"
       "unknown unary op 'rleu' \\(identity, relu, gelu_tanh, gelu_erf, square, sqrt, rsqrt, pow, scale[^)]*\\)")
if(NOT rc EQUAL 0 OR NOT out MATCHES "${expected}")
  message(FATAL_ERROR "unexpected output: ${out}")
endif()
if(CUDA AND NOT EXISTS "${work}/build/consumer_cuda")
  message(FATAL_ERROR "lplab was built with its CUDA backend, but the installed package has no lplab::cuda")
endif()
if(EXISTS "${work}/build/consumer_cuda")
  execute_process(COMMAND "${work}/build/consumer_cuda" RESULT_VARIABLE rc OUTPUT_VARIABLE out)
  message("${out}")
  if(NOT rc EQUAL 0 OR NOT out MATCHES "^lplab::cuda: ")
    message(FATAL_ERROR "consumer_cuda: unexpected output: ${out}")
  endif()
endif()
