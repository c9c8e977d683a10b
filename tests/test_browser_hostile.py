"""Hostile links in real Chromium: a link's level cut inside an emoji (20 UTF-16 units: 19 letters + 🐉) opens the
game with a notice, never a blank page; a lone surrogate sent straight to the API is read, never a 500."""

import json

import httpx
import pytest

from tests.test_browser import open_page  # noqa: F401  (fixtures)
from ui.strings import t

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_level_cut_inside_an_emoji_opens_the_game_with_a_notice(open_page, lang: str) -> None:  # noqa: F811
    page = open_page(f"level=abcdefghijklmnopqrs🐉x&lang={lang}")
    assert page.locator("#top .level-title").inner_text().strip()
    notice = page.locator("#top .notice").inner_text()
    assert t("unknown_level", lang, id="abcdefghijklmnopqrs🐉") in notice, notice  # whole characters only
    assert not page.locator(".toast-wrap .toast-body.error, [data-testid='toast-body']").count()


def test_a_lone_surrogate_sent_to_the_api_is_read_as_a_replacement_character(app_url) -> None:
    gates = json.dumps([0.5] * 8)
    for endpoint, data in (("analyze", '["ab\\ud83d", "en"]'), ("play", f'["2-1\\ud83d", {gates}, "en"]')):
        post = httpx.post(f"{app_url}gradio_api/call/{endpoint}", content=f'{{"data": {data}}}',
                          headers={"Content-Type": "application/json"})
        assert post.status_code == 200
        lines = httpx.get(f"{app_url}gradio_api/call/{endpoint}/{post.json()['event_id']}", timeout=30).text
        event = lines.split("\n")[0].removeprefix("event: ")
        payload = json.loads(lines.split("\n")[1].removeprefix("data: "))
        if endpoint == "analyze":
            assert event == "complete" and payload[0]["tokens"], payload
        else:
            assert event == "error" and "unknown level '2-1\ufffd'" in payload["error"], payload
