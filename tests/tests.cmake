# Test discovery: every tests/test_*.c is one cmocka executable and one ctest
# test (each in its own process, with a timeout); every tests/*.sh is a shell
# integration test run against the real binary; each test gets its own
# RELISH_MACHINE, so a relish serve one test starts does not refuse the
# relish run of a test beside it (src/serve/presence.c).  Exit status 77 is
# "skipped" (ctest lists those at the end): a test that cannot run on this
# machine prints one line saying why and exits 77
# (tests/support/nested-skip.sh for the container tests).  Helper programs that tests
# need live in tests/support/ (one executable per .c, or shared libraries
# named lib*.c).
file(GLOB RELISH_TEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/test_*.c)
foreach(src ${RELISH_TEST_SOURCES})
  get_filename_component(name ${src} NAME_WE)
  add_executable(${name} ${src})
  target_link_libraries(${name} PRIVATE relishcore PkgConfig::CMOCKA)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77
    ENVIRONMENT "RELISH_SRC=${CMAKE_SOURCE_DIR};RELISH_BUILD=${CMAKE_BINARY_DIR};RELISH_MACHINE=${name}")
endforeach()

file(GLOB RELISH_TEST_SUPPORT CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/support/*.c)
foreach(src ${RELISH_TEST_SUPPORT})
  get_filename_component(name ${src} NAME_WE)
  if(name MATCHES "^lib")
    string(REGEX REPLACE "^lib" "" libname ${name})
    add_library(${libname} SHARED ${src})
    target_include_directories(${libname} PRIVATE ${CMAKE_SOURCE_DIR}/src)
  elseif(name MATCHES "^mk")
    # Fixture builders (mk*.c) write state through the real store API.
    add_executable(${name} ${src})
    target_link_libraries(${name} PRIVATE relishcore)
  else()
    add_executable(${name} ${src})
    target_link_libraries(${name} PRIVATE m)
  endif()
endforeach()

file(GLOB RELISH_TEST_SCRIPTS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/*.sh)
foreach(script ${RELISH_TEST_SCRIPTS})
  get_filename_component(name ${script} NAME_WE)
  add_test(NAME ${name} COMMAND bash ${script})
  set_tests_properties(${name} PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77
    ENVIRONMENT "RELISH_SRC=${CMAKE_SOURCE_DIR};RELISH_BUILD=${CMAKE_BINARY_DIR};RELISH=${CMAKE_BINARY_DIR}/relish;RELISH_MACHINE=${name}")
endforeach()

# The tests that bring up a private Slurm (tests/support/slurm_env.sh) run
# one at a time: two clusters, their daemons and their jobs at once on a
# 2-core machine made a timing-bound check flaky (test_serve_slurm's
# adoption after kill -9 failed once beside test_run_slurm).
foreach(name test_run_slurm test_serve_slurm test_serve_attacks_slurm)
  if(TEST ${name})
    set_tests_properties(${name} PROPERTIES RESOURCE_LOCK slurm)
  endif()
endforeach()

# Fuzz targets (tests/fuzz/fuzz_T.c) replayed without libFuzzer: each is
# linked with tests/fuzz/replay_main.c into replay_T, and the test
# fuzz_replay_T gives it every seed (tests/fuzz/seeds/T/; for the spec, the
# spec test cases and the quickstart example) and every committed
# regression input (tests/fuzz/regress/T/) once, under this build's
# sanitizers.  Fuzzing itself (clang's libFuzzer) is tests/test_fuzz.sh.
file(GLOB RELISH_FUZZ_TARGETS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_*.c)
foreach(src ${RELISH_FUZZ_TARGETS})
  get_filename_component(name ${src} NAME_WE)
  string(REGEX REPLACE "^fuzz_" "" target ${name})
  add_executable(replay_${target} ${src} ${CMAKE_SOURCE_DIR}/tests/fuzz/replay_main.c)
  target_link_libraries(replay_${target} PRIVATE relishcore)
  set(inputs)
  if(target MATCHES "^spec")
    list(APPEND inputs ${CMAKE_SOURCE_DIR}/tests/spec_cases ${CMAKE_SOURCE_DIR}/examples/quickstart)
  endif()
  foreach(dir seeds regress)
    if(EXISTS ${CMAKE_SOURCE_DIR}/tests/fuzz/${dir}/${target})
      list(APPEND inputs ${CMAKE_SOURCE_DIR}/tests/fuzz/${dir}/${target})
    endif()
  endforeach()
  add_test(NAME fuzz_replay_${target} COMMAND replay_${target} ${inputs})
  set_tests_properties(fuzz_replay_${target} PROPERTIES TIMEOUT 120)
endforeach()

# test_examples and test_resume_examples run every example's PyTorch and
# scikit-learn trials: they run alone (RUN_SERIAL), so the timing-sensitive
# tests are not squeezed beside them on a small machine.
foreach(name test_examples test_resume_examples)
  if(TEST ${name})
    set_tests_properties(${name} PROPERTIES RUN_SERIAL TRUE)
  endif()
endforeach()
