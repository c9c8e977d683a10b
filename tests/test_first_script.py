"""The script put first in the page's <head> (ui/server/first_script.py): in every HTML page, before anything else
there, with the page's length told again; other answers and other methods untouched."""

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import HTMLResponse, JSONResponse, StreamingResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from ui.server.first_script import FirstScript

PAGE = "<!doctype html><html><head><script type=module src=gradio.js></script></head><body>x</body></html>"


async def page(request):
    return HTMLResponse(PAGE)


async def data(request):
    return JSONResponse({"head": "<head>"})


async def streamed(request):
    async def parts():
        yield b"<html><he"
        yield b"ad><title>t</title></head></html>"

    return StreamingResponse(parts(), media_type="text/html")


def client(script: str = "window.first = 1;") -> TestClient:
    routes = [Route("/", page, methods=["GET", "POST"]), Route("/data", data), Route("/streamed", streamed)]
    return TestClient(Starlette(routes=routes, middleware=[Middleware(FirstScript, script=script)]))


def test_the_script_comes_first_in_the_head_of_a_page() -> None:
    answer = client().get("/")
    assert answer.status_code == 200
    assert answer.text.startswith("<!doctype html><html><head><script>window.first = 1;</script><script type=module")
    assert int(answer.headers["content-length"]) == len(answer.content)
    assert answer.text.count("window.first") == 1


def test_a_page_sent_in_parts_is_joined_before_the_script_goes_in() -> None:
    answer = client().get("/streamed")
    assert answer.text == "<html><head><script>window.first = 1;</script><title>t</title></head></html>"


def test_other_answers_and_methods_are_left_as_they_are() -> None:
    c = client()
    assert c.get("/data").json() == {"head": "<head>"}
    assert c.post("/").text == PAGE
