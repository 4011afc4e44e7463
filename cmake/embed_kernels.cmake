# Writes OUT: a C++ file that holds each OpenCL source in SOURCES as a string, looked up by
# file name through torch_ocl::kernels::source("name.cl").
string(REPLACE "|" ";" SOURCES "${SOURCES}")
set(body "")
set(table "")
foreach(src IN LISTS SOURCES)
  get_filename_component(name ${src} NAME)
  string(MAKE_C_IDENTIFIER ${name} ident)
  file(READ ${src} text)
  # Raw string literals have a length limit on some compilers; split into 16 KiB pieces.
  string(LENGTH "${text}" len)
  set(pieces "")
  set(pos 0)
  while(pos LESS len)
    string(SUBSTRING "${text}" ${pos} 16000 piece)
    string(APPEND pieces "R\"OCLSRC(${piece})OCLSRC\"\n")
    math(EXPR pos "${pos} + 16000")
  endwhile()
  if(pieces STREQUAL "")
    set(pieces "\"\"")
  endif()
  string(APPEND body "static const char k_${ident}[] =\n${pieces};\n")
  string(APPEND table "    {\"${name}\", k_${ident}},\n")
endforeach()
file(WRITE ${OUT}.tmp "// Generated from csrc/kernels/*.cl; do not edit.
#include <cstring>
#include <stdexcept>
#include <string>
#include \"kernels/embedded.h\"
namespace torch_ocl::kernels {
${body}
struct Entry { const char* name; const char* text; };
static const Entry kTable[] = {
${table}    {nullptr, nullptr}};
const char* source(const char* name) {
  for (const Entry* e = kTable; e->name; ++e)
    if (std::strcmp(e->name, name) == 0) return e->text;
  throw std::invalid_argument(std::string(\"no embedded OpenCL source named \") + name);
}
}  // namespace torch_ocl::kernels
")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
