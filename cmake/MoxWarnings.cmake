# Warnings as errors, strict C11, sanitizer flags for the whole tree.
set(MOX_WARNINGS -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
    -Wno-unused-parameter)
set(MOX_CXX_WARNINGS -Wall -Wextra -Werror -Wno-unused-parameter)

# Apply warnings to a target of ours (not to generated or third-party code).
function(mox_target_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:C>:${MOX_WARNINGS}>
    $<$<COMPILE_LANGUAGE:CXX>:${MOX_CXX_WARNINGS}>)
endfunction()

# No floating-point contraction anywhere: CPU and GPU results must match.
add_compile_options(-ffp-contract=off)

if(MOX_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
  add_compile_definitions(MOX_SANITIZE_ADDRESS=1)
elseif(MOX_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
  add_compile_definitions(MOX_SANITIZE_THREAD=1)
elseif(NOT MOX_SANITIZE STREQUAL "")
  message(FATAL_ERROR "MOX_SANITIZE must be '', 'address' or 'thread'")
endif()
