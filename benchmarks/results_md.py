"""Writes a measured table into docs/results.md between its markers.

Every benchmark script owns one section, delimited by
<!-- NAME:begin --> and <!-- NAME:end -->; running it again replaces that
section only. A missing section is appended under `heading`.
"""
import os
import re


def replace_section(path, name, table, heading):
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    block = f"{begin}\n{table.rstrip()}\n{end}"
    text = open(path).read() if os.path.exists(path) else ""
    if begin in text and end in text:
        text = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: block,
                      text, flags=re.S)
    else:
        text += f"\n## {heading}\n\n{block}\n"
    with open(path, "w") as f:
        f.write(text)
