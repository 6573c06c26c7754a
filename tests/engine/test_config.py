"""Settings: defaults, TOML, CAIRN_* environment overrides, validation with the field named."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.config import Settings, describe
from engine.errors import ValidationError


def test_defaults_are_safe() -> None:
    s = Settings()
    assert s.endpoint.allowed_origins == ()
    assert s.privacy.card == "block" and s.privacy.secret == "block" and s.privacy.email == "redact"
    assert s.llm.provider == "auto"
    assert s.facts.conflict_auto_resolve is False


def test_toml_then_env_precedence(tmp_path: Path) -> None:
    toml = tmp_path / "settings.toml"
    toml.write_text('[llm]\nmodel = "qwen3"\nprovider = "ollama"\n[endpoint]\nport = 9001\n')
    s = Settings.load(toml, env={"CAIRN_LLM_PROVIDER": "simple", "CAIRN_HOME": "/x"})
    assert s.llm.model == "qwen3"  # from the file
    assert s.llm.provider == "simple"  # env wins
    assert s.endpoint.port == 9001


def test_env_lists_are_json(tmp_path: Path) -> None:
    s = Settings.load(None, env={"CAIRN_ENDPOINT_ALLOWED_ORIGINS": '["http://localhost:3000"]'})
    assert s.endpoint.allowed_origins == ("http://localhost:3000",)


def test_bad_values_name_the_field_and_source(tmp_path: Path) -> None:
    toml = tmp_path / "settings.toml"
    toml.write_text("[endpoint]\nport = 99999\n")
    with pytest.raises(ValidationError, match=r"endpoint\.port") as info:
        Settings.load(toml, env={})
    assert str(toml) in info.value.message
    with pytest.raises(ValidationError, match=r"llm\.provider"):
        Settings.load(None, env={"CAIRN_LLM_PROVIDER": "gpt-5"})
    toml.write_text("this is = = not toml")
    with pytest.raises(ValidationError, match="not valid TOML"):
        Settings.load(toml, env={})
    toml.write_text("[llm]\nunknown_knob = 1\n")
    with pytest.raises(ValidationError, match="unknown_knob"):
        Settings.load(toml, env={})


def test_save_writes_only_changes_and_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    s = Settings().updated({"llm.model": "mistral", "privacy.email": "keep", "watch.folders": [{"path": "/notes"}]})
    s.save(path)
    text = path.read_text()
    assert "mistral" in text and "port" not in text
    again = Settings.load(path, env={})
    assert again == s
    assert again.watch.folders[0].path == "/notes"
    assert "*.md" in again.watch.folders[0].include


def test_updated_rejects_unknown_settings() -> None:
    with pytest.raises(ValidationError):
        Settings().updated({"nonsense.key": 1})
    with pytest.raises(ValidationError):
        Settings().updated({"llm.model": 5})


def test_every_setting_is_described() -> None:
    rows = list(describe(Settings()))
    assert len(rows) > 30
    missing = [name for name, _value, text in rows if not text and not name.startswith("watch.folders")]
    assert not missing


def test_the_chroma_backend_is_chosen_by_file_or_environment(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text('[vectors]\nbackend = "chroma"\nchroma_url = "http://127.0.0.1:8000/"\n')
    chosen = Settings.load(path, env={})
    assert chosen.vectors.backend == "chroma" and chosen.vectors.chroma_url == "http://127.0.0.1:8000"
    assert Settings.load(None, env={"CAIRN_VECTORS_BACKEND": "chroma"}).vectors.backend == "chroma"
    assert Settings().vectors.backend == "sqlite-vec" and Settings().vectors.chroma_url == ""


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"vectors.backend": "faiss"}, "vectors.backend"),
        ({"vectors.chroma_url": "127.0.0.1:8000"}, "vectors.chroma_url"),
        ({"vectors.chroma_url": "ftp://127.0.0.1:8000"}, "vectors.chroma_url"),
        ({"vectors.chroma_url": "http://127.0.0.1:port"}, "vectors.chroma_url"),
        ({"vectors.chroma_url": "http://127.0.0.1:8000/api/v2"}, "vectors.chroma_url"),
    ],
    ids=["backend", "no-scheme", "scheme", "port", "path"],
)
def test_a_bad_vector_setting_is_refused_naming_the_field(changes: dict[str, str], field: str) -> None:
    with pytest.raises(ValidationError) as info:
        Settings().updated(changes)
    assert info.value.field == field
