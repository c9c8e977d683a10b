"""Where the test suite's time goes: python benchmarks/suite.py [pytest arguments] (last line: JSON summary).

It runs README's test command (`python -m pytest`, and any arguments given) and, meanwhile, reads /proc every 0.2 s:
the CPU each kind of process used (the pytest workers with the apps they serve, Chromium's renderers, its GPU process
— software compositing here — and its browser process, Playwright's driver, the apps the tests start). Loaded into
the run as a pytest plugin (`-p benchmarks.suite`, which this adds), every worker notes for each test its time, its
page loads (goto and reload), the browser pages it opened and its screenshots. The summary: the wall time, how busy the
machine's cores were, CPU by process kind, the modules that took longest with their page loads, and the core-seconds by
test: the browser tests (their worker's CPU, the app it serves included, and the Chromium and Playwright under it), the
other tests, what ran between tests, and the fixed results (seeded trainings, reference races) computed meanwhile."""

import collections
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.class_load import cpu_s  # noqa: E402

NOTES = "SUITE_NOTES"  # the file each worker appends its per-test lines to (set by the runner)


# --- the plugin: in each worker, per test -----------------------------------------------------------------------------

_COUNTS = collections.Counter()  # this worker's page loads, new pages and screenshots so far
_TRAINED: list[tuple[str, float]] = []  # this worker's computations of fixed results (kind, seconds), in order
_LAST: dict[int, float] = {}  # the CPU seconds last read of each process under this worker (an ended one keeps it)


def _note_trainings() -> None:
    """Note every fixed result this worker computes (a seeded training, a reference race: dragon/runtime/shared.py),
    with its wall time; one read back from the session's folder, or kept in memory, is no computation."""
    from dragon.runtime import shared

    if getattr(shared.Shared.computed, "noted", False):
        return
    original = shared.Shared.computed

    def computed(self, key, compute):
        def timed():
            t0 = time.perf_counter()
            try:
                return compute()
            finally:
                _TRAINED.append((str(key[0] if isinstance(key, tuple) else key), time.perf_counter() - t0))

        return original(self, key, timed)

    computed.noted = True
    shared.Shared.computed = computed


def _descendants_cpu() -> float:
    """CPU seconds of every process under this worker (Playwright's driver, Chromium's processes, apps it started),
    each as last read: one that ended keeps its last reading."""
    children: dict[int, list[int]] = collections.defaultdict(list)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children[ppid].append(int(entry))
    stack = [os.getpid()]
    while stack:
        for pid in children.get(stack.pop(), ()):
            seconds = cpu_s(pid)
            if seconds:
                _LAST[pid] = seconds
            stack.append(pid)
    return sum(_LAST.values())


