# The web dashboard (docs/dashboard.md), embedded in relish at build time.
# RELISH_WEB: ON (needs npm: Debian's nodejs and npm, scripts/deps.sh web),
# OFF (relish serve answers its pages with a line saying how to build
# them), AUTO (ON when npm is found; the default).  npm installs
# web/package-lock.json's packages into this build folder (never into the
# source tree, never at run time); relish-web-embed then writes every file
# of web/src and the uPlot files the page loads into web/web_assets.c, a
# source of relishcore.  With the tests on, the lockfile's dev packages
# (playwright-core, which drives Debian's chromium in tests/test_web*.sh)
# are installed too.
set(RELISH_WEB AUTO CACHE STRING "Build the web dashboard into relish: ON, OFF or AUTO (when npm is found)")
set_property(CACHE RELISH_WEB PROPERTY STRINGS AUTO ON OFF)
find_program(RELISH_NPM npm)
if(RELISH_WEB STREQUAL "AUTO")
  if(RELISH_NPM)
    set(relish_web_on ON)
  else()
    set(relish_web_on OFF)
    message(STATUS "relish: npm not found, building without the web dashboard "
                   "(scripts/deps.sh web installs Debian's nodejs and npm)")
  endif()
elseif(RELISH_WEB)
  if(NOT RELISH_NPM)
    message(FATAL_ERROR "RELISH_WEB=ON needs npm (Debian: nodejs npm; scripts/deps.sh web); "
                        "configure with -DRELISH_WEB=OFF to build without the dashboard")
  endif()
  set(relish_web_on ON)
else()
  set(relish_web_on OFF)
endif()
set(RELISH_WEB_BUILT ${relish_web_on} CACHE INTERNAL "whether the dashboard is embedded")

add_executable(relish-web-embed src/web/web_embed_main.c src/web/web_type.c)
target_include_directories(relish-web-embed PRIVATE ${CMAKE_SOURCE_DIR}/src)

set(relish_web_dir ${CMAKE_BINARY_DIR}/web)
set(relish_web_gen ${relish_web_dir}/web_assets.c)
file(MAKE_DIRECTORY ${relish_web_dir})
if(relish_web_on)
  file(GLOB relish_web_files CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/web/src/*)
  set(relish_npm_stamp ${relish_web_dir}/node_modules/.package-lock.json)
  if(RELISH_TESTS)
    set(relish_npm_omit)
  else()
    set(relish_npm_omit --omit=dev)
  endif()
  add_custom_command(OUTPUT ${relish_npm_stamp}
    COMMAND ${CMAKE_COMMAND} -E copy ${CMAKE_SOURCE_DIR}/web/package.json
            ${CMAKE_SOURCE_DIR}/web/package-lock.json ${relish_web_dir}
    COMMAND ${RELISH_NPM} ci --no-audit --no-fund --loglevel=error ${relish_npm_omit}
    WORKING_DIRECTORY ${relish_web_dir}
    DEPENDS ${CMAKE_SOURCE_DIR}/web/package.json ${CMAKE_SOURCE_DIR}/web/package-lock.json
    COMMENT "npm ci: the dashboard's packages (web/package-lock.json)")
  set(relish_web_pairs)
  foreach(f ${relish_web_files})
    get_filename_component(name ${f} NAME)
    list(APPEND relish_web_pairs "${name}=${f}")
  endforeach()
  list(APPEND relish_web_pairs
    "uPlot.iife.min.js=${relish_web_dir}/node_modules/uplot/dist/uPlot.iife.min.js"
    "uPlot.min.css=${relish_web_dir}/node_modules/uplot/dist/uPlot.min.css"
    "uPlot.LICENSE=${relish_web_dir}/node_modules/uplot/LICENSE")
  add_custom_command(OUTPUT ${relish_web_gen}
    COMMAND relish-web-embed ${relish_web_gen} ${relish_web_pairs}
    DEPENDS relish-web-embed ${relish_web_files} ${relish_npm_stamp}
    COMMENT "embedding the dashboard (web/src, uPlot)")
else()
  add_custom_command(OUTPUT ${relish_web_gen}
    COMMAND relish-web-embed ${relish_web_gen}
    DEPENDS relish-web-embed
    COMMENT "no dashboard in this build (RELISH_WEB=OFF)")
endif()
target_sources(relishcore PRIVATE ${relish_web_gen})
target_compile_definitions(relishcore PRIVATE RELISH_WEB_BUILT=$<BOOL:${relish_web_on}>)
