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
  if(WB_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
