"""What papers found, quoted beside the game's own measurements: a section of assets/lessons/facts.yaml."""

import functools

import yaml

from dragon.lessons.facts import FACTS_FILE, FactsError


@functools.cache
def papers(section: str) -> tuple[dict, ...]:
    """[{source, finding: {zh, en}}, …] of one section (pruning, tower); a malformed entry names the file and place."""
    raw = yaml.safe_load(FACTS_FILE.read_text(encoding="utf-8")) or {}
    entries = raw.get(section)
    if not isinstance(entries, list) or not entries:
        raise FactsError(f"{FACTS_FILE.name}: {section} must be a non-empty list of {{source, finding: {{zh, en}}}}")
    for i, e in enumerate(entries):
        finding = e.get("finding") if isinstance(e, dict) else None
        if not e.get("source") or not isinstance(finding, dict) or not all(finding.get(k) for k in ("zh", "en")):
            raise FactsError(f"{FACTS_FILE.name} {section}[{i}]: needs a source and a finding in zh and en")
    return tuple({"source": e["source"], "finding": dict(e["finding"])} for e in entries)
