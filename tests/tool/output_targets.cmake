# Where output goes, and that it got there. Runs TOOL (the lplab tool) in
# the empty folder WORK and checks:
#  - `--out DIR` is refused before the run (one line, exit 2);
#  - `--out LINK` writes the file the symbolic link names; the link stays;
#  - `--out FIFO` writes through the named pipe; it stays a pipe;
#  - output to a full device (/dev/full) as standard output is one line on
#    stderr and exit 1 (3 for `lplab regress`), for every kind of command.
# Progress lines (a run over 10 s, e.g. under the sanitizers) are tested by
# cli.progress_heartbeat; here stderr must hold only what is checked.
set(ENV{LPLAB_PROGRESS_SECONDS} 0)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/adir)
set(run_args run footprint --output csv)

function(expect_fail expect_rc expect_line)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REGEX REPLACE "\n$" "" line "${err}")
  if(NOT rc EQUAL expect_rc OR line MATCHES "\n" OR NOT line MATCHES "${expect_line}")
    message(FATAL_ERROR "${ARGN}: expected exit ${expect_rc} and one line matching '${expect_line}', "
                        "got exit ${rc} and: ${err}")
  endif()
endfunction()

# 1. A directory.
expect_fail(2 "^lplab: error: --out .*/adir: is a directory; give a file name$"
            ${TOOL} ${run_args} --out ${WORK}/adir)

# 2. A symbolic link, relative, to a file that exists.
file(WRITE ${WORK}/target.csv "old\n")
file(CREATE_LINK target.csv ${WORK}/link.csv SYMBOLIC)
execute_process(COMMAND ${TOOL} ${run_args} --out ${WORK}/link.csv RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "--out LINK: exit ${rc}: ${err}")
endif()
if(NOT IS_SYMLINK ${WORK}/link.csv)
  message(FATAL_ERROR "--out LINK replaced the symbolic link by a file")
endif()
file(READ ${WORK}/target.csv written)
if(NOT written MATCHES "dtype,scheme,")
  message(FATAL_ERROR "--out LINK: the linked file holds '${written}', not the CSV")
endif()

# 3. A named pipe, read by cat while the tool writes.
execute_process(COMMAND mkfifo ${WORK}/pipe RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "mkfifo failed")
endif()
execute_process(COMMAND sh -c "cat '${WORK}/pipe' > '${WORK}/from-pipe.csv' & \"$0\" \"$@\" --out '${WORK}/pipe'; s=$?; wait; exit $s"
                        ${TOOL} ${run_args} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "--out FIFO: exit ${rc}: ${err}")
endif()
execute_process(COMMAND test -p ${WORK}/pipe RESULT_VARIABLE still_pipe)
if(NOT still_pipe EQUAL 0)
  message(FATAL_ERROR "--out FIFO replaced the named pipe by a file")
endif()
file(READ ${WORK}/from-pipe.csv piped)
if(NOT piped MATCHES "dtype,scheme,")
  message(FATAL_ERROR "--out FIFO: the reader got '${piped}', not the CSV")
endif()

# 4. Standard output on a full device.
if(EXISTS /dev/full)
  set(full_msg "^lplab: error: cannot write the output to standard output: No space left on device$")
  foreach(cmd "finfo;--all" "formats" "inspect;1.5" "inspect;--code;0x7e" "values;e4m3" "list" "run;footprint"
              "account" "--version")
    execute_process(COMMAND ${TOOL} ${cmd} OUTPUT_FILE /dev/full RESULT_VARIABLE rc ERROR_VARIABLE err)
    string(REGEX REPLACE "\n$" "" line "${err}")
    if(NOT rc EQUAL 1 OR NOT line MATCHES "${full_msg}")
      message(FATAL_ERROR "lplab ${cmd} > /dev/full: expected exit 1 and '${full_msg}', got exit ${rc}: ${err}")
    endif()
  endforeach()
  execute_process(COMMAND ${TOOL} regress --only finfo OUTPUT_FILE /dev/full RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 3 OR NOT err MATCHES "cannot write the output to standard output")
    message(FATAL_ERROR "lplab regress > /dev/full: expected exit 3, got exit ${rc}: ${err}")
  endif()
endif()
file(REMOVE_RECURSE ${WORK})
