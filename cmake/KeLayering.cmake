# ke's libraries in layers, bottom first (docs/architecture.md). A library
# may link (target_link_libraries in its lib/*/CMakeLists.txt) only
# libraries of lower layers, so the link graph has no cycle: a dependency
# that points sideways or up stops CMake at configure time, before anything
# builds. test/layering/check-layering.py checks that the #includes of each
# library stay within what it links.
set(KE_LIBRARY_LAYERS
  "KeSupport,KeTarget,KeWorkload"  # 0: no ke dependencies
  "KeSketch,KeCodegen,KeDatabase"  # 1: rules, lowering, records
  "KeSchedule,KeRuntime"           # 2: schedules; running kernels
  "KeMeasure,KeTunedSchedules"     # 3: measuring candidates; records <-> schedules
  "KeSearch,KeTransforms"          # 4: tuning; the apply pass
  "KeCompiler,KeInitAll")          # 5: whole-module compile; registration for tools

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
