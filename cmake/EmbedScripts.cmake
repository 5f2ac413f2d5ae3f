# cwork_embed_scripts(<lua files> <output dir>)
# Writes scripts.c and scripts.h: one `const cw_script cw_script_<name>` per file with
# the body as a byte array and the SHA1 that Redis' EVALSHA expects. Runs at configure
# time; the glob's CONFIGURE_DEPENDS and the file list below re-run it when a script
# changes.
function(cwork_embed_scripts files outdir)
  file(MAKE_DIRECTORY ${outdir})
  set(c "/* Generated from the .lua files in src/scripts by cmake/EmbedScripts.cmake. */\n#include \"scripts.h\"\n\n")
  set(h "/* Generated from the .lua files in src/scripts by cmake/EmbedScripts.cmake. */\n#ifndef CWORK_SCRIPTS_H\n#define CWORK_SCRIPTS_H\n#include \"redis.h\"\n\n")
  foreach(f ${files})
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${f})
    get_filename_component(name ${f} NAME_WE)
    file(READ ${f} hex HEX)
    file(SHA1 ${f} sha)
    file(SIZE ${f} size)
    string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
    string(APPEND c "static const char body_${name}[] = {${bytes} 0x00};\n")
    string(APPEND c "const cw_script cw_script_${name} = {\"${name}\", body_${name}, ${size}, \"${sha}\"};\n\n")
    string(APPEND h "extern const cw_script cw_script_${name};\n")
  endforeach()
  string(APPEND h "\n#endif\n")
  file(WRITE ${outdir}/scripts.c.tmp "${c}")
  file(WRITE ${outdir}/scripts.h.tmp "${h}")
  # Only touch the real files when they change, so that builds stay incremental.
  configure_file(${outdir}/scripts.c.tmp ${outdir}/scripts.c COPYONLY)
  configure_file(${outdir}/scripts.h.tmp ${outdir}/scripts.h COPYONLY)
endfunction()
