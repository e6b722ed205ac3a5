#!/usr/bin/env python3
"""Runs a command beside an OpenAI-compatible chat endpoint on loopback.

    chat_server.py --log FILE [--mode good|garbage|error] -- CMD ARGS...

Serves POST /v1/chat/completions on 127.0.0.1 (a free port) in a thread,
runs CMD with every "{url}" in its arguments replaced by the endpoint's URL,
and exits with CMD's exit code. The endpoint answers with proposals built by
proposer.py from the request's user message, inside a Markdown code fence
as chat models write them (mode good), with prose that holds no JSON
(garbage), or with HTTP 500 (error). It appends the model and the
Authorization header of each request to the log.
"""
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import proposer  # noqa: E402


def main():
    split = sys.argv.index("--")
    options, command = sys.argv[1:split], sys.argv[split + 1:]
    log_path = options[options.index("--log") + 1]
    mode = options[options.index("--mode") + 1] if "--mode" in options else "good"

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with open(log_path, "a") as log:
                log.write("model=%s auth=%s path=%s\n" % (
                    body.get("model"), self.headers.get("Authorization"), self.path))
            if mode == "error":
                self.send_response(500)
                self.end_headers()
                self.wfile.write(b"internal error")
                return
            request = json.loads(body["messages"][-1]["content"])
            if mode == "garbage":
                content = "I think a tile of 32 would be nice."
            else:
                content = "Here you go:\n```json\n%s\n```\n" % json.dumps(
                    proposer.propose(request))
            reply = {"choices": [{"message": {"role": "assistant", "content": content}}]}
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = "http://127.0.0.1:%d/v1/chat/completions" % server.server_address[1]
    code = subprocess.call([arg.replace("{url}", url) for arg in command])
    server.shutdown()
    sys.exit(code)


if __name__ == "__main__":
    main()
