"""A scripted OpenAI-compatible server for tests: real HTTP on 127.0.0.1, so litellm's whole client path runs.

    with FakeOpenAI() as server:
        server.script("fake", [status(429, retry_after=1.5), reply("ok")])   # or server.script(None, [...])
        await litellm.acompletion(model="openai/fake", api_base=server.base_url, api_key="x", messages=...)
        server.requests    # the JSON bodies received, in order

Each request takes the next behaviour from its model's queue (the `model` of the request body, which litellm sends
without the `openai/` prefix; a prefixed name given to `script` is stripped too), else from the global queue, else
`server.default`: a behaviour or a callable `default(body) -> behaviour`, so a test can answer from the prompt.
A queued item may also be such a callable.

A request with `stream: true` gets its reply as server-sent events, one chunk a word (a token, as a server counts
here), then the usage chunk when `stream_options.include_usage` asks for it, then `[DONE]`; `server.streams` records
each stream: the pieces sent, of how many, and whether the client closed it first. A server made with
`streams=False` cannot stream: it answers every request with one JSON body, as if `stream` were not there.
`runaway(body)` answers as the offline model would and then keeps writing, ignoring `max_tokens`, to 20,000 tokens
in all: as a stream, it stops only when the client closes the connection.

What litellm 1.110.2 (`litellm.acompletion` or its Router, `openai/<name>`) raises for each behaviour
(tests/llm/test_fake_openai.py; the same with litellm's aiohttp transport on or off):

    reply / reply_json   no exception: a ModelResponse; `usage` carries the token counts given
    empty_choices()      no exception: a ModelResponse whose `choices` is [] (the caller must check)
    malformed()          litellm.InternalServerError, status_code 500, "Expecting value: line 1 column 1 (char 0)"
    status(429, ...)     litellm.RateLimitError; Retry-After in `error.response.headers["retry-after"]` and
                         `error.litellm_response_headers["retry-after"]` (a string: "1.5")
    status(500)          litellm.InternalServerError, status_code 500
    status(503)          litellm.ServiceUnavailableError, status_code 503
    hang(seconds)        litellm.Timeout (status_code 408) once the client's `timeout` passes
    close()              litellm.InternalServerError "Connection error." (status_code 500), not APIConnectionError
    free_port() (down)   the same as close()

None of them is a litellm.APIError, or a litellm.APIConnectionError; all are openai.APIError (Timeout is an
openai.APIConnectionError, the others openai.APIStatusError). Plain `litellm.acompletion` lets the OpenAI client
retry 429, 5xx, timeouts and dropped connections twice (honouring Retry-After) unless `max_retries=0` is passed: one
call, three requests (see `server.requests`). A Router turns the client's retries off and makes `num_retries` itself.
"""

import itertools
import json
import re
import socket
import threading
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Behaviour:
    status: int = 200
    payload: object = None  # a dict sent as JSON, or bytes sent as they are
    headers: dict = field(default_factory=dict)
    hang: float = 0.0  # seconds to wait, sending nothing, before closing the connection
    drop: bool = False  # close the connection without a response


_ids = itertools.count(1)


def reply(text, prompt_tokens=10, completion_tokens=5, finish_reason="stop"):
    """A chat.completion with one assistant message and its usage (the model is filled in from the request)."""
    return Behaviour(
        payload={
            "id": f"chatcmpl-fake-{next(_ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": None,
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason}
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
    )


def reply_json(obj, **usage):
    return reply(json.dumps(obj), **usage)


def empty_choices():
    base = reply("").payload
    return Behaviour(payload={**base, "choices": []})


def malformed():
    return Behaviour(payload=b"<html>upstream sent this instead of JSON", headers={"Content-Type": "application/json"})


def status(code, retry_after=None, message=None):
    """An HTTP error with an OpenAI-style error body; Retry-After (seconds) when given."""
    kind = {429: "rate_limit_error", 400: "invalid_request_error", 401: "authentication_error"}.get(
        code, "server_error"
    )
    error = {"message": message or f"fake error {code}", "type": kind, "param": None, "code": None}
    headers = {} if retry_after is None else {"Retry-After": f"{retry_after:g}"}
    return Behaviour(status=code, payload={"error": error}, headers=headers)


def hang(seconds):
    return Behaviour(hang=seconds)


def close():
    return Behaviour(drop=True)


