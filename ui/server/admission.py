"""Who may queue an expensive call (a race, a training, the real model): a few per client, per address and in all,
counted in Gradio's own queue when the call arrives; one more is refused at once, saying why."""

import ipaddress
import os
from collections.abc import Iterable

PER_CLIENT = 2  # one client's (one session's) expensive calls queued or running at once
PER_ADDRESS = 8  # one address's: the computers of a school behind one address share these
IN_ALL = 32  # everyone's: past this the server would be minutes behind, so a call is refused, not queued
# the endpoints whose call races, trains or runs the real model (each call costs the server 0.1 s to minutes)
EXPENSIVE = frozenset({"race", "long_scroll", "heads_experiment", "grow", "prune", "heal", "stability", "router", "crystal_ball",
                       "tower"})


def trusted_proxies(environ=os.environ) -> tuple[str, list]:
    """TRUSTED_PROXIES: "*" (any peer is the proxy), or comma-separated IPs and CIDRs; ("", []) when unset."""
    text = environ.get("TRUSTED_PROXIES", "").strip()
    if text == "*":
        return "*", []
    networks = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        try:
            networks.append(ipaddress.ip_network(part, strict=False))
        except ValueError:
            raise ValueError(f"TRUSTED_PROXIES: {part[:60]!r} is no IP address or CIDR") from None
    return "", networks


def is_proxy(host: str, networks: list) -> bool:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return any(address in network for network in networks)


def address_of(request, environ=os.environ) -> str:
    """The caller's address, from a Starlette request (or anything with .headers and .client): the socket's peer,
    unless the peer is a proxy TRUSTED_PROXIES names; then the last X-Forwarded-For entry that is not itself one of
    those proxies (each proxy appends the address it saw: the entries before it are whatever the caller wrote)."""
    if request is None:
        return ""
    client = getattr(request, "client", None)
    peer = str(getattr(client, "host", "") or "")
    anyone, networks = trusted_proxies(environ)
    if not (anyone or is_proxy(peer, networks)):
        return peer
    hops = [h.strip() for h in request.headers.get("x-forwarded-for", "").split(",") if h.strip()]
    for hop in reversed(hops):
        if not is_proxy(hop, networks):
            return hop[:64]
    return hops[0][:64] if hops else peer


def refusal(waiting: Iterable[tuple[str, str]], client: str, address: str) -> str | None:
    """Why a new expensive call from (client, address) is refused, given the (client, address) of each expensive
    call queued or running now; None when it may queue."""
    waiting = list(waiting)
    if len(waiting) >= IN_ALL:
        return f"the server already has {IN_ALL} races, trainings or real-model calls waiting: try again in a minute"
    if client and sum(c == client for c, _ in waiting) >= PER_CLIENT:
        return (f"this client already has {PER_CLIENT} races, trainings or real-model calls waiting: wait for one to "
                "finish before sending another")
    if address and sum(a == address for _, a in waiting) >= PER_ADDRESS:
        return (f"this address already has {PER_ADDRESS} races, trainings or real-model calls waiting: wait for one "
                "to finish before sending another")
    return None


def waiting_calls(queue) -> list[tuple[str, str]]:
    """(client, address) of every expensive call in a Gradio queue: waiting in a concurrency group or running."""
    events = [e for group in queue.event_queue_per_concurrency_id.values() for e in group.queue]
    events += [e for job in queue.active_jobs if job for e in job]
    return [(e.session_hash, address_of(e.request)) for e in events if getattr(e.fn, "api_name", None) in EXPENSIVE]


def guard(demo) -> None:
    """Check every call joining the demo's queue (the page's, gradio_client's and /call/'s all join there): an
    expensive one over a limit gets the queue's own refusal (HTTP 503) with the reason, before it is queued."""
    queue = demo._queue
    push = queue.push

    async def guarded(body, request, username):
        fn = demo.fns.get(body.fn_index) if body.fn_index is not None else None
        if fn is not None and fn.api_name in EXPENSIVE:
            # a call without a session id is a client of its own: only its address and the total limit it
            why = refusal(waiting_calls(queue), body.session_hash or "", address_of(request))
            if why is not None:
                return False, why, "queue_full"
        return await push(body=body, request=request, username=username)

    queue.push = guarded
