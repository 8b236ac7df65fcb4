# A run split with --shard I/N and joined by `lplab merge` gives exactly the
# tables of the unsharded run: every value (CSV, full precision) and every
# note (the text tables carry the notes).
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
file(REMOVE ${files})
