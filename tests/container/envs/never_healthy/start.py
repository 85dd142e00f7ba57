"""Never serve: the process stays up but nothing ever answers `GET /health` (a server stuck
in `create_app()`, say). The container lane must give up within `--timeout`."""

import time

while True:
    time.sleep(3600)
