"""EK4xx runtime and protocol rules (registered here, checked by envkit.validation.runtime).

Source of every rule: issue #3 ("EK4xx runtime and protocol"); wire facts from
docs/protocol.md (openenv-core 0.3.0).
"""

from envkit.findings import Severity, register

SERVER_START_FAILED = register(
    "EK401", "server-start-failed", Severity.ERROR,
    summary="The environment server exits or does not answer GET /health in time.",
    what="envkit starts `uvicorn <app>` from openenv.yaml on a free 127.0.0.1 port and waits "
         "for `GET /health` for `validation.startup_timeout_s` seconds (or `--timeout`).",
    why="A server that does not start is a Space stuck in RUNTIME_ERROR and a trainer that "
        "never gets its first observation.",
    example="`ModuleNotFoundError: No module named 'models'` in server/app.py; a dataset "
            "download at import time that takes longer than the timeout.",
    fix="Read the log tail in the message, fix the import or start-up error, or raise "
        "`validation.startup_timeout_s`.",
)

HEALTH_BROKEN = register(
    "EK402", "health-endpoint-broken", Severity.ERROR,
    summary="GET /health does not answer 200 with a JSON object.",
    what="`GET /health` must answer HTTP 200 with `{\"status\": \"healthy\"}` "
         "(openenv-core's answer).",
    why="Docker health checks, `envkit run` and Space orchestration poll /health; a wrong "
        "answer makes a working server look dead.",
    example="A custom middleware answering 503 or an HTML page on /health.",
    fix="Serve the app made by openenv-core's `create_app`, or answer /health with "
        "`{\"status\": \"healthy\"}`.",
)

SCHEMA_INVALID = register(
    "EK403", "schema-endpoint-invalid", Severity.ERROR,
    summary="GET /schema does not give valid JSON Schemas for action and observation.",
    what="`GET /schema` must answer `{\"action\": <JSON Schema>, \"observation\": <JSON Schema>, "
         "\"state\": ...}`; each schema is checked against its JSON Schema meta-schema.",
    why="Clients, web UIs and envkit's own fuzzer generate actions from the action schema; "
        "an invalid schema means nobody can build a valid action without reading your code.",
    example="`{\"action\": {\"type\": \"strin\"}}` (a typo in a hand-written schema).",
    fix="Let openenv-core generate /schema from your pydantic Action and Observation classes.",
)

METADATA_BROKEN = register(
    "EK404", "metadata-endpoint-broken", Severity.ERROR,
    summary="GET /metadata does not answer 200 with a JSON object naming the environment.",
    what="`GET /metadata` must answer HTTP 200 with a JSON object holding at least `name`.",
    why="Hubs and catalogues read /metadata to describe the environment.",
    example="`get_metadata()` overridden and raising, giving HTTP 500.",
    fix="Return an `EnvironmentMetadata` from `get_metadata()` (or do not override it).",
)

ROUND_TRIP_FAILED = register(
    "EK405", "session-round-trip-failed", Severity.ERROR,
    summary="A WebSocket reset/step/state/close round trip does not follow the protocol.",
    what="envkit opens `/ws`, sends `reset`, `state`, `step`, `state`, `close` and checks each "
         "answer is the frame the protocol defines (`observation` with `observation`, `reward`, "
         "`done`; `state` with `episode_id`, `step_count`).",
    why="`/ws` is the only stateful path: every trainer (TRL, envkit eval) plays episodes "
        "through it.",
    example="The session closes after `reset`; `state` answers a non-object; frames too large "
            "(over 16 MiB) for a client.",
    fix="Serve the environment with openenv-core's `create_app` and return Observation "
        "objects from `reset` and `step`.",
)

OBSERVATION_SCHEMA_MISMATCH = register(
    "EK406", "observation-schema-mismatch", Severity.ERROR,
    summary="An observation sent on the wire does not conform to the /schema observation.",
    what="Every observation envkit receives is validated against the observation JSON Schema "
         "from /schema (`reward`, `done`, `metadata` travel outside it).",
    why="Clients parse observations with your schema; a field of the wrong type breaks "
        "them at training time, not at development time.",
    example="`Observation.model_construct(count=\"3\")` sends a string for an integer field.",
    fix="Build observations with the constructor (validated), never `model_construct`, and "
        "keep the fields' types honest.",
)

STEP_BEFORE_RESET = register(
    "EK407", "step-before-reset-crash", Severity.ERROR,
    summary="`step` before `reset` raises inside the environment.",
    what="envkit sends a valid action on a fresh WebSocket session, before any `reset`, and "
         "`POST /step` (which never resets: a fresh instance per request).",
    why="Clients reconnect and step, HTTP /step never resets, and a raise there shows up as "
        "EXECUTION_ERROR frames or HTTP 500s in training logs.",
    example="`step` reads `self._target`, which only `reset` sets: AttributeError.",
    fix="Initialise all episode state in `__init__`, and answer a step before reset with an "
        "observation (done=true, a hint in a field) instead of raising.",
)

