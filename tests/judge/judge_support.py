"""Judge test cases (a support chat and summaries of it) and a scripted judge model server."""

from __future__ import annotations

import io
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memory.context import Context

SOURCE = [
    "Dana: Hi there!",
    "Dana: My order #88213 arrived with a cracked water tank on May 3.",
    "agent: Sorry to hear that, Dana. I will send a replacement tank by Friday.",
    "Dana: Great, thanks. Also my address changed to 12 Elm Street in Portland.",
    "agent: Noted. The replacement ships to 12 Elm Street. Anything else?",
    "Dana: No, that's all. Bye!",
]
PROMPT = "Keep names, order numbers and dates; drop greetings. Under 60 words."
FAITHFUL = (
    "Dana's order #88213 arrived with a cracked water tank on May 3. The agent will send a "
    "replacement tank by Friday to her new address, 12 Elm Street in Portland."
)
INVENTED = (
    "Dana's order #88213 arrived with a cracked water tank on May 3. The agent will send a "
    "replacement tank by Friday to her new address, 4200 Elm Street in Portland."
)
INVENTED_NAME = (
    "Dana's order #88213 arrived with a cracked water tank on May 3. Bob will send a "
    "replacement tank by Friday to her new address, 12 Elm Street in Portland."
)
OFF_TOPIC = (
    "The weather in Spain was sunny and the football match ended in a draw. Everyone enjoyed "
    "the paella at the beach."
)


SECOND_SOURCE = [
    "Lee: The quarterly report for Zephyr Corp is due on June 9.",
    "Kim: I will add the revenue figure of 310 thousand to section 2.",
]
SECOND_SUMMARY = "Kim adds Zephyr Corp's revenue of 310 thousand to the report due June 9."

GEVAL_MARKERS = {
    "fact_coverage": "Fact coverage:",
    "faithfulness": "Faithfulness:",
    "conciseness": "Conciseness:",
    "instructions": "Instructions:",
}
"""The first words of each criterion's evaluation steps (memory/prompts/judge_*.md)."""


@dataclass
class JudgeScript:
    """What the scripted judge model answers, per deepeval schema, and what it was asked."""

    scores: dict[str, float] = field(
        default_factory=lambda: {
            "fact_coverage": 8,
            "faithfulness": 9,
            "conciseness": 6,
            "instructions": 7,
        }
    )
    """GEval scores (0-10) per criterion."""
    broken: set[str] = field(default_factory=set)
    """Criteria (or schema names) whose replies are cut-off, invalid JSON."""
    reject_json_schema: int = 0
    """How many requests with a json_schema response_format to refuse with 400."""
    questions: dict[str, list[str]] = field(
        default_factory=lambda: {
            "88213": ["Which order number arrived broken?", "Where does Dana live now?"],
            "Zephyr": ["Which company is the report for?", "When is the report due?"],
        }
    )
    """Assessment questions SummarizationMetric gets, by a word of the source they are for."""
    requests: list[dict[str, Any]] = field(default_factory=list)

    def answer(self, body: dict[str, Any]) -> tuple[int, str]:
        """Return (status, reply text) for one chat completion request."""
        self.requests.append(body)
        format_type = (body.get("response_format") or {}).get("type")
        if format_type == "json_schema" and self.reject_json_schema > 0:
            self.reject_json_schema -= 1
            return 400, "response_format json_schema is not supported by this model"
        prompt = body["messages"][-1]["content"]
        schema = schema_name(body)
        criterion = self._criterion(schema, prompt)
        if criterion in self.broken or schema in self.broken:
            return 200, '{"reason": "The summary keeps the order numb'
        return 200, json.dumps(self._payload(schema, criterion, prompt))

    def _criterion(self, schema: str, prompt: str) -> str:
        if schema != "ReasonScore":
            return "summarization"
        return next(name for name, marker in GEVAL_MARKERS.items() if marker in prompt)

    def _payload(self, schema: str, criterion: str, prompt: str) -> dict[str, Any]:
        if schema == "ReasonScore":
            reason = f"scripted {criterion} reason"
            return {"reason": reason, "score": self.scores[criterion]}
        if schema == "Questions":
            return {"questions": self._questions(prompt)}
        if schema == "Answers":
            asked = [q for qs in self.questions.values() for q in qs if q in prompt]
            return {"answers": ["yes"] * len(asked)}
        if schema == "Truths":
            return {"truths": ["The order arrived broken.", "Dana moved."]}
        if schema == "Claims":
            return {"claims": ["The order arrived broken.", "Dana moved."]}
        if schema == "Verdicts":
            return {"verdicts": [{"verdict": "yes"}, {"verdict": "yes"}]}
        if schema == "SummarizationScoreReason":
            return {"reason": "scripted summarization reason"}
        raise AssertionError(f"unexpected schema {schema!r}")

    def _questions(self, prompt: str) -> list[str]:
        for marker, questions in self.questions.items():
            if marker in prompt:
                return questions
        raise AssertionError("questions asked about an unknown text")

    def asked(self, schema: str) -> list[str]:
        """Return the prompts of the requests for `schema`, in order."""
        return [b["messages"][-1]["content"] for b in self.requests if schema_name(b) == schema]


def schema_name(body: dict[str, Any]) -> str:
    """Return the deepeval schema a request asks for: from response_format, else the prompt."""
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        return str(response_format["json_schema"]["name"])
    titles = re.findall(r'"title": "(\w+)"', body["messages"][-1]["content"])
    if not titles:
        raise AssertionError("the request names no schema")
    return titles[-1]


@contextmanager
def judge_server(script: JudgeScript) -> Iterator[str]:
    """Serve `script` as an OpenAI-compatible model on 127.0.0.1; yields the base URL."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            """Stay quiet."""

        def do_POST(self) -> None:
            size = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(size) or b"{}")
            status, text = script.answer(body)
            if status != 200:
                payload: dict[str, Any] = {"error": {"message": text, "type": "invalid_request"}}
            else:
                message = {"role": "assistant", "content": text}
                payload = {
                    "id": "chatcmpl-judge",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model", ""),
                    "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                }
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def run_cli(*args: str, context: Context) -> tuple[int, str, str]:
    """Run membank in this process on `context`; (code, stdout, stderr), argparse's exit too."""
    from flows.cli import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(args), context=lambda data: context)
        except SystemExit as exc:  # argparse refuses bad arguments by exiting
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()
