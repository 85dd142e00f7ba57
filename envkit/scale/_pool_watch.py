"""The background watcher of a detached pool: ``python -m envkit.scale._pool_watch NAME``.

Started by ``envkit run --docker --replicas N --detach`` (:func:`envkit.scale.pool.start_watcher`);
it starts the pool's containers that exited (``docker kill`` disables Docker's restart
policy) and ends once the pool's balancer is gone.
"""

from __future__ import annotations

import sys
import time

from envkit.scale.pool import WatchEvent, watch_pool


def main(argv: list[str]) -> int:
    """Watch pool ``argv[0]``; one line per action on stdout (the watcher's log)."""
    if len(argv) != 1:
        print("usage: python -m envkit.scale._pool_watch POOL", file=sys.stderr)
        return 2
    name = argv[0]

    def log(event: WatchEvent) -> None:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        print(f"{stamp} {event.kind} {event.container} {event.text}".rstrip(), flush=True)

    print(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} watching pool {name}", flush=True)
    try:
        watch_pool(name, on_event=log)
    except KeyboardInterrupt:
        return 0
    except Exception as exc:  # noqa: BLE001 - the log is all a detached process has
        print(f"watcher stopped: {type(exc).__name__}: {exc}", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
