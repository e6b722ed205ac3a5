#!/usr/bin/env python3
"""A scripted proposer for the tests of `ke-opt tune --proposer-cmd`.

Reads ke's request (JSON on stdin) and answers, as JSON on stdout, with
proposals built from it: for the first sketch with knobs, one schedule per
knob that moves that knob to its last value (the others at their defaults),
then three that ke must reject: an unknown sketch, a value the knob does not
have, and a repeat of the first proposal. With --log FILE, appends the
request's op, count and number of best records to FILE.
"""
import json
import sys


def propose(request):
    sketch = next(s for s in request["sketches"] if s["knobs"])
    defaults = {k["name"]: k["default"] for k in sketch["knobs"]}
    proposals = []
    for knob in sketch["knobs"]:
        knobs = dict(defaults)
        knobs[knob["name"]] = knob["values"][-1]
        if knobs != defaults:
            proposals.append({"sketch": sketch["sketch"], "knobs": knobs})
    proposals = proposals[: max(1, request["count"] - 3)]
    first = sketch["knobs"][0]
    bad_value = dict(defaults)
    bad_value[first["name"]] = max(first["values"]) + 12345
    proposals += [
        {"sketch": "no.such.sketch", "knobs": {}},
        {"sketch": sketch["sketch"], "knobs": bad_value},
        proposals[0],
    ]
    return {"proposals": proposals}


def main():
    request = json.load(sys.stdin)
    if "--log" in sys.argv:
        with open(sys.argv[sys.argv.index("--log") + 1], "a") as log:
            log.write("request op=%s count=%d best=%d protocol=%s\n" % (
                request["op"], request["count"], len(request["best"]),
                request["protocol"]))
    json.dump(propose(request), sys.stdout)


if __name__ == "__main__":
    main()
