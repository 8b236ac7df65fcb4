# Runs the tool with ARGS (a ;-list) and checks that it fails cleanly: non-zero
# exit status, nothing on stdout, exactly one line on stderr matching EXPECT.
# Progress lines (a run over 10 s, e.g. under the sanitizers) are tested by
# cli.progress_heartbeat; here stderr must hold only what is checked.
set(ENV{LPLAB_PROGRESS_SECONDS} 0)
execute_process(COMMAND ${TOOL} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "expected a non-zero exit status, got 0; stdout: ${out}")
endif()
if(NOT rc MATCHES "^[0-9]+$")
  message(FATAL_ERROR "the tool did not exit normally: ${rc}")
endif()
if(NOT out STREQUAL "")
  message(FATAL_ERROR "expected no stdout, got: ${out}")
endif()
string(REGEX REPLACE "\n$" "" line "${err}")
if(line MATCHES "\n")
  message(FATAL_ERROR "expected one line on stderr, got: ${err}")
endif()
if(NOT line MATCHES "^lplab: error: ${EXPECT}")
  message(FATAL_ERROR "stderr '${line}' does not match 'lplab: error: ${EXPECT}'")
endif()
