# Test discovery: every tests/test_*.c is one cmocka executable and one ctest
# test (each in its own process, with a timeout); every tests/*.sh is a shell
# integration test run against the real binary.  Exit status 77 is
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
    ENVIRONMENT "RELISH_SRC=${CMAKE_SOURCE_DIR};RELISH_BUILD=${CMAKE_BINARY_DIR}")
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
    ENVIRONMENT "RELISH_SRC=${CMAKE_SOURCE_DIR};RELISH_BUILD=${CMAKE_BINARY_DIR};RELISH=${CMAKE_BINARY_DIR}/relish")
endforeach()
