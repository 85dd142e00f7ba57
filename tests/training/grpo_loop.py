"""TRL 1.16's `GRPOTrainer(environment_factory=<a generated TRL adapter>)` for a few optimisation
steps on CPU, against a running environment server; prints one JSON line of what happened.

A standalone script (run by tests/training/test_grpo_loop.py in the trainer's venv: torch, TRL,
transformers, tokenizers, datasets and the environment package): envkit's own test venv has no
torch. Nothing comes from the Hub: the model is a randomly initialised tiny Qwen2 and the
tokenizer a byte-level BPE trained here on transcripts rendered through TRL's bundled
`qwen2_5` chat template (so TRL recognises it and installs its tool-call parser). A short
supervised warm start on synthetic tool-call transcripts, made from the adapter's own prompt and
tool schema, makes sampled completions contain parseable tool calls; a random model never emits
one, and GRPO then has nothing to learn from.

The adapter reaches the server through a WebSocket relay in this process (`ENV_URL` points at
it) that counts the `step` frames the server answered and keeps, per session, the reward the
server sent for each episode's last frame: the environment's own score, read off the wire.

Usage: python grpo_loop.py --server URL --package guess_env --adapter GuessEnvTRLEnv
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import random
import sys
import threading
import time
from pathlib import Path
from typing import Any

PROMPT = "Play the game."


class Relay:
    """A WebSocket relay to the server's `/ws`, recording what the server answered.

    `sessions[i]` is one WebSocket session's episodes, each `{"steps": int, "reward": float}`:
    `reward` is the reward of the episode's last answered frame (the reset's, 0.0, before any
    step), as the server sent it.
    """

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.replace("http://", "ws://").rstrip("/") + "/ws"
        self.sessions: list[list[dict[str, Any]]] = []
        self.episodes: list[dict[str, Any]] = []  # every session's, in the order they started
        self.steps = 0
        self.url = ""
        self._ready = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()
        if not self._ready.wait(30):
            raise RuntimeError("the WebSocket relay did not start within 30 s")

    def _run(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        import websockets

        async with websockets.serve(self._session, "127.0.0.1", 0, max_size=None) as server:
            port = server.sockets[0].getsockname()[1]
            self.url = f"http://127.0.0.1:{port}"
            self._ready.set()
            await asyncio.Future()

    async def _session(self, client: Any) -> None:
        import websockets

        episodes: list[dict[str, Any]] = []
        self.sessions.append(episodes)
        async with websockets.connect(self.upstream, max_size=None) as server:
            pending: list[str] = []

            async def up() -> None:
                async for message in client:
                    pending.append(json.loads(message).get("type", ""))
                    await server.send(message)
                await server.close()

            async def down() -> None:
                async for message in server:
                    kind = pending.pop(0) if pending else ""
                    data = json.loads(message).get("data") or {}
                    if kind == "reset":
                        episodes.append({"steps": 0, "reward": float(data.get("reward") or 0.0)})
                        self.episodes.append(episodes[-1])
                    elif kind == "step" and episodes:
                        self.steps += 1
                        episodes[-1]["steps"] += 1
                        episodes[-1]["reward"] = float(data.get("reward") or 0.0)
                    await client.send(message)
                await client.close()

            await asyncio.gather(up(), down(), return_exceptions=True)


def chat_template() -> str:
    """TRL's bundled qwen2_5 template, byte for byte (TRL matches templates by equality)."""
    import trl

    return (Path(trl.__file__).parent / "chat_templates" / "qwen2_5.jinja").read_text()


def transcripts(env: Any, schema: dict, rng: random.Random, n: int) -> list[list]:
    """`n` episodes played on the adapter `env` with random guesses, as chat transcripts: the
    dataset prompt plus the reset text, the tool calls with the adapter's own answers, a short
    closing message. Every episode plays until it ends: only an episode's last guess is paid
    (its closeness, or 1.0 for a hit), so a model that stops early earns 0.0 on every rollout
    and GRPO, seeing rewards that never differ, has nothing to learn from."""
    name = schema["function"]["name"]
    arg = next(iter(schema["function"]["parameters"]["properties"]))
    out = []
    for _ in range(n):
        messages = [{"role": "user", "content": PROMPT + env.reset(seed=rng.randint(0, 10**6))}]
        numbers = rng.sample(range(1, 101), 20)  # no repeats: a repeat pays 0.0
        while not env._done:
            number = numbers.pop()
            call = {"type": "function", "function": {"name": name, "arguments": {arg: number}}}
            messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
            reply = getattr(env, name)(**{arg: number})
            messages.append({"role": "tool", "name": name, "content": reply})
        messages.append({"role": "assistant", "content": "Done."})
        out.append(messages)
    return out