def offline_reply(body, seed=7):
    """Answer as the offline model would (its replies fit every prompt contract), so whole sessions run here."""
    from reasoning.llm.offline.answers import answer  # Django-free, but kept out of the module's import time

    prompt = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
    return reply(answer(prompt, seed), prompt_tokens=len(prompt) // 4, completion_tokens=80)


TEMPLATE_TOKENS = 4  # a chat template's role markers per message, as a byte-level tokenizer might count them


def byte_tokens(body, seed=7):
    """Answer as the offline model would, billed as a model whose tokenizer takes one token per UTF-8 byte (a local
    model's byte fallback): the prompt's bytes and its template's, the reply's bytes, the reply cut at the request's
    `max_tokens` as a real server cuts it (`finish_reason` "length")."""
    text = offline_reply(body, seed).payload["choices"][0]["message"]["content"]
    data, limit, finish = text.encode(), body.get("max_tokens"), "stop"
    if limit and len(data) > limit:
        data, finish = data[:limit], "length"
    prompt = sum(len((m.get("content") or "").encode()) + TEMPLATE_TOKENS for m in body["messages"])
    return reply(data.decode(errors="ignore"), prompt_tokens=prompt, completion_tokens=len(data), finish_reason=finish)


RUNAWAY_TOKENS = 20_000  # what a server that ignores max_tokens writes (the red team saw 19,859 for 1,500 asked)


def runaway(body, seed=7, tokens=RUNAWAY_TOKENS):
    """Answer as the offline model would, then go on writing to `tokens` tokens in all, whatever `max_tokens` asked
    (a server that ignores it, or a reasoning model that keeps thinking aloud); billed a token a word."""
    answered = offline_reply(body, seed).payload["choices"][0]["message"]["content"]
    written = len(pieces_of(answered))
    text = answered + "".join(f" and{i}" for i in range(max(0, tokens - written)))  # litellm stops a repeated chunk
    prompt = sum(len((m.get("content") or "").encode()) for m in body["messages"])
    return reply(text, prompt_tokens=prompt, completion_tokens=max(tokens, written), finish_reason="length")


def pieces_of(text):
    """A reply's text as a server streams it: a word (with the space before it) a chunk."""
    return re.findall(r"\s*\S+", text) or [text]


def free_port():
    """The base URL of a loopback port nothing listens on (a server that is down)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def streamed(body, behaviour):
    """Whether a request asked for a stream and its behaviour is a reply that can be streamed."""
    payload = behaviour.payload
    wanted = isinstance(body, dict) and body.get("stream")
    return bool(wanted) and behaviour.status == 200 and isinstance(payload, dict) and "choices" in payload


def _model_key(model):
    return model.split("/", 1)[1] if model and model.startswith("openai/") else model


class FakeOpenAI:
    def __init__(self, default=None, port=0, streams=True, chunk_words=1):
        """`port`: a given loopback port (a server started again where one was stopped); 0 picks a free one.
        `streams=False`: a server that cannot stream, answering a stream request with one JSON body. `chunk_words`:
        the words a streamed chunk carries (litellm reads each chunk for about a millisecond of CPU)."""
        self.default = default or (lambda body: reply("ok"))
        self.can_stream = streams
        self.chunk_words = chunk_words
        self.requests = []
        self.streams = []  # {"sent": pieces sent, "of": pieces in the reply, "closed": the client closed it first}
        self._queues = defaultdict(deque)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self._httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def script(self, model, behaviours):
        """Queue behaviours for requests naming `model` (None: any request whose model has no queue)."""
        with self._lock:
            self._queues[_model_key(model)].extend(behaviours)

    def _next(self, body):
        model = body.get("model") if isinstance(body, dict) else None
        with self._lock:
            self.requests.append(body)
            queue = self._queues.get(model) or self._queues.get(None)
            item = queue.popleft() if queue else self.default
        return item(body) if callable(item) else item

    def _models(self):
        with self._lock:
            names = {m for m in self._queues if m} | {b.get("model") for b in self.requests if isinstance(b, dict)}
        return sorted(n for n in names if n) or ["fake"]

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                if self.path.rstrip("/") != "/v1/models":
                    return self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
                data = [{"id": name, "object": "model", "owned_by": "fake"} for name in fake._models()]
                self._send(200, {"object": "list", "data": data})

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path.rstrip("/") != "/v1/chat/completions":
                    return self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode(errors="replace")
                behaviour = fake._next(body)
                if behaviour.hang:
                    fake._stopping.wait(behaviour.hang)
                if behaviour.hang or behaviour.drop:
                    self.close_connection = True
                    return
                payload = behaviour.payload
                if isinstance(payload, dict) and "model" in payload and payload["model"] is None:
                    payload = {**payload, "model": body.get("model") if isinstance(body, dict) else "fake"}
                if fake.can_stream and streamed(body, behaviour):
                    return self._stream(payload, (body.get("stream_options") or {}).get("include_usage"))
                self._send(behaviour.status, payload, behaviour.headers)

            def _stream(self, payload, with_usage):
                """The reply as server-sent events, a word a chunk; stops when the client closes the connection."""
                self.close_connection = True
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                choice = (payload["choices"] or [{"message": {"content": None}, "finish_reason": None}])[0]
                words = pieces_of(choice["message"]["content"]) if choice["message"]["content"] else []
                size = fake.chunk_words
                pieces = ["".join(words[i : i + size]) for i in range(0, len(words), size)]
                record = {"sent": 0, "of": len(pieces), "closed": False}
                with fake._lock:
                    fake.streams.append(record)
                base = {k: payload[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
                events = [({"role": "assistant", "content": piece}, None) for piece in pieces]
                if payload["choices"]:
                    events.append(({}, choice.get("finish_reason") or "stop"))
                try:
                    for delta, finish in events:
                        chunk = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # one choice
                        self._event(chunk)
                        record["sent"] += bool(delta)
                    if with_usage:
                        self._event({**base, "choices": [], "usage": payload.get("usage")})
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    record["closed"] = True

            def _event(self, chunk):
                self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                self.wfile.flush()

            def _send(self, code, payload, headers=None):
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(code)
                headers = {"Content-Type": "application/json", **(headers or {})}
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler

    def __enter__(self):
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), name="fake-openai", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stopping.set()  # wakes hanging handlers
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
