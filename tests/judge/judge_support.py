"""A support conversation and summaries of it: faithful, with an invented number, off-topic."""

from __future__ import annotations

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