def build_tokenizer(texts: list[str]) -> Any:
    """A byte-level BPE (`tokenizers`) wrapped as a transformers fast tokenizer with the
    qwen2_5 chat template and Qwen's special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"]
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=1024,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    bpe.train_from_iterator(texts, trainer)
    tok = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=specials[1:],
    )
    tok.chat_template = chat_template()
    return tok


def warm_start(
    model: Any, tok: Any, texts: list[tuple[str, str]], max_steps: int, max_s: float
) -> dict:
    """Next-token training on the rendered transcripts, `(prompt, whole)` pairs, with the loss
    on what follows the prompt only (AdamW, batch 4), until `max_steps` or `max_s` seconds.
    Returns steps, seconds and the last loss."""
    import torch

    enc = []
    for prompt, whole in texts:
        ids = tok(whole, return_tensors="pt").input_ids[0]
        labels = ids.clone()
        labels[: len(tok(prompt).input_ids)] = -100  # the prompt is given, not generated
        enc.append((ids, labels))
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    start, step, loss = time.monotonic(), 0, float("nan")
    rng = random.Random(0)
    pad = torch.nn.utils.rnn.pad_sequence
    while step < max_steps and time.monotonic() - start < max_s:
        batch = rng.sample(enc, 4)
        ids = pad([i for i, _ in batch], batch_first=True, padding_value=tok.pad_token_id)
        labels = pad([lab for _, lab in batch], batch_first=True, padding_value=-100)
        mask = pad([torch.ones_like(i) for i, _ in batch], batch_first=True, padding_value=0)
        out = model(input_ids=ids, attention_mask=mask, labels=labels)
        out.loss.backward()
        opt.step()
        opt.zero_grad()
        loss, step = out.loss.item(), step + 1
    return {"steps": step, "seconds": time.monotonic() - start, "loss": loss}


def cached_warm_start(
    model: Any, tok: Any, texts: list[tuple[str, str]], max_steps: int, max_s: float, cache: str
) -> dict:
    """:func:`warm_start`, its weights kept in ``cache`` (a directory; ``""``: none) under a
    key made of everything they depend on: this script's text (the model, the tokenizer's
    training, the loop), the transcripts, the tokenizer's vocabulary, the step count and the
    torch and transformers versions. A warm start cut short by ``max_s`` is not kept. The
    returned dict says ``"cached": true`` when the weights were loaded."""
    import torch
    import transformers

    if not cache:
        return warm_start(model, tok, texts, max_steps, max_s)
    key = hashlib.sha256(
        json.dumps(
            [
                Path(__file__).read_text(),
                texts,
                sorted(tok.get_vocab().items()),
                max_steps,
                torch.__version__,
                transformers.__version__,
            ]
        ).encode()
    ).hexdigest()[:32]
    path = Path(cache) / f"{key}.pt"
    if path.is_file():
        saved = torch.load(path, weights_only=True)
        model.load_state_dict(saved["state"])
        return {**json.loads(saved["warm"]), "cached": True}
    warm = warm_start(model, tok, texts, max_steps, max_s)
    if warm["steps"] == max_steps:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        torch.save({"state": model.state_dict(), "warm": json.dumps(warm)}, tmp)
        os.replace(tmp, path)  # whole or absent: a run stopped mid-write leaves no cache
    return {**warm, "cached": False}


def tiny_model(tok: Any) -> Any:
    """A randomly initialised Qwen2 of ~176 k parameters sized to the tokenizer."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    config = Qwen2Config(
        vocab_size=len(tok),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        tie_word_embeddings=True,
        max_position_embeddings=2048,
        bos_token_id=None,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    model = Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.pad_token_id = tok.pad_token_id
    return model


