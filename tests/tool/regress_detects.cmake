# `lplab regress` must fail, readably, when a baseline differs from what the
# build computes. Copies the baselines to WORK, gives the entry KEY of
# EDIT_FILE the value NEW, and expects exit status 1 with the key, the
# baseline's (edited) value and the computed (original) one printed. With
# TOL, the edited entry is a real with that relative tolerance.
# Progress lines (a run over 10 s, e.g. under the sanitizers) are tested by
# cli.progress_heartbeat; here stderr must hold only what is checked.
set(ENV{LPLAB_PROGRESS_SECONDS} 0)
function(escape out text)
  string(REGEX REPLACE "([][+.*()^$?|\\\\{}])" "\\\\\\1" e "${text}")
  set(${out} "${e}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK})
file(COPY ${BASELINES}/ DESTINATION ${WORK})
file(READ ${WORK}/${EDIT_FILE} text)
escape(key_re "${KEY}")
if(NOT text MATCHES "\n${key_re} = (([^\n~]*[^\n~ ])( ~ [^\n]*)?)\n")
  message(FATAL_ERROR "no entry '${KEY}' in ${EDIT_FILE}")
endif()
set(old_line "${CMAKE_MATCH_1}")
set(old "${CMAKE_MATCH_2}")
set(new_line "${NEW}")
if(DEFINED TOL)
  set(new_line "${NEW} ~ ${TOL}")
endif()
string(REPLACE "\n${KEY} = ${old_line}\n" "\n${KEY} = ${new_line}\n" changed "${text}")
file(WRITE ${WORK}/${EDIT_FILE} "${changed}")
get_filename_component(suite ${EDIT_FILE} NAME_WE)
execute_process(COMMAND ${TOOL} regress --baselines ${WORK} --only ${suite}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "expected exit status 1, got ${rc}; stdout: ${out} stderr: ${err}")
endif()
escape(new_re "${NEW}")
if(DEFINED TOL)
  escape(tol_re "${TOL}")
  set(new_re "${new_re}  \\(relative tolerance ${tol_re}\\)")
endif()
escape(old_re "${old}")
foreach(expect "FAIL  ${suite} +1 changed of [0-9]+ entries" "\n  ${key_re}\n"
               "\n    baseline: ${new_re}\n" "\n    now: +${old_re}\n"
               "1 entries differ in 1 of 1 suites")
  if(NOT out MATCHES "${expect}")
    message(FATAL_ERROR "output does not match '${expect}':\n${out}")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK})
