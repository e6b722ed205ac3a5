#!/usr/bin/env python3
"""Checks that each ke library includes only the ke headers of libraries it
links, directly or through them (ke-link-graph.txt, written by
cmake/KeLayering.cmake, which also keeps the link graph free of cycles).

An #include without the matching link is how a cycle creeps in unnoticed:
static archives link in any order, so nothing else would catch it. A library
named KeX lives in lib/X/ and include/ke/X/; tools/ sit on top and are not
checked.

Usage: check-layering.py SOURCE_ROOT LINK_GRAPH
Exit status 1 with one line per offending #include, else 0.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"ke/([A-Za-z]+)/', re.M)


def read_graph(path):
    graph = {}
    with open(path) as f:
        for line in f:
            if ":" in line:
                lib, deps = line.split(":", 1)
                graph[lib.strip()] = deps.split()
    return graph


def closure(graph, lib):
    seen, pending = set(), list(graph.get(lib, []))
    while pending:
        dep = pending.pop()
        if dep not in seen:
            seen.add(dep)
            pending.extend(graph.get(dep, []))
    return seen


def main():
    root, graph_path = sys.argv[1], sys.argv[2]
    graph = read_graph(graph_path)
    problems = []
    for lib in sorted(graph):
        component = lib[len("Ke"):]
        allowed = closure(graph, lib) | {lib}
        for folder in (os.path.join(root, "lib", component),
                       os.path.join(root, "include", "ke", component)):
            if not os.path.isdir(folder):
                continue
            for name in sorted(os.listdir(folder)):
                if not name.endswith((".cpp", ".h", ".td")):
                    continue
                path = os.path.join(folder, name)
                with open(path) as f:
                    text = f.read()
                for match in INCLUDE.finditer(text):
                    target = "Ke" + match.group(1)
                    # Config.h, Revision.h and the generated LoweringSourceHash.h
                    # sit directly under ke/ and match nothing here.
                    if target not in allowed and target in graph:
                        line = text.count("\n", 0, match.start()) + 1
                        problems.append(
                            f"{os.path.relpath(path, root)}:{line}: {lib} includes "
                            f"ke/{match.group(1)}/ but does not link {target} "
                            f"(add it to {lib}'s target_link_libraries, if the layers "
                            f"in cmake/KeLayering.cmake allow it)")
    for problem in problems:
        print(problem)
    print(f"check-layering: {len(graph)} libraries, "
          f"{len(problems)} include(s) outside their links")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
