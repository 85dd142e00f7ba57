"""The labeling page: a small server-rendered FastAPI app. No front-end build:
jinja2 templates with autoescape on (every model output is escaped, so a trajectory containing
``<script>`` renders as text) and a few lines of inline JavaScript for keyboard shortcuts.

Routes:
    ``GET /``: redirect (303) to the labeler's next pair, or ``/done``.
    ``GET /pair/{a}-{b}``: the pair, sides as recorded by the store's salt.
    ``POST /label``: store a label, then redirect to ``/`` (POST-redirect-GET: reload and the
    back button never re-submit).
    ``POST /undo``: delete the labeler's latest label, then show that pair again.
    ``GET /trajectories``: read-only viewer (``seed``, ``sort``, ``episode`` query parameters).
    ``GET /healthz``: ``{"ok": true}``.

The labeler is the ``labeler`` query/form parameter, default the server's ``--labeler``, so
several people can label through one server (``/?labeler=bob``) or each run their own.
"""

# No `from __future__ import annotations`: FastAPI resolves the route functions' annotations
# at runtime, and `Request` is imported inside create_app (fastapi is an optional extra).

import json
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote

from envkit.errors import UsageError
from envkit.label.folder import EvalFolder, action_text
from envkit.label.pairs import Pair, select_pairs
from envkit.label.store import LabelStore, check_labeler

if TYPE_CHECKING:
    import jinja2
    from fastapi import FastAPI

LABEL_TEXT = {
    "left": "left better",
    "right": "right better",
    "tie": "tie",
    "cant_tell": "can't tell",
    "skip": "skipped",
}
SORTS = (
    ("return_desc", "return, high first"),
    ("return_asc", "return, low first"),
    ("episode", "episode"),
)


def _require_web() -> None:
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise UsageError(
            f"The labeling page needs fastapi and uvicorn ({exc.name} is not installed).",
            hint="Install the extra: pip install 'rl-envkit[label]'. `envkit label "
            "export`, `stats` and `push` work without it.",
        ) from None


def _as_json(value: object) -> str:
    """A string as it is; anything else as indented JSON (keys sorted, ``str`` of the rest)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)


def _templates() -> "jinja2.Environment":
    """The jinja2 environment of ``templates/``: autoescape on, undefined names are errors."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(Path(__file__).parent / "templates")),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    env.globals.update(
        action_text=action_text, as_json=_as_json, task_of=lambda t: _as_json(t.reset_observation)
    )
    return env


def _progress(
    store: LabelStore, selection: list[Pair], name: str
) -> tuple[int, dict[str, int], dict[str, Any]]:
    """``(done, totals, mine)``: how many of ``selection`` ``name`` labeled (skips not
    counted), labels per labeler (skips not counted), and ``name``'s labels by pair key."""
    labels = store.labels()
    mine = {lab.pair_key: lab for lab in labels if lab.labeler == name}
    done = sum(1 for p in selection if p.key in mine and mine[p.key].label != "skip")
    totals: dict[str, int] = {}
    for lab in labels:
        if lab.label != "skip":
            totals[lab.labeler] = totals.get(lab.labeler, 0) + 1
    return done, dict(sorted(totals.items())), mine


def _next_pair(selection: list[Pair], mine: dict[str, Any]) -> Pair | None:
    """The first pair not labeled yet, else the first skipped one, else ``None``."""
    return next((p for p in selection if p.key not in mine), None) or next(
        (p for p in selection if mine[p.key].label == "skip"), None
    )


def _form_fields(body: bytes) -> dict[str, str]:
    """An urlencoded form body as ``{name: last value}`` (blank values kept)."""
    text = body.decode("utf-8", "replace")
    return {k: v[-1] for k, v in parse_qs(text, keep_blank_values=True).items()}


def _viewer_rows(folder: EvalFolder, seed: int | None, sort: str) -> list[Any]:
    """The trajectories the viewer lists: of ``seed`` (all when ``None``), sorted by ``sort``
    (one of :data:`SORTS`; ties by id)."""
    shown = [t for t in folder.trajectories if seed is None or t.seed == seed]
    if sort == "return_desc":
        shown.sort(key=lambda t: (-t.ret, t.id))
    elif sort == "return_asc":
        shown.sort(key=lambda t: (t.ret, t.id))
    return shown


