"""Words for the pages: a session's status and reason as a sentence, durations, money, plain validation messages.

The session page says the same things in session.js (it updates live); these serve the list and the report.
"""

import re

from reasoning.money import usd  # noqa: F401  (the pages write money one way)

# termination_reason -> the sentence after the status (the engine's and services' reasons).
REASONS = {
    "solved": "Solved",
    "unchanged": "Solved",
    "budget": "Stopped: the budget is spent",
    "monthly_cap": "Stopped: the tenant's monthly cap is reached",
    "token_cap": "Stopped: the session's token cap is reached",
    "no_thoughts": "Failed: no step could be proposed and scored",
    "no_live_line": "Failed: every line of reasoning is pruned",
    "error": "Failed: an error stopped the run",
    "paused": "Paused",
    "cancelled": "Cancelled",
    "server_stopped": "Interrupted by a server restart",
    "server_restarted": "Interrupted by a server restart",
    "run_lost": "Interrupted: its run was lost",
}
BY_STATUS = {
    "queued": "Queued: waiting for a worker",
    "running": "Running",
    "paused": "Paused",
    "solved": "Solved",
    "failed": "Failed",
    "exhausted": "Stopped: the budget is spent",
    "cancelled": "Cancelled",
    "interrupted": "Interrupted: resumable",
}

# Pydantic's common messages, in the words an advisor would use ("Input should be less than or equal to 8").
PLAIN = [
    (r"^Input should be less than or equal to (.+)$", r"at most \1"),
    (r"^Input should be greater than or equal to (.+)$", r"at least \1"),
    (r"^Input should be less than (.+)$", r"less than \1"),
    (r"^Input should be greater than (.+)$", r"more than \1"),
    (r"^Input should be a valid integer.*$", "a whole number"),
    (r"^Input should be a valid number.*$", "a number"),
    (r"^Input should be a finite number$", "a number"),
    (r"^String should have at most (\d+) characters?$", r"at most \1 characters"),
    (r"^String should have at least (\d+) characters?$", r"at least \1 characters"),
    (r"^String should match pattern .*$", "not in the expected form"),
    (r"^Extra inputs are not permitted$", "not a known setting"),
    (r"^Field required$", "required"),
]


def plain_message(message):
    """A pydantic message as a short phrase: "Input should be greater than 0" -> "more than 0"."""
    message = message.removeprefix("Value error, ")
    for pattern, words in PLAIN:
        if re.match(pattern, message):
            return re.sub(pattern, words, message)
    return message


def status_sentence(session, cancelled_by=""):
    """What the status means, in words: "Stopped: the budget is spent", "Cancelled by user:advisor"."""
    if session.status == "cancelled":
        return f"Cancelled by {cancelled_by}" if cancelled_by else "Cancelled"
    if session.status in ("running", "queued", "interrupted"):
        return BY_STATUS[session.status]
    return REASONS.get(session.termination_reason) or BY_STATUS.get(session.status, session.status)


def duration_text(seconds):
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def answer_path(session):
    """The nodes from the root to the final node, root first ([] when there is no final node)."""
    nodes = {n.id: n for n in session.nodes.all()}
    path, node = [], nodes.get(session.final_node_id)
    while node is not None and len(path) <= len(nodes):
        path.append(node)
        node = nodes.get(node.parent_id)
    return path[::-1]
