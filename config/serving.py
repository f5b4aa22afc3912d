"""How Daphne serves the app, for both profiles: one list of server flags, and the doors Daphne lacks.

    python -m config.serving -b 127.0.0.1 -p 8000     # what `make run` and `make run-scaled` start

- DAPHNE_FLAGS: Daphne pings every socket after 10 s and drops one that has not answered 5 s later, so a client that
  vanished (a half-open socket) is let go within 15 s, not Daphne's default 50 s.
- A request body is counted as it streams in: past DATA_UPLOAD_MAX_MEMORY_SIZE the answer is a 413 and the
  connection closes, with nothing kept past the limit (Daphne's Twisted request would otherwise spool a chunked body
  of any size to a temporary file before the app saw a byte of it). A body within the limit stays in memory.
- A request's headers must arrive within HTTP_HEADERS_TIMEOUT_S of its first byte and its body within
  HTTP_BODY_TIMEOUT_S of its headers, else a 408 and the connection closes: a client trickling a byte every few
  seconds no longer holds a connection for ever (Twisted's idle timeout restarts with every byte).
- A websocket message over Daphne's limit (1 MiB) closes the socket with 1009 and a reason instead of dropping it
  (autobahn's failByDrop, on by default, made it a bare 1006).

install() puts these doors in place; config/asgi.py calls it, so they hold under any Daphne started on the app.
"""

import io
import json
import sys

DAPHNE_FLAGS = ["--ping-interval", "10", "--ping-timeout", "5", "--websocket_connect_timeout", "5"]
APPLICATION = "config.asgi:application"


def command(host, port, daphne="daphne"):
    """The Daphne command line for one server process of either profile."""
    return [daphne, "-b", host, "-p", str(port), *DAPHNE_FLAGS, APPLICATION]


def _plain(status, reason, text, path=b""):
    """A whole HTTP/1.1 response that closes the connection; JSON for the API, like every API error."""
    if path.startswith(b"/api/"):
        body, kind = json.dumps({"detail": text}).encode(), b"application/json"
    else:
        body, kind = text.encode(), b"text/plain; charset=utf-8"
    head = f"HTTP/1.1 {status} {reason}\r\n".encode()
    head += b"Content-Type: " + kind + b"\r\nContent-Length: " + str(len(body)).encode()
    head += b"\r\nConnection: close\r\n\r\n"
    return head + body


def install():
    """Daphne's HTTP and websocket factories with the doors above; a no-op outside Daphne."""
    if "daphne.server" not in sys.modules:
        return
    import daphne.server
    from daphne.http_protocol import HTTPFactory, WebRequest
    from daphne.ws_protocol import WebSocketFactory
    from django.conf import settings
    from twisted.web import http

    if getattr(daphne.server.HTTPFactory, "bounded", False):
        return

    class BoundedRequest(WebRequest):
        """Daphne's request, its body counted as it arrives and kept in memory up to the limit."""

        refused = False

        def gotLength(self, length):
            self.received = 0
            self.content = io.BytesIO()  # never a temporary file: the limit keeps a body small
            if length is not None and length > settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
                self.refuse_oversized()

        def handleContentChunk(self, data):
            if self.refused:
                return
            self.received += len(data)
            if self.received > settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
                self.content = io.BytesIO()  # what came before the limit goes too
                self.refuse_oversized()
                return
            self.content.write(data)

        def refuse_oversized(self):
            self.refused = True
            limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
            path = getattr(self.channel, "_path", b"") or b""
            text = f"The request body is larger than the {limit} bytes allowed."
            self.channel.transport.write(_plain(413, "Content Too Large", text, path))
            self.channel.transport.loseConnection()

        def process(self):
            if self.refused:
                return None
            return super().process()

    class BoundedChannel(http.HTTPChannel):
        """Twisted's HTTP channel with deadlines for a request's headers and body, which trickling cannot move."""

        deadline = None

        def dataReceived(self, data):
            self.arm_for_headers()
            super().dataReceived(data)

        def lineReceived(self, line):
            self.arm_for_headers()  # a pipelined request arrives here, from the buffer, not through dataReceived
            super().lineReceived(line)

        def arm_for_headers(self):
            if self.deadline is None and not self._handlingRequest:
                self.arm(settings.HTTP_HEADERS_TIMEOUT_S, "headers")

        def allHeadersReceived(self):
            super().allHeadersReceived()
            self.arm(settings.HTTP_BODY_TIMEOUT_S, "body")

        def allContentReceived(self):
            self.disarm()
            super().allContentReceived()

        def connectionLost(self, reason):
            self.disarm()
            super().connectionLost(reason)

        def arm(self, seconds, what):
            self.disarm()
            self.deadline = self.callLater(seconds, lambda: self.too_slow(what, seconds))

        def disarm(self):
            if self.deadline is not None:
                if self.deadline.active():
                    self.deadline.cancel()
                self.deadline = None

        def too_slow(self, what, seconds):
            self.deadline = None
            if self.transport is None or self._handlingRequest:
                return
            text = f"The request's {what} did not arrive within {seconds:g} s."
            self.transport.write(_plain(408, "Request Timeout", text, getattr(self, "_path", b"") or b""))
            self.transport.loseConnection()

    class BoundedHTTPFactory(HTTPFactory):
        bounded = True

        def protocol(self):
            return http._GenericHTTPChannelProtocol(BoundedChannel())

        def buildProtocol(self, addr):
            protocol = super().buildProtocol(addr)
            if protocol is not None:
                protocol.requestFactory = BoundedRequest
            return protocol

    class ClosingWebSocketFactory(WebSocketFactory):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            # A message over the limit: a close frame with 1009 and the reason, not a dropped connection (1006).
            self.setProtocolOptions(failByDrop=False)

    daphne.server.HTTPFactory = BoundedHTTPFactory
    daphne.server.WebSocketFactory = ClosingWebSocketFactory


def main(argv=None):
    """Daphne with DAPHNE_FLAGS, on the app: `python -m config.serving -b HOST -p PORT [more daphne options]`."""
    from daphne.cli import CommandLineInterface

    CommandLineInterface().run([*(sys.argv[1:] if argv is None else argv), *DAPHNE_FLAGS, APPLICATION])


if __name__ == "__main__":
    main()