def create_app(
    folder: EvalFolder, store: LabelStore, *, labeler: str = "anonymous", pairs: str = "all"
) -> "FastAPI":
    """The FastAPI app serving ``folder``'s pairs.

    A route factory: the routes are closures over the folder, the store and the pair
    selection, so the function stays as long as its list of routes.

    Args:
        folder: the eval folder (read once; restart the server after a new eval).
        store: its label store.
        labeler: default labeler name.
        pairs: pair selection (``all``, ``adjacent``, ``disagree``).

    Raises:
        UsageError: fastapi/uvicorn missing (names the ``label`` extra), bad labeler or mode.
    """
    _require_web()
    from fastapi import FastAPI, Request
    from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse

    default_labeler = check_labeler(labeler)
    selection: list[Pair] = select_pairs(folder, pairs)
    by_key = {p.key: p for p in selection}
    by_id = folder.by_id()
    env = _templates()
    app = FastAPI(title="envkit label", openapi_url=None, docs_url=None, redoc_url=None)

    def who(request: Request, form: dict[str, str] | None = None) -> str:
        raw = (form or {}).get("labeler") or request.query_params.get("labeler") or ""
        try:
            return check_labeler(raw) if raw.strip() else default_labeler
        except UsageError:
            return default_labeler

    def render(name: str, status: int = 200, **ctx: object) -> HTMLResponse:
        html = env.get_template(name).render(title=folder.title, **ctx)
        return HTMLResponse(html, status_code=status, headers={"Cache-Control": "no-store"})

    def see_other(url: str) -> RedirectResponse:
        return RedirectResponse(url, status_code=303)

    @app.get("/healthz")
    def healthz() -> dict[str, Any]:
        return {"ok": True, "pairs": len(selection)}

    @app.get("/")
    def index(request: Request):
        name = who(request)
        _done, _totals, mine = _progress(store, selection, name)
        q = f"?labeler={quote(name)}"
        nxt = _next_pair(selection, mine)
        if nxt is None:
            return see_other(f"/done{q}")
        return see_other(f"/pair/{nxt.key}{q}")

    @app.get("/done")
    def done_page(request: Request):
        name = who(request)
        done, _totals, _mine = _progress(store, selection, name)
        flash = request.query_params.get("flash", "")
        return render(
            "done.html",
            labeler=name,
            done=done,
            total=len(selection),
            folder=str(folder.path),
            flash=flash[:200],
        )

    @app.get("/pair/{key}")
    def pair_page(key: str, request: Request):
        name = who(request)
        pair = by_key.get(key)
        if pair is None:
            return render(
                "done.html",
                status=404,
                labeler=name,
                done=0,
                total=len(selection),
                folder=str(folder.path),
                flash=f"No pair {key} in this folder's selection.",
            )
        done, totals, mine = _progress(store, selection, name)
        left_id, right_id = pair.sides(store.salt)
        current = mine.get(key)
        return render(
            "pair.html",
            labeler=name,
            pair=pair,
            left=by_id[left_id],
            right=by_id[right_id],
            task=_as_json(by_id[pair.a].reset_observation),
            done=done,
            total=len(selection),
            totals=totals,
            current=current,
            current_text=LABEL_TEXT.get(current.label, "") if current else "",
            flash=request.query_params.get("flash", "")[:200],
        )

    @app.post("/label")
    async def label(request: Request):
        form = _form_fields(await request.body())
        name = who(request, form)
        pair = by_key.get(form.get("pair", ""))
        choice = form.get("label", "")
        if pair is None or choice not in LABEL_TEXT:
            return JSONResponse(
                {"error": "expected pair=<a>-<b> and label=left|right|tie|cant_tell|skip"},
                status_code=400,
            )
        left_id, _right = pair.sides(store.salt)
        store.add(
            labeler=name,
            a=pair.a,
            b=pair.b,
            left_id=left_id,
            label=choice,
            note=form.get("note", ""),
            a_fingerprint=by_id[pair.a].fingerprint,
            b_fingerprint=by_id[pair.b].fingerprint,
        )
        return see_other(f"/?labeler={quote(name)}")

    @app.post("/undo")
    async def undo(request: Request):
        name = who(request, _form_fields(await request.body()))
        removed = store.undo(name)
        q = f"?labeler={quote(name)}"
        if removed is None:
            return see_other(f"/{q}")
        flash = quote(f"Undone: pair {removed.pair_key} ({LABEL_TEXT[removed.label]}).")
        if removed.pair_key in by_key:
            return see_other(f"/pair/{removed.pair_key}{q}&flash={flash}")
        return see_other(f"/{q}")

    @app.get("/trajectories")
    def trajectories(request: Request):
        qp = request.query_params
        seed = int(qp["seed"]) if qp.get("seed", "").lstrip("-").isdigit() else None
        sort = qp.get("sort") if qp.get("sort") in dict(SORTS) else "return_desc"
        ep = qp.get("episode", "")
        return render(
            "trajectories.html",
            labeler=who(request),
            shown=_viewer_rows(folder, seed, sort),
            count=len(folder.trajectories),
            seeds=sorted(folder.groups()),
            seed=seed,
            sort=sort,
            sorts=SORTS,
            selected=by_id.get(int(ep)) if ep.isdigit() else None,
        )

    return app


def check_port(host: str, port: int) -> None:
    """Raise :class:`UsageError` when ``host:port`` cannot be bound (in use, bad address)."""
    try:
        info = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(info[0], socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(info[4])
    except OSError as exc:
        raise UsageError.cannot_listen(host, port, exc) from None


def serve(
    folder: EvalFolder,
    store: LabelStore,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    labeler: str = "anonymous",
    pairs: str = "all",
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve the labeling page until Ctrl-C (blocks).

    Args:
        host: bind address; ``127.0.0.1`` by default (the page has no authentication).
        port: TCP port, 1-65535.
        on_ready: called with the page URL once the server accepts connections.

    Raises:
        UsageError: fastapi/uvicorn missing, port unavailable.
    """
    _require_web()
    import uvicorn

    app = create_app(folder, store, labeler=labeler, pairs=pairs)
    check_port(host, port)
    server = uvicorn.Server(
        uvicorn.Config(
            app, host=host, port=port, log_level="warning", access_log=False, lifespan="off"
        )
    )
    if on_ready is not None:
        shown = f"[{host}]" if ":" in host else host
        url = f"http://{shown}:{port}/"

        def notify() -> None:
            while not server.started and not server.should_exit:
                time.sleep(0.05)
            if server.started:
                on_ready(url)

        threading.Thread(target=notify, daemon=True, name="envkit-label-ready").start()
    server.run()