INVALID_ACTION_ACCEPTED = register(
    "EK408", "invalid-action-not-rejected", Severity.ERROR,
    summary="Invalid actions (wrong types, missing or extra fields) are not rejected cleanly.",
    what="envkit sends actions that break the action schema: a required field missing, a "
         "field of the wrong type, an unknown extra field (when the schema forbids extras). "
         "Over /ws each must give a VALIDATION_ERROR frame and leave the session usable; over "
         "`POST /step` each must give HTTP 422.",
    why="An agent's malformed tool call must come back as a validation error it can learn "
        "from, not as a silently coerced action, a crash, or a dead session.",
    example="A `field_validator(mode=\"before\")` that turns anything into a string accepts "
            "`{\"message\": [1, 2]}`.",
    fix="Keep the Action model strict (`extra=\"forbid\"`, no coercing validators).",
)

MALFORMED_FRAME_CRASH = register(
    "EK409", "malformed-frame-crash", Severity.ERROR,
    summary="A malformed WebSocket frame (not JSON, unknown type) closes or crashes the session.",
    what="envkit sends a frame that is not JSON, one with an unknown `type` and one without "
         "`type`; each must give an `error` frame (INVALID_JSON / UNKNOWN_TYPE) and leave the "
         "session and the server running.",
    why="One bad frame from a client must not kill an episode or the server other "
        "sessions share.",
    example="A custom WebSocket handler that calls `json.loads` without a try and closes "
            "the socket.",
    fix="Use openenv-core's `/ws` handler, or answer bad frames with an error frame and "
        "keep reading.",
)

ACTION_RAISES = register(
    "EK410", "action-raises", Severity.ERROR,
    summary="A valid action (generated from the action schema) raises inside the environment.",
    what="envkit plays actions generated from the /schema action JSON Schema; an "
         "EXECUTION_ERROR frame means `step` raised on an action the schema allows. envkit "
         "reports the action, shrunk field by field to a minimal one that still raises.",
    why="The schema is a promise to agents: every action it allows must give an observation. "
        "A policy exploring will find the crash within hours of training.",
    example="`step` does `int(action.message)` on a free-text field: `ValueError` for \"a\".",
    fix="Handle every action the schema allows (return a low reward and feedback), or "
        "tighten the schema (`max_length`, `pattern`, `ge`/`le`, `Literal`).",
)

RESET_NONDETERMINISTIC = register(
    "EK411", "reset-not-deterministic", Severity.ERROR,
    summary="`reset(seed=s)` twice gives different observations.",
    what="For each seed in `validation.seeds`, envkit resets twice on fresh sessions and "
         "deep-compares the observations, reporting the first differing field.",
    why="Reproducible evaluation and debugging need a seed to fix the episode "
        "(Gymnasium's determinism check).",
    example="`reset` draws its task with the global `random` module instead of "
            "`random.Random(seed)`.",
    fix="Derive every random choice in `reset` from `random.Random(seed)` (or a seeded "
        "numpy Generator) stored on the instance.",
)

REWARD_NONDETERMINISTIC = register(
    "EK412", "rewards-not-deterministic", Severity.ERROR,
    summary="The same seed and the same actions give different rewards.",
    what="envkit replays one action sequence twice after `reset(seed=s)` and compares the "
         "step rewards one by one.",
    why="A reward that changes for the same trajectory is noise in the learning signal and "
        "makes runs impossible to reproduce.",
    example="A rubric that samples an LLM judge at temperature 1, or uses the global RNG.",
    fix="Seed every random draw from the episode's seed; make judges deterministic "
        "(temperature 0, cached).",
)

SEED_IGNORED = register(
    "EK413", "seed-ignored", Severity.WARNING,
    summary="Different seeds give identical episodes: `reset()` most likely ignores `seed`.",
    what="envkit resets with every seed in `validation.seeds` and plays the same actions; "
         "when every reset observation and every reward is identical, the seed has no effect.",
    why="openenv-core silently drops `reset` arguments the method does not declare "
        "(huggingface/OpenEnv#1102): `reset(seed=3)` then trains on one episode forever.",
    example="`def reset(self):` (the `openenv init` template) — no `seed` parameter.",
    fix="Declare `reset(self, seed=None, episode_id=None, **kwargs)` and draw the episode "
        "from `random.Random(seed)`. If the environment has no randomness at all, ignore "
        "EK413.",
)

EPISODE_NEVER_ENDS = register(
    "EK414", "episode-never-ends", Severity.ERROR,
    summary="Episodes do not end (done=true) within `validation.max_steps`.",
    what="envkit plays fuzzed and degenerate policies and counts the steps until `done` is "
         "true; none may exceed `validation.max_steps` (50 when it is not declared).",
    why="Trainers batch rollouts by episode; an episode that never ends blocks the batch "
        "until an outer timeout and wastes the GPU time around it.",
    example="The `openenv init` template returns `done=False` on every step.",
    fix="End the episode (done=True) on success and after a maximum number of steps; "
        "declare it as `validation.max_steps`.",
)

