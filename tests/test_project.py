"""The repository itself: Space front matter, README commands, CI script, lexicon validation."""

import re
from pathlib import Path

import pytest

from dragon.text.lexicon import SCHEMAS, LexiconError, load_lexicon, read_table

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def pinned(name: str) -> str:
    text = (ROOT / "requirements.txt").read_text()
    return re.search(rf"^{name}==(\S+)", text, re.M).group(1)


def test_readme_front_matter_deploys_as_a_space() -> None:
    front = README.split("---")[1]
    assert re.search(r"^sdk: gradio$", front, re.M)
    assert re.search(r"^app_file: app.py$", front, re.M)
    assert re.search(r"^sdk_version: (\S+)$", front, re.M).group(1) == pinned("gradio")


def test_ci_runs_exactly_the_readme_test_command() -> None:
    commands = re.findall(r"```bash\n(.+?)\n```", README)
    test_command = next(c for c in commands if "pytest" in c)
    ci = (ROOT / ".ci" / "run").read_text()
    assert test_command in ci.splitlines()
    assert "apt-get update" in ci and "chromium" in ci and "fonts-noto-cjk" in ci
    # the live class's second pass on Debian's PostgreSQL, started by CI itself
    assert "postgresql" in ci and ".ci/postgres.sh start" in ci and "tests/test_classroom_store.py" in ci
    assert any("python app.py" in c and "requirements.txt" in c for c in commands)


def test_shipped_lexicons_load() -> None:
    lex = load_lexicon()
    assert lex.emotion["悲伤"] == -1 and lex.emotion["快乐"] == 1
    assert lex.time["昨天"] == "time" and lex.space["公园"] == "place"
    assert lex.connectives["因为"] == "cause" and lex.connectives["所以"] == "effect"
    assert lex.pronouns["they"] == ("pl", 3) and lex.person_nouns["students"] == "pl"


@pytest.mark.parametrize(
    "line, message",
    [("快乐\t+2\n", "not one of"), ("快乐\n", "columns"), ("\t+1\n", "empty word")],
)
def test_malformed_lexicon_names_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "emotion.tsv"
    path.write_text("# comment\n悲伤\t-1\n" + line, encoding="utf-8")
    with pytest.raises(LexiconError, match=rf"emotion.tsv line 3: .*{message}"):
        read_table(path, SCHEMAS["emotion.tsv"])


def test_missing_lexicon_is_named(tmp_path: Path) -> None:
    with pytest.raises(LexiconError, match=r"tone\.tsv: file not found"):
        read_table(tmp_path / "tone.tsv", SCHEMAS["tone.tsv"])
