# ke's libraries in layers, bottom first (docs/architecture.md). A library
# may link (target_link_libraries in its lib/*/CMakeLists.txt) only
# libraries of lower layers, so the link graph has no cycle: a dependency
# that points sideways or up stops CMake at configure time, before anything
# builds. test/layering/check-layering.py checks that the #includes of each
# library stay within what it links.
set(KE_LIBRARY_LAYERS
  "KeSupport,KeTarget,KeWorkload"  # 0: no ke dependencies
  "KeSketch,KeCodegen,KeDatabase,KeGraph"  # 1: rules, lowering, records, graph preparation
  "KeSchedule,KeRuntime"           # 2: schedules; running kernels
  "KeMeasure,KeTunedSchedules"     # 3: measuring candidates; records <-> schedules
  "KeSearch,KeTransforms"          # 4: tuning; the apply pass
  "KeCompiler,KeInitAll"           # 5: whole-module compile; registration for tools
  "KeCAPI")                        # 6: the C API (libke.so), for Python and other hosts

# Fails configuration when a ke library links one of its own or a higher
# layer; writes the link graph to ${CMAKE_BINARY_DIR}/ke-link-graph.txt
# ("KeX: KeY KeZ" per line) for the include check.
function(ke_check_layering)
  set(graph "")
  set(index 0)
  foreach(layer IN LISTS KE_LIBRARY_LAYERS)
    string(REPLACE "," ";" libs "${layer}")
    foreach(lib IN LISTS libs)
      set(layer_of_${lib} ${index})
    endforeach()
    math(EXPR index "${index} + 1")
  endforeach()
  foreach(layer IN LISTS KE_LIBRARY_LAYERS)
    string(REPLACE "," ";" libs "${layer}")
    foreach(lib IN LISTS libs)
      if(NOT TARGET ${lib})
        message(FATAL_ERROR "ke layering: ${lib} is listed in cmake/KeLayering.cmake but not built")
      endif()
      get_target_property(deps ${lib} LINK_LIBRARIES)
      set(ke_deps "")
      foreach(dep IN LISTS deps)
        if(dep MATCHES "^Ke[A-Z]")
          if(NOT DEFINED layer_of_${dep})
            message(FATAL_ERROR "ke layering: ${lib} links ${dep}, which has no layer in cmake/KeLayering.cmake")
          endif()
          if(NOT layer_of_${dep} LESS layer_of_${lib})
            message(FATAL_ERROR "ke layering: ${lib} (layer ${layer_of_${lib}}) links ${dep} (layer ${layer_of_${dep}}); "
                                "a library may link only lower layers (cmake/KeLayering.cmake), or the graph could have a cycle")
          endif()
          list(APPEND ke_deps ${dep})
        endif()
      endforeach()
      string(REPLACE ";" " " ke_deps "${ke_deps}")
      string(APPEND graph "${lib}: ${ke_deps}\n")
    endforeach()
  endforeach()
  file(WRITE ${CMAKE_BINARY_DIR}/ke-link-graph.txt "${graph}")
endfunction()

# The same graph, checked when linking: each library is linked on its own
# into a shared object, `<Lib>LinkCheck` (its whole archive, the LinkCheck
# objects of the ke libraries it declares and of theirs, its other declared
# libraries, libMLIR.so and libLLVM.so, and zlib and zstd, which ke-opt
# links statically beside LLVM) with -z defs. A ke library it uses but does not
# declare leaves undefined symbols, which fail that link; a cycle among the
# declarations fails CMake's generation step (shared libraries may not
# depend on each other in a cycle). Built with `all`, so a build with a
# hidden dependency or a cycle fails.
function(ke_add_link_check)
  set(empty ${CMAKE_BINARY_DIR}/ke-link-check.cpp)
  file(WRITE ${empty} "// ke_add_link_check (cmake/KeLayering.cmake): no code of its own.\n")
  foreach(layer IN LISTS KE_LIBRARY_LAYERS)
    string(REPLACE "," ";" libs "${layer}")
    foreach(lib IN LISTS libs)
      add_library(${lib}LinkCheck SHARED ${empty})
      set_target_properties(${lib}LinkCheck PROPERTIES
        LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/link-check)
      get_target_property(deps ${lib} LINK_LIBRARIES)
      if(NOT deps)
        set(deps "")
      endif()
      set(declared "")
      foreach(dep IN LISTS deps)
        if(dep MATCHES "^Ke[A-Z]")
          list(APPEND declared ${dep}LinkCheck)
        elseif(dep MATCHES "^(.*)/lib([^/]+)\\.a$")
          # A static archive by path with a shared twin (SQLite): the twin,
          # since a non-PIC archive cannot go into a shared object.
          if(EXISTS "${CMAKE_MATCH_1}/lib${CMAKE_MATCH_2}.so")
            list(APPEND declared -l${CMAKE_MATCH_2})
          else()
            list(APPEND declared ${dep})
          endif()
        else()
          list(APPEND declared ${dep})
        endif()
      endforeach()
      add_dependencies(${lib}LinkCheck ${lib})
      # PUBLIC, as the archives declare theirs: a library may use what its
      # dependencies link.
      target_link_libraries(${lib}LinkCheck
        PRIVATE -Wl,--whole-archive $<TARGET_FILE:${lib}> -Wl,--no-whole-archive
        PUBLIC ${declared} MLIR LLVM z zstd)
      target_link_options(${lib}LinkCheck PRIVATE ${KE_LINKER_FLAG}
                          -Wl,-z,defs)
    endforeach()
  endforeach()
endfunction()
