"""A small, faithful stand-in for the Hugging Face Hub HTTP API, for tests and benchmarks.

The real Hub cannot be reached from these machines, so tests drive the REAL ``huggingface_hub``
client (2.4.0) against this server through ``HF_ENDPOINT``. Routes and shapes follow
../shared/MACHINES.md ("The Hugging Face Hub without the Hub"), read from the client's source.

    from tests.hubstub import HubStub

    with HubStub.start(tmp_path) as hub:      # uvicorn on a free 127.0.0.1 port, in a thread
        hub.url                               # use as HF_ENDPOINT
        hub.files("alice/echo-env")           # {path: bytes} at main
        hub.fail("POST", r"/commit/", 503, times=2)   # simulate failures on demand
        hub.requests                          # every request: method, path, status, bytes

Tokens: ``WRITE_TOKEN`` (user ``alice``, member of org ``envkit-org``) and ``READ_TOKEN``.
"""

from tests.hubstub.server import READ_TOKEN, WRITE_TOKEN, HubStub, Recorded

__all__ = ["READ_TOKEN", "WRITE_TOKEN", "HubStub", "Recorded"]
