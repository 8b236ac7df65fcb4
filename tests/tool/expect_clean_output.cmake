# Runs the tool with ARGS (a ;-list) and checks that it succeeds and that its
# output ends cleanly: something on stdout, nothing on stderr, a final newline,
# no blank line at the end and no line with trailing blanks.
# Progress lines (a run over 10 s, e.g. under the sanitizers) are tested by
# cli.progress_heartbeat; here stderr must hold only what is checked.
set(ENV{LPLAB_PROGRESS_SECONDS} 0)
execute_process(COMMAND ${TOOL} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "exit status ${rc}; stderr: ${err}")
endif()
if(NOT err STREQUAL "")
  message(FATAL_ERROR "expected nothing on stderr, got: ${err}")
endif()
if(out STREQUAL "")
  message(FATAL_ERROR "no output")
endif()
if(NOT out MATCHES "\n$")
  message(FATAL_ERROR "the output does not end with a newline")
endif()
if(out MATCHES "\n\n$")
  message(FATAL_ERROR "the output ends with a blank line")
endif()
if(out MATCHES "[ \t]\n")
  message(FATAL_ERROR "a line ends with blanks")
endif()
