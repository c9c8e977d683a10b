"""Start the real app once per test session, on a free port, in this process."""

import socket

import app


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start() -> tuple[object, str]:
    """The app as `python app.py` starts it: its levels read and checked first, then served (no warm-up runs)."""
    app.load_levels()
    demo = app.build_app()
    port = free_port()
    app.launch(demo, port=port, block=False)
    return demo, f"http://127.0.0.1:{port}/"
