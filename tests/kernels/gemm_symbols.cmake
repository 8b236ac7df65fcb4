# The per-level copies of Eigen's GEMM (kernels/src/gemm_f32.cpp compiled with
# -march=x86-64-v3 / -v4) must define no weak symbol outside their own renamed
# Eigen namespace: the linker keeps one definition of a weak symbol for the
# whole program, and an AVX-512 body picked for everyone would crash on a CPU
# without AVX-512. Run with -DDIR=<kernels build dir> -DNM=<nm>.
file(GLOB_RECURSE objects "${DIR}/*gemm_f32_v*.cpp.o")
if(NOT objects)
  message(FATAL_ERROR "no gemm_f32_v3/v4 objects under ${DIR}")
endif()
foreach(object IN LISTS objects)
  execute_process(COMMAND ${NM} -C --defined-only ${object} OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} failed on ${object}")
  endif()
  string(REPLACE "\n" ";" lines "${symbols}")
  set(weak 0)
  set(bad "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^[0-9a-f]* [WVu] ")
      math(EXPR weak "${weak} + 1")
      # DW.ref.__gxx_personality_v0: a pointer to the C++ runtime's
      # exception personality, data and the same in every object.
      if(NOT line MATCHES "lplab_eigen_v[34]" AND NOT line MATCHES " DW\\.ref\\.__gxx_personality_v0$")
        string(APPEND bad "\n  ${line}")
      endif()
    endif()
  endforeach()
  if(bad)
    message(FATAL_ERROR "${object} defines weak symbols outside its Eigen namespace:${bad}")
  endif()
  if(weak EQUAL 0)
    message(FATAL_ERROR "${object}: no weak symbols at all, so the namespace rename is not what this test sees")
  endif()
  message(STATUS "${object}: ${weak} weak symbols, all in its own Eigen namespace")
endforeach()
