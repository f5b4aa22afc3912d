"""The imperfect offline model behind a loopback OpenAI-compatible server, answering the Tree of Thoughts reference
code's own Game of 24 prompts (propose, value, last-step value, and the chain-of-thought prompt it uses to write the
answer) with the same puzzle player (reasoning/llm/offline/puzzle.py), noise and seed as our contracts get.

Only the prompt format differs: a proposal list, a value judgement on the numbers left ("sure" / "likely" /
"impossible" on its last line), a judgement of an answer, or the answer line that ends a line of steps. `n` samples
in one request are drawn each on its own, as ours are. The server counts the requests it answers, in all and by the
prompt's kind (GET /count).
"""

import hashlib
import json
import re
import threading
from fractions import Fraction
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from random import Random

from reasoning.llm import game24
from reasoning.llm.offline.puzzle import Player

INPUT = re.compile(r"^Input: ([\d/. ]+)$", re.MULTILINE)
# The last block of the last-step value prompt (its few-shot examples come first, each with an Input and an Answer of
# its own): one line each, so the match can only be the block the prompt ends with.
LAST_STEP_ANSWER = re.compile(r"Input: ([\d ]+)\nAnswer: ([^\n]*)\nJudge:\s*$")


def player_for(prompt, seed, noise, sample):
    key = f"{seed}:{prompt}" if not sample else f"{seed}:{sample}:{prompt}"
    return Player(Random(int.from_bytes(hashlib.sha256(key.encode()).digest(), "big")), noise)


def kind_of(prompt):
    """Which of the reference's prompts this is: propose, value, last_step (an answer's value) or answer (its cot)."""
    if prompt.rstrip().endswith("Possible next steps:"):
        return "propose"
    if prompt.startswith("Evaluate if given numbers can reach 24"):
        return "value"
    if LAST_STEP_ANSWER.search(prompt):
        return "last_step"
    return "answer" if "Steps:" in prompt else "other"


def reply(prompt, seed, noise, sample=0):
    """The model's text for one of the reference's prompts."""
    player = player_for(prompt, seed, noise, sample)
    if prompt.rstrip().endswith("Possible next steps:"):  # propose: every next step it sees, one per line
        items = [(Fraction(t), t) for t in INPUT.findall(prompt)[-1].split()]
        return "\n".join(player.next_steps(items, 8))
    if prompt.startswith("Evaluate if given numbers can reach 24"):  # value: the numbers on the last line
        left = prompt.rstrip().splitlines()[-1]
        items = [(Fraction(t), t) for t in left.split()]
        return judged_board(player, items)
    match = LAST_STEP_ANSWER.search(prompt)
    if match:  # the last step's value: is this answer right?
        cards = [int(n) for n in match[1].split()]
        return player.judge(cards, [], "Answer: " + match[2].strip()).verdict
    if "Steps:" in prompt:  # the chain-of-thought prompt after a line reached 24: write its answer line
        cards = [int(n) for n in INPUT.findall(prompt)[-1].split()]
        steps = [line for line in prompt.rsplit("Steps:", 1)[1].splitlines() if line.strip()]
        return player.answers(game24.replay(cards, steps), 1)[0]
    return ""


def judged_board(player, items):
    """A few lines of trying, then the verdict on the last line, as the reference's value prompt shows: the same
    judgement of the numbers left as our state-only judge gets (Player.judge_board)."""
    shown = " ".join(str(v) for v, _ in items)
    verdict = player.judge_board(items).verdict
    expr = game24.solve(items)
    tried = f"{expr} = 24" if expr and verdict == "sure" else f"{shown}: I cannot obtain 24 now"
    return f"{tried}\n{verdict}"


class ReferenceModel:
    """A loopback server with the model's noise and seed; use as a context manager."""

    def __init__(self, noise, seed=7):
        self.noise, self.seed, self.requests, self.kinds = noise, seed, 0, {}
        self.lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                self._send({"requests": model.requests, "by_kind": dict(model.kinds)})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                prompt = next((m["content"] for m in reversed(body.get("messages", [])) if m["role"] == "user"), "")
                texts = [reply(prompt, model.seed, model.noise, s) for s in range(int(body.get("n") or 1))]
                with model.lock:
                    model.requests += 1
                    model.kinds[kind_of(prompt)] = model.kinds.get(kind_of(prompt), 0) + 1
                choices = [
                    {"index": i, "message": {"role": "assistant", "content": t}, "finish_reason": "stop"}
                    for i, t in enumerate(texts)
                ]
                tokens = {"prompt_tokens": len(prompt) // 4, "completion_tokens": sum(len(t) // 4 for t in texts)}
                self._send(
                    {
                        "id": "ref",
                        "object": "chat.completion",
                        "model": body.get("model", ""),
                        "choices": choices,
                        "usage": tokens | {"total_tokens": sum(tokens.values())},
                    }
                )

            def _send(self, payload):
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self):
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