STEP_COUNT_WRONG = register(
    "EK415", "step-count-wrong", Severity.ERROR,
    summary="`state.step_count` is not 0 after `reset` or does not count steps.",
    what="envkit reads `state` after `reset` (must be 0) and after steps (must equal the "
         "number of steps taken in the episode).",
    why="Trainers and dashboards read `step_count` for episode lengths and step budgets.",
    example="`step` forgets `self._state.step_count += 1`.",
    fix="Reset `step_count` to 0 in `reset` and add 1 in every `step`.",
)

EPISODE_ID_IGNORED = register(
    "EK416", "episode-id-ignored", Severity.ERROR,
    summary="`reset(episode_id=...)` is not reflected in `state.episode_id`.",
    what="envkit resets with `episode_id=\"envkit-<random>\"` and reads `state.episode_id`.",
    why="Trainers pass episode ids to join rollouts with logs; an ignored id breaks "
        "that join silently.",
    example="`reset()` always sets `State(episode_id=str(uuid4()))`.",
    fix="Use `State(episode_id=episode_id or str(uuid4()), step_count=0)` in `reset`.",
)

STEP_AFTER_DONE = register(
    "EK417", "step-after-done-accepted", Severity.WARNING,
    summary="A step after `done=true` continues the episode as if nothing happened.",
    what="After an episode ends, envkit sends one more step; the answer should keep "
         "`done=true` (or be an error frame), not `done=false`.",
    why="Clients that miss `done` keep collecting reward from a finished episode, which "
        "corrupts returns.",
    example="`step` never checks whether the episode is over.",
    fix="After the episode ends, answer steps with `done=True` and reward 0 (or raise a "
        "clear error) until `reset`.",
)

HEALTH_WHILE_RESET_FAILS = register(
    "EK418", "health-while-reset-fails", Severity.ERROR,
    summary="GET /health answers 200 while `reset` fails.",
    what="When `reset` answers an error frame, envkit checks /health again: it still says "
         "healthy.",
    why="Orchestrators trust /health alone; a server that is healthy but cannot reset "
        "takes traffic and fails every episode.",
    example="`reset` needs a data file that is missing from the Docker image.",
    fix="Fix the error `reset` raised (shown in the message); load what `reset` needs at "
        "start-up so a broken server fails its start instead.",
)

SESSIONS_INTERFERE = register(
    "EK419", "sessions-interfere", Severity.ERROR,
    summary="Two concurrent sessions change each other's episodes.",
    what="When the server accepts two sessions, envkit plays two seeded episodes "
         "interleaved step by step and compares them with the same episodes played one "
         "after the other.",
    why="TRL plays `max_concurrent_envs` episodes at once; shared state turns every batch "
        "into a mix of episodes with wrong rewards.",
    example="The task is stored in a module-level variable that each `reset` overwrites.",
    fix="Keep all episode state on the environment instance, or set "
        "`SUPPORTS_CONCURRENT_SESSIONS = False` and `max_concurrent_envs=1`.",
)

CAPACITY_NOT_ENFORCED = register(
    "EK420", "capacity-not-enforced", Severity.WARNING,
    summary="The server accepts sessions without limit or refuses them without "
            "CAPACITY_REACHED.",
    what="envkit opens sessions until the server answers a CAPACITY_REACHED error frame "
         "(at most 64); the refusal must be that frame.",
    why="Leaked sessions (huggingface/OpenEnv#1000) then exhaust memory instead of being "
        "refused with a clear error a client can act on. A capacity above 64 cannot be told "
        "apart from no limit.",
    example="A custom server without a session limit.",
    fix="Pass `max_concurrent_envs=N` to `create_app` (N >= the trainer's batch size).",
)

STEP_LATENCY = register(
    "EK421", "step-latency-over-budget", Severity.WARNING,
    summary="The 95th percentile of step latency exceeds `validation.step_timeout_s`.",
    what="envkit times every `step` it sends (request to answer) and compares the p95 with "
         "`validation.step_timeout_s` (5 s by default).",
    why="A slow step throttles every rollout; openenv-core has no server-side step timeout.",
    example="`step` calls a remote judge synchronously.",
    fix="Make `step` faster (cache, batch, precompute) or raise `validation.step_timeout_s` "
        "when the latency is expected.",
)

ENV_UNRESPONSIVE = register(
    "EK422", "env-unresponsive", Severity.ERROR,
    summary="The environment did not answer a frame within the timeout.",
    what="Every request envkit sends has a deadline (twice `validation.step_timeout_s`, at "
         "least 2 s, at most `--timeout`); a request without an answer stops the runtime "
         "stage.",
    why="A hanging `step` hangs the trainer's rollout worker and holds its session slot "
        "forever.",
    example="`step` waits on a subprocess that never exits.",
    fix="Find what `step`/`reset` waits on; put a timeout on every blocking call inside it.",
)

SERVER_DIED = register(
    "EK423", "server-died", Severity.ERROR,
    summary="The server process exited while envkit was playing it.",
    what="envkit watches the server it started; when it exits during the runtime stage, "
         "the log tail is reported.",
    why="A crash in one session takes down every other session of the Space.",
    example="`step` calls `sys.exit()` or segfaults in a native extension.",
    fix="Read the log tail in the message and fix the crash.",
)
