"""Save the tiny random Qwen2 and its tokenizer that `grpo_loop.py` builds (TRL's bundled
qwen2_5 chat template, so TRL parses tool calls) as a local model directory, the kind a
`MODEL=/path` setting or `from_pretrained` reads. Run in the trainer's venv (torch,
transformers, tokenizers, TRL):

    python save_tiny_model.py OUT_DIR

A few hundred short chats rendered through the template train the tokenizer; the model is
untrained (~176 k parameters), enough for a trainer to run its steps, not to play well."""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from grpo_loop import build_tokenizer, chat_template, tiny_model


def chats(n: int) -> list[str]:
    """`n` rendered chats with a tool call each, for the tokenizer's vocabulary."""
    from jinja2 import Environment

    template = Environment().from_string(chat_template())
    rng = random.Random(0)
    tool = {"type": "function", "function": {"name": "guess", "parameters": {"type": "object"}}}
    out = []
    for _ in range(n):
        number = rng.randint(1, 100)
        call = {"type": "function", "function": {"name": "guess", "arguments": {"number": number}}}
        messages = [
            {"role": "user", "content": f"Play the episode.\n\nGuess a number {rng.random()}"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "name": "guess", "content": f"{number} is too low."},
            {"role": "assistant", "content": "Done."},
        ]
        out.append(template.render(messages=messages, tools=[tool], add_generation_prompt=False))
    return out


def main() -> None:
    out = Path(sys.argv[1])
    tok = build_tokenizer(chats(300))
    model = tiny_model(tok)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    print(out)


if __name__ == "__main__":
    main()
