# Warnings in our own targets (never in third-party headers, which come in as
# SYSTEM includes). They are errors when WB_WERROR is on: the project's
# presets and CI turn it on, a plain user's or packager's build
# (`cmake -B build -DCMAKE_BUILD_TYPE=Release`) leaves it off, so a newer or
# older compiler's new warning never stops someone from building.
option(WB_WERROR "Treat warnings in the project's own code as errors" OFF)

function(wb_target_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align
    -Woverloaded-virtual -Wnull-dereference -Wdouble-promotion -Wformat=2
    -Wimplicit-fallthrough)
  # GCC 12 reports -Wrestrict inside libstdc++'s std::string at -O3 for
  # plain concatenations ("/" + std::to_string(n)): a known false positive
  # (GCC bug 105329), fixed in GCC 13. Keep it a warning there, not an error.
  # Likewise -Wnull-dereference at -O3 (Release): GCC 12 inlines
  # std::vector::resize deep enough to see a null pointer on a path that
  # cannot run ("potential null pointer dereference" in stl_construct.h for
  # any vector<float> sized at run time). At -O1 and -O2 (the ASan preset,
  # RelWithDebInfo) it stays an error.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-error=restrict
                           $<$<CONFIG:Release>:-Wno-error=null-dereference>)
  endif()
  if(WB_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
