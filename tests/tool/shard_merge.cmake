# A run split with --shard I/N and joined by `lplab merge` gives exactly the
# tables of the unsharded run: every value (CSV, full precision) and every
# note (the text tables carry the notes).
# Progress lines (a run over 10 s, e.g. under the sanitizers) are tested by
# cli.progress_heartbeat; here stderr must hold only what is checked.
set(ENV{LPLAB_PROGRESS_SECONDS} 0)
set(files)
math(EXPR last "${SHARDS} - 1")
foreach(i RANGE ${last})
  execute_process(COMMAND ${TOOL} run ${EXPERIMENT} ${ARGS} --shard ${i}/${SHARDS} --output json --out ${WORK}_${i}.json
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "shard ${i} failed: ${err}")
  endif()
  list(APPEND files ${WORK}_${i}.json)
endforeach()
list(REVERSE files)  # merge does not depend on the order the files come in
foreach(output csv table)
  execute_process(COMMAND ${TOOL} run ${EXPERIMENT} ${ARGS} --output ${output}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE whole ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "unsharded run failed: ${err}")
  endif()
  execute_process(COMMAND ${TOOL} merge ${files} --output ${output}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE merged ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "merge failed: ${err}")
  endif()
  if(NOT merged STREQUAL whole)
    message(FATAL_ERROR "merged shards differ from the whole run (${output}):\n--- whole\n${whole}\n--- merged\n${merged}")
  endif()
  if(DEFINED EXPECT_NOTE AND output STREQUAL "table" AND NOT merged MATCHES "${EXPECT_NOTE}")
    message(FATAL_ERROR "the merged tables lack the note '${EXPECT_NOTE}'")
  endif()
endforeach()
list(GET files 0 one)
execute_process(COMMAND ${TOOL} merge ${one} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "is missing")
  message(FATAL_ERROR "merging one shard of ${SHARDS} was not refused: ${err}")
endif()

# Every shard's structure is checked before anything is written: a damaged
# copy of one shard, in place of the shard, is refused in one line that names
# it (exit 2, nothing on stdout) and --out is not created. Each of these
# merged before (rows missing, a shard index 1.5 read as 1, another lplab's
# output) or was refused for the wrong reason (-1 read as 2^64 - 1).
list(GET files 1 shard)
list(REMOVE_AT files 1)
file(READ ${shard} good)
string(JSON first_table GET "${good}" tables 0 id)
set(damaged ${WORK}_damaged.json)
set(target ${WORK}_merged.json)
function(expect_refused what json expect)
  file(WRITE ${damaged} "${json}")
  file(REMOVE ${target})
  execute_process(COMMAND ${TOOL} merge ${files} ${damaged} --out ${target}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REGEX REPLACE "\n$" "" line "${err}")
  if(NOT rc EQUAL 2 OR NOT out STREQUAL "" OR line MATCHES "\n" OR NOT line MATCHES "^lplab: error: [^ ]*_damaged.json: ${expect}")
    message(FATAL_ERROR "a shard with ${what} was not refused in one line matching '${expect}' (exit ${rc}):\n${out}${err}")
  endif()
  if(EXISTS ${target})
    message(FATAL_ERROR "a shard with ${what} was refused after ${target} was written")
  endif()
endfunction()
# The same shard rewritten with its keys sorted (CMake's JSON writer, jq -S)
# is the same run, and merges as the original did.
string(JSON version GET "${good}" lplab_version)
string(JSON json SET "${good}" lplab_version "\"${version}\"")
file(WRITE ${damaged} "${json}")
execute_process(COMMAND ${TOOL} merge ${files} ${damaged} --output csv
                RESULT_VARIABLE rc OUTPUT_VARIABLE resorted ERROR_VARIABLE err)
execute_process(COMMAND ${TOOL} merge ${files} ${shard} --output csv OUTPUT_VARIABLE original)
if(NOT rc EQUAL 0 OR NOT resorted STREQUAL original)
  message(FATAL_ERROR "a shard with its keys reordered did not merge as the original: ${err}")
endif()
string(JSON json SET "${good}" tables "[]")
expect_refused("no tables" "${json}" "no tables")
string(JSON json REMOVE "${good}" tables 0)
expect_refused("a table left out" "${json}" "(no tables|its tables \\(.*\\) are not those of)")
string(JSON json REMOVE "${good}" tables 0 rows)
expect_refused("a table without rows" "${json}" "table ${first_table} has no 'rows'")
string(JSON json SET "${good}" shard index "1.5")
expect_refused("shard index 1.5" "${json}" "malformed 'shard'")
string(JSON json SET "${good}" shard index "-1")
expect_refused("shard index -1" "${json}" "malformed 'shard'")
string(JSON json SET "${good}" shard count "-3")
expect_refused("shard count -3" "${json}" "malformed 'shard'")
string(JSON json SET "${good}" lplab_version "\"0.0.1\"")
expect_refused("another lplab's version" "${json}" "made by lplab 0\\.0\\.1; this is lplab ")
file(REMOVE ${damaged})
list(APPEND files ${shard})
file(REMOVE ${files})
