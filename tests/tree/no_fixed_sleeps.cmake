# no_fixed_sleeps.cmake - the runtime never sleeps a fixed time: it waits on
# conditions, events and its parkers (docs/internals.md). A sleep left in
# src/ (an experiment's delay, say) costs every op that passes it, and no
# behaviour test sees it: a 300 us sleep in the CUDA backend's completion
# once made each launch + wait round trip 40 times slower while every test
# passed. Fails naming each file and line that calls a sleep function.
#   cmake -DSRC=<source root> -P no_fixed_sleeps.cmake
if(NOT SRC)
  message(FATAL_ERROR "no_fixed_sleeps.cmake: pass -DSRC=<source root>")
endif()
file(GLOB_RECURSE sources "${SRC}/src/*.c" "${SRC}/src/*.h" "${SRC}/include/*.h")
set(found "")
foreach(path IN LISTS sources)
  file(STRINGS "${path}" lines REGEX "(^|[^a-z_])(nanosleep|usleep|clock_nanosleep|sleep|thrd_sleep)\\(")
  foreach(line IN LISTS lines)
    file(RELATIVE_PATH rel "${SRC}" "${path}")
    string(STRIP "${line}" line)
    string(APPEND found "\n  ${rel}: ${line}")
  endforeach()
endforeach()
list(LENGTH sources count)
if(count EQUAL 0)
  message(FATAL_ERROR "no_fixed_sleeps.cmake: no sources under ${SRC}/src")
endif()
if(found)
  message(FATAL_ERROR "the runtime calls a sleep function:${found}")
endif()
message(STATUS "${count} runtime sources, no sleep calls")