def _own_cpu(browser: bool) -> float:
    """CPU seconds of this worker, all its threads (the app it serves in-process included), and of its ended children
    it waited for (apps a test started and stopped); not for a browser test, whose processes are read while they run
    (_descendants_cpu): Playwright's driver, waited for when Chromium stops, would bring all of theirs a second time."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    ended = resource.getrusage(resource.RUSAGE_CHILDREN) if not browser else None
    return own.ru_utime + own.ru_stime + (ended.ru_utime + ended.ru_stime if ended else 0.0)


def _count_browser_calls() -> None:
    """Count Page.goto and reload (a page given back to the session's pool leaves for a 404 of the app: not counted),
    new pages and screenshots, once per worker."""
    from playwright.sync_api import Browser, BrowserContext, Page

    if getattr(Page.goto, "counted", False):
        return

    def counted(method, what: str, unless: str | None = None):
        def call(self, *args, **kwargs):
            url = str(args[0] if args else kwargs.get("url", ""))
            if unless is None or unless not in url:
                _COUNTS[what] += 1
            return method(self, *args, **kwargs)

        call.counted = True
        return call

    Page.goto = counted(Page.goto, "loads", unless="gradio_api/upload")
    Page.reload = counted(Page.reload, "loads")
    Page.screenshot = counted(Page.screenshot, "screenshots")
    BrowserContext.new_page = counted(BrowserContext.new_page, "new_pages")
    Browser.new_page = counted(Browser.new_page, "new_pages")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    if NOTES not in os.environ:
        yield
        return
    try:
        _count_browser_calls()
    except ImportError:  # no Playwright: nothing to count
        pass
    _note_trainings()
    browser = "browser" in getattr(item, "fixturenames", ())  # its Chromium runs under this worker
    before, trained, t0 = dict(_COUNTS), len(_TRAINED), time.perf_counter()
    own0, under0 = _own_cpu(browser), _descendants_cpu() if browser else 0.0
    yield
    note = {"id": item.nodeid, "wall": time.perf_counter() - t0, "browser": browser,
            "cpu_worker": _own_cpu(browser) - own0, "cpu_under": _descendants_cpu() - under0 if browser else 0.0,
            "trained": _TRAINED[trained:],
            **{k: _COUNTS[k] - before.get(k, 0) for k in ("loads", "new_pages", "screenshots")}}
    with open(os.environ[NOTES], "a", encoding="utf-8") as f:
        f.write(json.dumps(note) + "\n")


# --- the runner: the whole machine, while the suite runs ----------------------------------------------------------


def kind(cmdline: bytes) -> str | None:
    """What a process is, from its command line (None: not the suite's)."""
    cmd = cmdline.replace(b"\0", b" ").decode(errors="replace")
    if "chrom" in cmd:
        for role in ("renderer", "gpu-process", "utility", "zygote"):
            if f"--type={role}" in cmd:
                return f"chromium {role}"
        return "chromium browser"
    if "playwright" in cmd and "node" in cmd:
        return "playwright driver"
    if "sys.stdin" in cmd:  # pytest-xdist's workers: the tests, and the app each serves in-process
        return "pytest workers"
    if "pytest" in cmd:
        return "pytest controller"
    if "python" in cmd:
        return "apps and scripts the tests start"
    return None


def busy_ticks() -> tuple[int, int]:
    """(busy, all) CPU ticks of the machine since boot."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return sum(values) - values[3] - values[4], sum(values)


def sample(kinds: dict[int, str | None], last: dict[int, float]) -> None:
    """Each process's CPU seconds so far (its kind read once, when first seen)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        pid = int(entry)
        if pid not in kinds:
            try:
                kinds[pid] = kind(Path(f"/proc/{pid}/cmdline").read_bytes())
            except OSError:  # it ended meanwhile
                continue
        seconds = cpu_s(pid) if kinds[pid] else 0.0  # 0: ended meanwhile; its last reading stands
        if seconds:
            last[pid] = seconds


def main(args: list[str]) -> int:
    notes = Path(tempfile.mkstemp(prefix="suite-notes-", suffix=".jsonl")[1])
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)  # the workers import it too
    env = dict(os.environ, **{NOTES: str(notes), "PYTHONPATH": path})
    kinds: dict[int, str | None] = {os.getpid(): None}
    last: dict[int, float] = {}
    busy0, all0 = busy_ticks()
    t0 = time.perf_counter()
    run = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "benchmarks.suite", *args], cwd=ROOT, env=env)
    while run.poll() is None:
        sample(kinds, last)
        time.sleep(0.2)
    wall = time.perf_counter() - t0
    busy1, all1 = busy_ticks()

    cpu = collections.Counter()
    for pid, seconds in last.items():
        cpu[kinds[pid]] += seconds
    tests = [json.loads(line) for line in notes.read_text(encoding="utf-8").splitlines() if line]
    notes.unlink()
    modules: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for t in tests:
        m = modules[t["id"].split("::")[0]]
        m.update({k: t[k] for k in ("wall", "loads", "new_pages", "screenshots")} | {"tests": 1})
    browser_wall = sum(t["wall"] for t in tests if t["loads"] or t["new_pages"])

    print(f"\n{len(tests)} tests in {wall:.1f} s; the cores {(busy1 - busy0) / (all1 - all0):.0%} busy")
    print("CPU by process kind (core-s):")
    for name, seconds in cpu.most_common():
        print(f"  {seconds:7.1f}  {name}")
    print("modules by their tests' time (summed over the workers):")
    for name, m in sorted(modules.items(), key=lambda kv: -kv[1]["wall"])[:15]:
        print(f"  {m['wall']:6.1f} s  {m['tests']:4d} tests  {m['loads']:3d} loads  {m['new_pages']:3d} new pages  "
              f"{m['screenshots']:3d} screenshots  {name}")
    # where the core-seconds went, by test: the browser tests (with the Chromium and Playwright under their worker),
    # the others, and among both the fixed results computed (trainings, reference races: once per session)
    split = {}
    for name, group in (("browser tests", [t for t in tests if t["browser"]]),
                        ("other tests", [t for t in tests if not t["browser"]])):
        split[name] = {"tests": len(group), "core_s": round(sum(t["cpu_worker"] + t["cpu_under"] for t in group), 1),
                       "of_it_chromium_and_playwright": round(sum(t["cpu_under"] for t in group), 1),
                       "loads": sum(t["loads"] for t in group), "new_pages": sum(t["new_pages"] for t in group)}
    trained = collections.Counter()
    for t in tests:
        for what, seconds in t["trained"]:
            trained[what] += seconds
    computations = sum(len(t["trained"]) for t in tests)
    attributed = sum(part["core_s"] for part in split.values())
    print("core-seconds by test (a worker's CPU, its app's threads included, and the processes under it):")
    for name, part in split.items():
        print(f"  {part['core_s']:7.1f}  {part['tests']:4d} {name} ({part['of_it_chromium_and_playwright']:.1f} in "
              f"Chromium and Playwright; {part['loads']} page loads, {part['new_pages']} new pages)")
    print(f"  {sum(cpu.values()) - attributed:7.1f}  between tests (collection, start-up, teardown, the controller)")
    print(f"  of the tests' time, {computations} fixed results computed (seeded trainings, reference races: once a "
          f"session) took {sum(trained.values()):.1f} s: " +
          ", ".join(f"{what} {seconds:.1f}" for what, seconds in trained.most_common(6)))
    print(json.dumps({
        "exit": run.returncode, "tests": len(tests), "wall_s": round(wall, 1),
        "by_test": split, "between_tests_core_s": round(sum(cpu.values()) - attributed, 1),
        "computed_results": computations, "computed_results_s": round(sum(trained.values()), 1),
        "busy_share": round((busy1 - busy0) / (all1 - all0), 3),
        "cpu_core_s": {name: round(s, 1) for name, s in cpu.most_common()},
        "cpu_core_s_total": round(sum(cpu.values()), 1),
        "tests_s_summed": round(sum(t["wall"] for t in tests), 1),
        "browser_tests_s_summed": round(browser_wall, 1),
        "loads": sum(t["loads"] for t in tests), "new_pages": sum(t["new_pages"] for t in tests),
        "screenshots": sum(t["screenshots"] for t in tests),
    }))
    return run.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
