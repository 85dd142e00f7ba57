"""The stand-in's FastAPI app: the Hub routes ``huggingface_hub`` 2.4.0 calls for Spaces (and,
for ``envkit label push``, the create/preupload/commit/info/tree routes of datasets).

Shapes are those of ../shared/MACHINES.md. Every 404 for a missing Space carries
``X-Error-Code: RepoNotFound`` (the client relies on it). Revisions may arrive encoded
(``refs%2Fpr%2F1``); the ASGI path is already decoded, so routes use ``{rev:path}``.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from tests.hubstub.state import HubState, Space, _now_iso

NAMED_COLOURS = {"red", "yellow", "green", "blue", "indigo", "purple", "pink", "gray"}
SDKS = {"gradio", "streamlit", "docker", "static"}
ERROR_STAGES = {"BUILD_ERROR", "RUNTIME_ERROR", "CONFIG_ERROR", "NO_APP_FILE"}


def _err(status: int, message: str, code: str | None = None, **extra: Any) -> JSONResponse:
    headers = {"X-Error-Message": message}
    if code:
        headers["X-Error-Code"] = code
    return JSONResponse({"error": message, **extra}, status_code=status, headers=headers)


def subdomain(repo_id: str) -> str:
    """``Alice/my_env.v2`` -> ``alice-my-env-v2`` (MACHINES.md: lower-case, ``_``/``.`` -> ``-``)."""
    return re.sub(r"[_.]", "-", repo_id.replace("/", "-").lower())


def build_app(
    state: HubState, tokens: dict[str, dict[str, Any]], config: dict[str, Any]
) -> FastAPI:
    """The app. ``tokens``: token -> {"name", "role", "orgs"}; ``config``: mutable knobs
    (``paid_namespaces``: None = every namespace may create Docker Spaces, else the set that may)."""
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)

    def user_of(request: Request) -> dict[str, Any] | None:
        auth = request.headers.get("authorization", "")
        token = auth[7:] if auth.lower().startswith("bearer ") else ""
        return tokens.get(token)

    def unauthorized() -> JSONResponse:
        return _err(401, "Invalid credentials in Authorization header")

    def can_write(user: dict[str, Any], namespace: str) -> bool:
        return user["role"] == "write" and namespace in {user["name"], *user.get("orgs", [])}

    def get_space(ns: str, name: str, request: Request | None = None) -> Space | None:
        if request is not None and request.url.path.startswith("/api/datasets/"):
            return state.datasets.get(f"{ns}/{name}")
        return state.spaces.get(f"{ns}/{name}")

    def not_found(repo_id: str) -> JSONResponse:
        return _err(404, f"Repository {repo_id} not found", "RepoNotFound")

    def base(request: Request) -> str:
        return str(request.base_url).rstrip("/")

    def write_guard(
        request: Request, ns: str, name: str
    ) -> tuple[Space | None, Any, JSONResponse | None]:
        user = user_of(request)
        if user is None:
            return None, None, unauthorized()
        space = get_space(ns, name, request)
        if space is None or (space.private and ns not in {user["name"], *user.get("orgs", [])}):
            return None, user, not_found(f"{ns}/{name}")
        if not can_write(user, ns):
            return None, user, _err(403, f"You don't have the rights to write to {ns}/{name}")
        return space, user, None

    def read_guard(
        request: Request, ns: str, name: str
    ) -> tuple[Space | None, JSONResponse | None]:
        user = user_of(request)
        space = get_space(ns, name, request)
        if space is None:
            return None, not_found(f"{ns}/{name}")
        if space.private and (user is None or ns not in {user["name"], *user.get("orgs", [])}):
            return None, not_found(f"{ns}/{name}")
        return space, None

    def runtime_json(space: Space) -> dict[str, Any]:
        return {
            "stage": space.stage,
            "hardware": {
                "current": space.hardware if space.stage == "RUNNING" else None,
                "requested": space.hardware,
            },
            "storage": None,
            "gcTimeout": 172800,
            "devMode": False,
        }

    # -- identity --------------------------------------------------------------------------
    @app.get("/api/whoami-v2")
    def whoami(request: Request):
        user = user_of(request)
        if user is None:
            return unauthorized()
        return {
            "type": "user",
            "name": user["name"],
            "fullname": user["name"].title(),
            "orgs": [{"name": o, "type": "org"} for o in user.get("orgs", [])],
            "auth": {
                "type": "access_token",
                "accessToken": {"displayName": "test", "role": user["role"]},
            },
        }

    # -- repos -----------------------------------------------------------------------------
    @app.post("/api/repos/create")
    async def create_repo(request: Request):
        user = user_of(request)
        if user is None:
            return unauthorized()
        body = await request.json()
        ns = body.get("organization") or user["name"]
        repo_id = f"{ns}/{body['name']}"
        url = f"{base(request)}/spaces/{repo_id}"
        if body.get("type") == "dataset":  # no sdk, no hardware; visibility as for Spaces
            url = f"{base(request)}/datasets/{repo_id}"
            if not can_write(user, ns):
                return _err(403, f"You don't have the rights to create a dataset under {ns}")
            if repo_id in state.datasets:
                return JSONResponse(
                    {"error": "You already created this dataset repo", "url": url}, status_code=409
                )
            private = (
                body.get("visibility", "private" if body.get("private") else "public") != "public"
            )
            with state.lock:
                state.create(
                    repo_id,
                    sdk="",
                    private=private,
                    hardware=None,
                    author=user["name"],
                    kind="dataset",
                )
            return {"url": url, "name": repo_id, "id": repo_id}
        if body.get("type") != "space":
            return _err(400, "the stand-in only hosts Spaces and datasets")
        if body.get("sdk") not in SDKS:
            return _err(400, f"Invalid sdk {body.get('sdk')!r}")
        if not can_write(user, ns):
            return _err(403, f"You don't have the rights to create a Space under {ns}")
        if repo_id in state.spaces:
            return JSONResponse(
                {"error": "You already created this space repo", "url": url}, status_code=409
            )
        paid = config.get("paid_namespaces")
        if paid is not None and body["sdk"] in ("docker", "gradio", "streamlit") and ns not in paid:
            return _err(
                402,
                "Docker Spaces need a paid plan (PRO for users, Team or Enterprise for "
                "organizations) on cpu-basic hardware",
            )
        private = body.get("visibility", "private" if body.get("private") else "public") != "public"
        with state.lock:
            space = state.create(
                repo_id,
                sdk=body["sdk"],
                private=private,
                hardware=body.get("hardware"),
                author=user["name"],
            )
            for item in body.get("variables") or []:
                space.variables[item["key"]] = {"value": item["value"], "updatedAt": _now_iso()}
            for item in body.get("secrets") or []:
                space.secrets[item["key"]] = item["value"]
            state.save(space)
        return {"url": url, "name": repo_id, "id": repo_id}

    @app.post("/api/validate-yaml")
    async def validate_yaml(request: Request):
        from ruamel.yaml import YAML

        body = await request.json()
        content = body.get("content", "")
        errors: list[dict[str, str]] = []
        lines = content.splitlines()
        meta: Any = {}
        if lines and lines[0].strip() == "---":
            end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
            if end is None:
                errors.append({"message": "Unterminated YAML front matter"})
            else:
                try:
                    meta = YAML(typ="safe").load("\n".join(lines[1:end])) or {}
                except Exception as exc:  # noqa: BLE001
                    errors.append({"message": f"Invalid YAML: {exc}"})
        if isinstance(meta, dict) and body.get("repoType") == "space":
            for key in ("colorFrom", "colorTo"):
                if key in meta and meta[key] not in NAMED_COLOURS:
                    errors.append(
                        {"message": f'"{key}" must be one of [{", ".join(sorted(NAMED_COLOURS))}]'}
                    )
            if "sdk" in meta and meta["sdk"] not in SDKS:
                errors.append(
                    {"message": '"sdk" must be one of [gradio, streamlit, docker, static]'}
                )
            if len(str(meta.get("short_description", ""))) > 60:
                errors.append(
                    {"message": '"short_description" length must be less than or equal to 60'}
                )
        if errors:
            return JSONResponse({"errors": errors, "warnings": []}, status_code=400)
        return {"errors": [], "warnings": []}

    @app.put("/api/spaces/{ns}/{name}/settings")
    async def settings(ns: str, name: str, request: Request):
        space, _user, error = write_guard(request, ns, name)
        if error:
            return error
        body = await request.json()
        with state.lock:
            if "visibility" in body:
                space.private = body["visibility"] != "public"
            elif "private" in body:
                space.private = bool(body["private"])
            state.save(space)
        return {}

    @app.post("/api/spaces/{ns}/{name}/duplicate")
    async def duplicate(ns: str, name: str, request: Request):
        user = user_of(request)
        if user is None:
            return unauthorized()
        src, error = read_guard(request, ns, name)
        if error:
            return error
        body = await request.json()
        target = body["repository"]
        tns = target.split("/")[0]
        if not can_write(user, tns):
            return _err(403, f"You don't have the rights to create a Space under {tns}")
        url = f"{base(request)}/spaces/{target}"
        if target in state.spaces:
            return JSONResponse(
                {"error": "You already created this space repo", "url": url}, status_code=409
            )
        private = body.get("visibility", "private" if src.private else "public") != "public"
        with state.lock:
            dst = state.create(
                target,
                sdk=src.sdk,
                private=private,
                hardware=body.get("hardware") or "cpu-basic",
                author=user["name"],
            )
            tree = src.tree("main") or {}
            state.commit(
                dst,
                "main",
                {p: state.blob(o) for p, o in tree.items()},
                [],
                f"Duplicated from {src.id}",
                user["name"],
            )
            dst.variables = {k: dict(v) for k, v in src.variables.items()}
            for item in body.get("variables") or []:
                dst.variables[item["key"]] = {"value": item["value"], "updatedAt": _now_iso()}
            for item in body.get("secrets") or []:
                dst.secrets[item["key"]] = item["value"]
            state.save(dst)
        return {"url": url}

    # -- info, tree ------------------------------------------------------------------------
    def info_json(request: Request, space: Space, rev: str) -> dict[str, Any]:
        tree = space.tree(rev) or {}
        sub = subdomain(space.id)
        return {
            "_id": space.id,
            "id": space.id,
            "author": space.id.split("/")[0],
            "sha": space.refs.get(rev, rev),
            "private": space.private,
            "sdk": space.sdk,
            "subdomain": sub,
            "host": space.host or f"https://{sub}.hf.space",
            "createdAt": space.created_at,
            "lastModified": _now_iso(),
            "likes": 0,
            "tags": [],
            "siblings": [{"rfilename": p} for p in sorted(tree)],
            "runtime": runtime_json(space),
        }

    @app.get("/api/spaces/{ns}/{name}")
    @app.get("/api/datasets/{ns}/{name}")
    def space_info(ns: str, name: str, request: Request):
        space, error = read_guard(request, ns, name)
        return error or info_json(request, space, "main")

    @app.get("/api/spaces/{ns}/{name}/revision/{rev:path}")
    @app.get("/api/datasets/{ns}/{name}/revision/{rev:path}")
    def space_revision(ns: str, name: str, rev: str, request: Request):
        space, error = read_guard(request, ns, name)
        if error:
            return error
        if space.tree(rev) is None:
            return _err(404, f"Invalid rev id: {rev}", "RevisionNotFound")
        return info_json(request, space, rev)

    @app.get("/api/spaces/{ns}/{name}/tree/{rev:path}")
    @app.get("/api/datasets/{ns}/{name}/tree/{rev:path}")
    def tree(ns: str, name: str, rev: str, request: Request):
        space, error = read_guard(request, ns, name)
        if error:
            return error
        files = space.tree(rev)
        if files is None:
            return _err(404, f"Invalid rev id: {rev}", "RevisionNotFound")
        recursive = request.query_params.get("recursive", "").lower() in ("true", "1")
        out: list[dict[str, Any]] = []
        dirs: set[str] = set()
        for path in sorted(files):
            parts = path.split("/")
            for i in range(1, len(parts)):
                dirs.add("/".join(parts[:i]))
            if recursive or len(parts) == 1:
                out.append(
                    {
                        "type": "file",
                        "path": path,
                        "oid": files[path],
                        "size": len(state.blob(files[path])),
                    }
                )
        for d in sorted(dirs):
            if recursive or "/" not in d:
                out.append({"type": "directory", "path": d, "oid": "0" * 40})
        return out

    # -- upload ----------------------------------------------------------------------------
    @app.post("/api/spaces/{ns}/{name}/preupload/{rev:path}")
    @app.post("/api/datasets/{ns}/{name}/preupload/{rev:path}")
    async def preupload(ns: str, name: str, rev: str, request: Request):
        space, _user, error = write_guard(request, ns, name)
        if error:
            return error
        body = await request.json()
        files = (
            space.tree(rev) if request.query_params.get("create_pr") != "1" else space.tree("main")
        )
        files = files or {}
        out = []
        for f in body.get("files", []):
            item = {"path": f["path"], "uploadMode": "regular", "shouldIgnore": False}
            if f["path"] in files:
                item["oid"] = files[f["path"]]
            out.append(item)
        return {"files": out, "commitOid": space.refs.get(rev)}

    @app.post("/api/spaces/{ns}/{name}/commit/{rev:path}")
    @app.post("/api/datasets/{ns}/{name}/commit/{rev:path}")
    async def commit(ns: str, name: str, rev: str, request: Request):
        space, user, error = write_guard(request, ns, name)
        if error:
            return error
        raw = await request.body()  # the whole payload first: nothing is applied before it is read
        header: dict[str, Any] = {}
        adds: dict[str, bytes] = {}
        deletes: list[str] = []
        try:
            for line in raw.splitlines():
                if not line.strip():
                    continue
                item = json.loads(line)
                key, value = item["key"], item["value"]
                if key == "header":
                    header = value
                elif key == "file":
                    if value.get("encoding") != "base64":
                        return _err(400, "only base64 file content is supported")
                    adds[value["path"]] = base64.b64decode(value["content"])
                elif key == "deletedFile":
                    deletes.append(value["path"])
                elif key == "deletedFolder":
                    deletes.append(value["path"].rstrip("/") + "/")
                else:
                    return _err(400, f"unsupported commit operation {key!r} (LFS is not emulated)")
        except (ValueError, KeyError) as exc:
            return _err(400, f"malformed ndjson commit payload: {exc}")
        if not header.get("summary"):
            return _err(400, "commit summary is required")
        create_pr = request.query_params.get("create_pr") == "1"
        with state.lock:
            pr_url = None
            if create_pr:
                num = _open_pr(space, header["summary"], user["name"])
                rev = f"refs/pr/{num}"
                pr_url = f"{base(request)}/spaces/{space.id}/discussions/{num}"
            if rev not in space.refs:
                return _err(404, f"Invalid rev id: {rev}", "RevisionNotFound")
            parent = header.get("parentCommit")
            if parent and not space.refs[rev].startswith(parent):
                return _err(412, "A commit has happened since. Please refresh and try again.")
            existing = space.tree(rev) or {}
            missing = [p for p in deletes if not p.endswith("/") and p not in existing]
            if missing:
                return _err(
                    404, f"A file with this name doesn't exist: {missing[0]}", "EntryNotFound"
                )
            oid = state.commit(space, rev, adds, deletes, header["summary"], user["name"])
        out = {
            "success": True,
            "commitOid": oid,
            "commitUrl": f"{base(request)}/{space.kind}s/{space.id}/commit/{oid}",
        }
        if create_pr:
            out["pullRequestUrl"] = pr_url
        return out

    def _open_pr(space: Space, title: str, author: str) -> int:
        num = len(space.discussions) + 1
        space.discussions.append(
            {
                "num": num,
                "title": title,
                "author": author,
                "isPullRequest": True,
                "status": "open",
                "createdAt": _now_iso(),
                "base": "refs/heads/main",
            }
        )
        space.refs[f"refs/pr/{num}"] = space.refs["main"]
        state.save(space)
        return num

    @app.post("/api/spaces/{ns}/{name}/discussions")
    async def create_discussion(ns: str, name: str, request: Request):
        user = user_of(request)
        if user is None:
            return unauthorized()
        space, error = read_guard(request, ns, name)
        if error:
            return error
        body = await request.json()
        with state.lock:
            if body.get("pullRequest"):
                num = _open_pr(space, body["title"], user["name"])
            else:
                num = len(space.discussions) + 1
                space.discussions.append(
                    {
                        "num": num,
                        "title": body["title"],
                        "author": user["name"],
                        "isPullRequest": False,
                        "status": "open",
                        "createdAt": _now_iso(),
                        "base": None,
                    }
                )
                state.save(space)
        return {"num": num, "url": {"web": f"{base(request)}/spaces/{space.id}/discussions/{num}"}}

    @app.get("/api/spaces/{ns}/{name}/discussions/{num}")
    def get_discussion(ns: str, name: str, num: int, request: Request):
        space, error = read_guard(request, ns, name)
        if error:
            return error
        if not 1 <= num <= len(space.discussions):
            return _err(404, f"Discussion {num} not found")
        d = space.discussions[num - 1]
        return {
            "num": num,
            "title": d["title"],
            "status": d["status"],
            "isPullRequest": d["isPullRequest"],
            "createdAt": d["createdAt"],
            "author": {"name": d["author"]},
            "repo": {"name": space.id, "type": "space"},
            "events": [],
            "filesWithConflicts": [],
            "changes": {"base": d["base"]} if d["isPullRequest"] else None,
            "diff": "",
        }

    # -- Space settings --------------------------------------------------------------------
    @app.get("/api/spaces/{ns}/{name}/variables")
    def get_variables(ns: str, name: str, request: Request):
        space, _user, error = write_guard(request, ns, name)
        return error or space.variables

    @app.post("/api/spaces/{ns}/{name}/variables")
    async def add_variable(ns: str, name: str, request: Request):
        space, _user, error = write_guard(request, ns, name)
        if error:
            return error
        body = await request.json()
        with state.lock:
            space.variables[body["key"]] = {"value": body["value"], "updatedAt": _now_iso()}
            state.save(space)
        return space.variables

    @app.delete("/api/spaces/{ns}/{name}/variables")
    async def delete_variable(ns: str, name: str, request: Request):
        space, _user, error = write_guard(request, ns, name)
        if error:
            return error
        body = await request.json()
        with state.lock:
            space.variables.pop(body["key"], None)
            state.save(space)
        return space.variables

    @app.post("/api/spaces/{ns}/{name}/secrets")
    async def add_secret(ns: str, name: str, request: Request):
        space, _user, error = write_guard(request, ns, name)
        if error:
            return error
        body = await request.json()
        with state.lock:
            space.secrets[body["key"]] = body["value"]
            state.save(space)
        return Response(status_code=200)

    @app.get("/api/spaces/{ns}/{name}/secrets")
    def get_secrets(ns: str, name: str, request: Request):
        space, _user, error = write_guard(request, ns, name)
        return error or {k: {"key": k, "updatedAt": _now_iso()} for k in space.secrets}

    @app.delete("/api/spaces/{ns}/{name}/secrets")
    async def delete_secret(ns: str, name: str, request: Request):
        space, _user, error = write_guard(request, ns, name)
        if error:
            return error
        body = await request.json()
        with state.lock:
            space.secrets.pop(body["key"], None)
            state.save(space)
        return Response(status_code=200)

    @app.post("/api/spaces/{ns}/{name}/hardware")
    async def hardware(ns: str, name: str, request: Request):
        space, _user, error = write_guard(request, ns, name)
        if error:
            return error
        body = await request.json()
        with state.lock:
            space.hardware = body["flavor"]
            space.stage = "BUILDING"
            state.save(space)
        return runtime_json(space)

    @app.get("/api/spaces/{ns}/{name}/runtime")
    def runtime(ns: str, name: str, request: Request):
        space, error = read_guard(request, ns, name)
        if error:
            return error
        with state.lock:
            if space.runtime_script:
                space.stage = space.runtime_script.pop(0)
                out = runtime_json(space)
            else:
                out = runtime_json(space)
                if space.stage == "BUILDING":  # default: building once, then running
                    space.stage = "RUNNING"
        return out

    return app