def record_rewards(trainer: Any, relay: Relay, tok: Any, tool_schema: dict) -> list[dict]:
    """Wrap the trainer's reward computation: after each generation batch, append TRL's
    per-rollout rewards, the server's score of every episode started since the last batch,
    and the prompts as TRL built them (message text and rendered chat). Returns the list."""
    batches: list[dict[str, Any]] = []
    mark = [len(relay.episodes)]  # episodes before this point are the warm-up's
    calculate = trainer._calculate_rewards

    def recorded(inputs, prompts, completions, completion_ids_list):
        """TRL's per-rollout rewards next to the server's score of each session's episode."""
        rewards = calculate(inputs, prompts, completions, completion_ids_list)
        episodes, mark[0] = relay.episodes[mark[0] :], len(relay.episodes)
        batches.append(
            {
                "trl": rewards[:, -1].tolist(),  # the last column: the adapter's get_reward
                "server": [e["reward"] for e in episodes],
                "server_steps": [e["steps"] for e in episodes],
                "prompts": [p[-1]["content"] for p in prompts],
                "rendered": [
                    tok.apply_chat_template(
                        p, tools=[tool_schema], tokenize=False, add_generation_prompt=True
                    )
                    for p in prompts
                ],
                "completions": [str(c)[:400] for c in completions],
            }
        )
        return rewards

    trainer._calculate_rewards = recorded
    return batches


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--package", required=True)
    ap.add_argument("--adapter", required=True)
    ap.add_argument("--output-dir", required=True)
    ap.add_argument("--transcripts", type=int, default=120)
    ap.add_argument("--warm-steps", type=int, default=250)
    # no time cap by default: a warm start cut short by a busy machine would train a
    # different model, and the test's outcome must not depend on the load (pytest's timeout
    # bounds the run)
    ap.add_argument("--warm-max-s", type=float, default=float("inf"))
    # where warm-started weights are kept across runs (cached_warm_start); "": not kept
    ap.add_argument("--warm-cache", default="")
    args = ap.parse_args()

    relay = Relay(args.server)
    os.environ["ENV_URL"] = relay.url  # the adapter module reads it at import
    import importlib

    import torch
    from datasets import Dataset
    from transformers.utils import get_json_schema
    from trl import GRPOConfig, GRPOTrainer

    torch.manual_seed(0)
    adapter = getattr(importlib.import_module(f"{args.package}.trl_env"), args.adapter)
    tool_schema = get_json_schema(adapter.guess)
    rng = random.Random(0)
    with adapter() as env:  # texts the model will read, from the adapter and server themselves
        reset_texts = [env.reset(seed=s) for s in range(2)]
        train = transcripts(env, tool_schema, rng, args.transcripts)
    bootstrap = [m[0]["content"] + json.dumps(tool_schema) for m in train]
    tok = build_tokenizer(bootstrap + [json.dumps(m) for m in train])
    rendered = [tok.apply_chat_template(m, tools=[tool_schema], tokenize=False) for m in train]
    tok = build_tokenizer(rendered)
    rendered = [
        (
            tok.apply_chat_template(
                m[:1], tools=[tool_schema], tokenize=False, add_generation_prompt=True
            ),
            tok.apply_chat_template(m, tools=[tool_schema], tokenize=False),
        )
        for m in train
    ]

    model = tiny_model(tok)
    warm = cached_warm_start(
        model, tok, rendered, args.warm_steps, args.warm_max_s, args.warm_cache
    )

    dataset = Dataset.from_list(
        [{"prompt": [{"role": "user", "content": PROMPT}], "seed": s} for s in range(8)]
    )
    grpo = GRPOConfig(
        output_dir=args.output_dir,
        use_cpu=True,
        bf16=False,
        per_device_train_batch_size=4,
        num_generations=4,
        max_completion_length=512,
        gradient_checkpointing=False,
        max_steps=2,
        learning_rate=1e-3,
        # Below 1 the warm start's most likely move (another guess while guesses are left)
        # dominates, so more rollouts reach the episode's last, paid, guess.
        temperature=0.7,
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        seed=0,
    )
    trainer = GRPOTrainer(
        model=model,
        processing_class=tok,
        train_dataset=dataset,
        environment_factory=adapter,
        args=grpo,
    )

    batches = record_rewards(trainer, relay, tok, tool_schema)
    before = {k: v.detach().clone() for k, v in trainer.model.named_parameters()}
    start = time.monotonic()
    trainer.train()
    grpo_s = time.monotonic() - start
    changed = [
        k
        for k, v in trainer.model.named_parameters()
        if not torch.equal(before[k], v.detach().to(before[k].device))
    ]
    print(
        json.dumps(
            {
                "tools": [t.__name__ for t in trainer.tools],
                "reward_funcs": list(trainer.reward_func_names),
                "public_methods": sorted(
                    n for n in vars(adapter) if not n.startswith("_") and callable(vars(adapter)[n])
                ),
                "reset_texts": reset_texts,
                "dataset_prompt": PROMPT,
                "server_steps": relay.steps,
                "sessions": relay.sessions,
                "batches": batches,
                "changed_params": changed,
                "n_params": len(before),
                "warm": warm,
                "grpo_s": grpo_s,
                "log_history": trainer.state.log_history,
            }
        )
    )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
