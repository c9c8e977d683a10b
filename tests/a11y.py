"""An axe-core audit of the page in the browser: axe_playwright_python's bundled axe.min.js (npm's axe-core) is
injected into a Playwright page and run; `audit(page)` returns the serious and critical violations, each with its
rule, impact, help and the elements it names, so a test can fail naming them. Any page of the app can be audited:
open it, bring it to the state to check (a won level, a shown result), then `assert audit(page) == []`."""

from pathlib import Path

import axe_playwright_python

AXE = Path(axe_playwright_python.__file__).resolve().parent / "axe.min.js"
BLOCKING = ("serious", "critical")
# Colours are judged as drawn: a fade still running (a page just opened, a button's hover) or Gradio's veil over a
# component whose event is under way blends them, so the audit waits until every finite animation and transition has
# ended and no veil is up.
SETTLED = """() => document.getAnimations().every(
    (a) => a.playState !== "running" || a.effect.getComputedTiming().iterations === Infinity)
  && !document.querySelector('[data-testid="status-tracker"].translucent:not(.hide)')"""

RUN = """async () => {
  const r = await axe.run(document, { resultTypes: ["violations"] });
  return r.violations.map(v => ({ id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => n.target.join(" ") + " — "
      + (n.failureSummary || "").split("\\n").slice(1, 2).join(" ").trim()) }));
}"""


def audit(page, impacts: tuple[str, ...] = BLOCKING) -> list[dict]:
    """The page's axe-core violations of these impacts (serious and critical by default): [{id, impact, help,
    nodes: ["selector — what to fix", …]}]."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    page.wait_for_function(SETTLED, timeout=10_000)
    return [v for v in page.evaluate(RUN) if v["impact"] in impacts]


def summary(violations: list[dict]) -> str:
    """One line per violation, its first elements named: for an assertion message."""
    return "\n".join(f"{v['impact']} {v['id']} ({v['help']}): {'; '.join(v['nodes'][:4])}" for v in violations)
