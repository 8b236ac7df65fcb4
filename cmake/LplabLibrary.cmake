# lplab_library(NAME SOURCES...): a static library of the lab's layers (lab,
# experiments, report, regress) as they are all built: position-independent
# (they go into the Python module too), warnings on, and -O0 under the
# sanitizers, where they are compiled for longer than they run (the kernels
# they call keep -O1). Its public headers are include/, its private src/.
function(lplab_library name)
  add_library(lplab_${name} STATIC ${ARGN})
  add_library(lplab::${name} ALIAS lplab_${name})
  set_target_properties(lplab_${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_include_directories(lplab_${name} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include
                             PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
  target_compile_options(lplab_${name} PRIVATE -Wall -Wextra)
  if(LPLAB_SANITIZE)
    target_compile_options(lplab_${name} PRIVATE -O0)
  endif()
endfunction()
