"""The request body limit (ui/server/body_limit.py): a body over the limit is refused with 413 and a clear message, by
its length before it is read or, sent in chunks, as soon as it passes the limit; a body within it reaches the app
whole."""

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from ui.server.body_limit import BodyLimit

LIMIT = 1000


async def echo(request: Request) -> JSONResponse:
    return JSONResponse({"bytes": len(await request.body())})


def client() -> TestClient:
    app = Starlette(routes=[Route("/echo", echo, methods=["POST"])], middleware=[Middleware(BodyLimit, limit=LIMIT)])
    return TestClient(app)


def test_a_body_within_the_limit_reaches_the_app_whole() -> None:
    answer = client().post("/echo", content=b"x" * LIMIT)
    assert answer.status_code == 200 and answer.json() == {"bytes": LIMIT}


def test_a_body_over_the_limit_is_refused_by_its_length() -> None:
    answer = client().post("/echo", content=b"x" * (LIMIT + 1))
    assert answer.status_code == 413
    assert f"over {LIMIT} bytes" in answer.text


def test_a_body_sent_in_chunks_is_refused_once_it_passes_the_limit(caplog) -> None:
    def chunks():
        for _ in range(50):
            yield b"x" * 100

    answer = client().post("/echo", content=chunks())  # no Content-Length: chunked
    assert answer.status_code == 413
    assert f"over {LIMIT} bytes" in answer.text
    assert len([r for r in caplog.records if r.name == "dragon.refused"]) == 1  # logged once, on one line


def test_a_false_length_is_refused() -> None:
    answer = client().post("/echo", content=b"x", headers={"content-length": "abc"})
    assert answer.status_code == 413
