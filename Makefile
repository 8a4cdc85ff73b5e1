# The Living Dictionary — every entry point of the project.
#   make book       build the HTML book, both editions (installs only what a reader
#                   needs: the book's tools and JupyterLab)
#   make lab        open the lessons in JupyterLab
#   make unit       the fast unit tests (under a minute), while writing
#   make test       everything CI runs: static checks, every unit test, every lesson
#                   under nbval, the strict book build, the browser test; prints the
#                   time of each stage at the end
# Each creates .venv and installs the pinned dependencies first (once per lock change).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
READER := $(VENV)/.installed-reader
STAMP  := $(VENV)/.installed
SEEDS  ?= 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19
JOBS   ?= 2
export PYTHONHASHSEED := 0
# No MPLBACKEND here: a kernel started with MPLBACKEND=Agg draws nothing on the page
# (ipykernel only selects the inline backend when it is unset); headless runs pick Agg anyway.
unexport MPLBACKEND
# one BLAS thread per process: tiny matrices gain nothing from more, and nbval runs two kernels
export OMP_NUM_THREADS := 1
# One ledger (_build/ledger.jsonl) and one SQLite jupyter-cache: `make -j` must not run
# two targets at once (parallelism is inside the targets: JOBS kernels at a time).
.NOTPARALLEL:
# every figure a lesson shows is drawn in Japanese too (livingdict.figure_words),
# for the Japanese edition: only in the book's executions, never a reader's
export LIVINGDICT_FIGURES := ja

# PyTorch's CPU-only wheels (Linux, macOS and Windows). On Linux a plain
# `pip install torch==2.13.0` takes the CUDA build from PyPI, several GB of
# nvidia-* packages a laptop cannot use. Where this index cannot be reached
# (a machine that serves its own CPU wheel), the plain pin is installed.
# A GPU user opts in with `make install TORCH_INDEX=https://pypi.org/simple`
# (or a CUDA index of download.pytorch.org).
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
TORCH_PIN   := $(shell grep -m1 '^torch==' constraints.txt)
# Nothing is compiled at install (pip's --no-compile, uv's default): Python
# compiles each module on its first import and keeps the .pyc, so only what
# runs is compiled (on 2 cores: the install 16 s instead of 38, the first
# imports 4 s longer). Where PYTHONDONTWRITEBYTECODE is set nothing is kept,
# and every kernel would import torch from source (the bench's floor 5.5 s
# instead of 2.8): make's commands run without it.
unexport PYTHONDONTWRITEBYTECODE
PIP         := $(BIN)/python -m pip install --disable-pip-version-check --no-compile
# torch comes through pip (the CPU index, or a wheel the machine serves); the
# rest through uv, installed by pip into the venv: the same packages at the
# same pins (constraints.txt), in 7 s where pip takes 45 s (measured on a
# 2-core machine, warm caches).
UV_PIN      := uv==0.13.9
# uv leaves rfc3987-syntax out: jsonschema's optional check of the "iri"
# format (through jupyter-events), it builds a parser on import, 1.0 s in every
# process that imports nbformat (Sphinx builds, nbval, jupyter-cache). Nothing
# here validates an IRI; without it, make test's unit stage took 44 s, not 52.
EXCLUDE     := $(VENV)/exclude.txt
UV          := echo rfc3987-syntax > $(EXCLUDE) && \
               $(BIN)/uv pip install --python $(BIN)/python --excludes $(EXCLUDE)
REACHABLE    = $(BIN)/python -c "import urllib.request as u; u.urlopen('$(TORCH_INDEX)/torch/', timeout=10)" 2>/dev/null
# `make test` appends "stage seconds" lines here and prints them at the end
TIMES := _build/stage-times.txt
TIMED  = @start=$$(date +%s); $(1) && \
	mkdir -p _build && echo "$(2) $$(( $$(date +%s) - start ))" >> $(TIMES)

.PHONY: install reader book test unit unit-all static notebooks execute conf build \
        gettext i18n-update i18n-current checked-build browser lab bench sweep lock clean \
        model corpus ja-notebooks lab-ja

# everything: the reader's install, then the tests' and the harness's tools
install: $(STAMP)
# what a reader needs to build the book and run the lessons
reader: $(READER)

# torch first, alone and without its dependencies, from the CPU index; then the
# book and everything else (torch's dependencies too) from the default index,
# pinned by the lock (2.13.0+cpu satisfies torch==2.13.0).
$(READER): constraints.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	if $(REACHABLE); then \
	    $(PIP) --no-deps --index-url $(TORCH_INDEX) "$(TORCH_PIN)"; \
	else \
	    echo "$(TORCH_INDEX) cannot be reached: installing the plain pin $(TORCH_PIN)"; \
	    $(PIP) -c constraints.txt "$(TORCH_PIN)"; \
	fi > $(VENV)/pip.log 2>&1 || { tail -40 $(VENV)/pip.log; exit 1; }
	$(PIP) "$(UV_PIN)" >> $(VENV)/pip.log 2>&1 || { tail -40 $(VENV)/pip.log; exit 1; }
	$(UV) -c constraints.txt -e ".[lab,book]" \
	    >> $(VENV)/pip.log 2>&1 || { tail -40 $(VENV)/pip.log; exit 1; }
	$(BIN)/python -c "import livingdict, torch, jupyter_book"
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(READER)

# the tests' tools (pytest, nbval) and the harness's (ruff, Playwright, zizmor,
# repo2docker, psutil)
$(STAMP): $(READER)
	$(UV) -c constraints.txt -e ".[lab,book,test,dev]" \
	    >> $(VENV)/pip.log 2>&1 || { tail -40 $(VENV)/pip.log; exit 1; }
	$(BIN)/python -c "import nbval, playwright"
	touch $(STAMP)

# Both editions from one source: execute every lesson missing from the
# jupyter-cache (JOBS at a time), build the English book (the site's root) and
# the Japanese one (_build/html/ja) from the same executed notebooks.
book: build
	@echo "Book: $(CURDIR)/_build/html/index.html (日本語: _build/html/ja/index.html)"

test:
	@rm -f $(TIMES)
	$(call TIMED,$(MAKE) --no-print-directory install,install)
	$(call TIMED,$(MAKE) --no-print-directory static,static)
	$(call TIMED,$(MAKE) --no-print-directory unit-all,unit)
	$(call TIMED,$(MAKE) --no-print-directory notebooks,nbval)
	$(call TIMED,$(MAKE) --no-print-directory checked-build,build)
	$(call TIMED,$(MAKE) --no-print-directory browser BROWSER_NEEDS=,browser)
	@echo "make test: all passed. Time per stage (seconds):"
	@awk '{ printf "  %-8s %5d\n", $$1, $$2; t += $$2 } END { printf "  %-8s %5d\n", "total", t }' $(TIMES)

# the fast inner loop while writing: no kernels, Sphinx, repo2docker or browsers
unit: install
	$(BIN)/python -m pytest -q -m "not slow" tests

# every unit test, the slow ones too (make test), on two workers (the slow
# ones start kernels and Sphinx builds: 56 s instead of 150 on 2 cores)
unit-all: install
	$(BIN)/python -m pytest -q -n 2 tests

static: install
	$(BIN)/ruff check src tests notebooks tools book/_ext
	$(BIN)/ruff format --check src tests notebooks tools book/_ext
	$(BIN)/python -m tools.static_checks

# Every lesson under nbval, two kernels at a time. Each lesson that passes is
# kept, executed, in the book's jupyter-cache (tools/nbval_cache.py), and its checks
# in the book's ledger, so the book build after it executes nothing twice.
notebooks: install
	LIVINGDICT_LEDGER=$(CURDIR)/_build/ledger.jsonl \
	$(BIN)/python -m pytest -q --nbval-lax -n 2 --dist loadfile \
	    -p tools.nbval_cache --nbcache $(CURDIR)/_build/.jupyter_cache notebooks
	$(MAKE) --no-print-directory ja-notebooks
	LIVINGDICT_LEDGER=$(CURDIR)/_build/ja/ledger.jsonl LIVINGDICT_FIGURES= \
	$(BIN)/python -m pytest -q --nbval-lax \
	    _build/ja/notebooks/00_introduction/01_three_guises.ipynb

# the Japanese notebooks, made from the English ones and the catalogs
# (book/_ext/ja_notebooks.py): _build/ja/notebooks/**.ipynb
ja-notebooks: reader
	$(BIN)/python book/_ext/ja_notebooks.py _build/ja >/dev/null
	@echo "Japanese notebooks: $(CURDIR)/_build/ja/notebooks"

LEDGER := $(CURDIR)/_build/ledger.jsonl
# sphinx-build on ./conf.py (make conf): the book's extensions on the path, the
# English build's cache (myst-nb's default is beside the output folder)
SPHINX := PYTHONPATH=book/_ext $(BIN)/sphinx-build -n -W --keep-going -q \
          -D nb_execution_cache_path=$(CURDIR)/_build/.jupyter_cache

execute: reader
	LIVINGDICT_LEDGER=$(LEDGER) $(BIN)/python -m tools.nbcache execute --jobs $(JOBS)

# ./conf.py: the Sphinx configuration jupyter-book uses, for sphinx-build
conf: reader
	$(BIN)/jupyter-book config sphinx . >/dev/null

# -n -W: a warning (a broken reference, a failed claim) fails the build. The
# two editions build at once (one process each, on their own folders; both
# read the notebooks `execute` ran): the Japanese build fails if it executes one.
BUILD_NEEDS ?= execute conf
build: $(BUILD_NEEDS)
	$(SPHINX) -b html -D language=ja . _build/ja/html -d _build/ja/.doctrees \
	    > _build/ja.log 2>&1 & ja=$$!; \
	$(BIN)/jupyter-book build . -n -W --keep-going; en=$$?; \
	wait $$ja || { tail -40 _build/ja.log; exit 1; }; exit $$en
	@! grep -q "Executing notebook" _build/ja.log || \
	    { echo "the Japanese build executed a notebook"; exit 1; }
	rm -rf _build/html/ja && cp -r _build/ja/html _build/html/ja

# --- translations: locale/ja/LC_MESSAGES/<page>.po (README, "Two editions") ---
# extract every translatable message (the lessons must have run: the captions
# and the verdict boxes' words come from their outputs and the ledger)
gettext: $(BUILD_NEEDS)
	$(SPHINX) -b gettext . _build/gettext -d _build/.doctrees-gettext

# bring the catalogs up to date after an English edit, then translate
i18n-update: gettext
	$(BIN)/sphinx-intl update -p _build/gettext -l ja -d locale

# every catalog matches the English it translates: sphinx-intl, run on a copy
# of locale/, changes nothing (make static checks the rest)
i18n-current: gettext
	rm -rf _build/locale && cp -r locale _build/locale
	$(BIN)/sphinx-intl update -p _build/gettext -l ja -d _build/locale >/dev/null
	git diff --no-index --exit-code locale _build/locale || \
	    { echo "catalogs out of date: make i18n-update, then translate"; exit 1; }

# make test's build stage: the catalogs' check (its gettext build takes one
# core) beside the two editions' builds, 40 s instead of 46 on 2 cores
checked-build: execute conf
	$(MAKE) --no-print-directory i18n-current BUILD_NEEDS= \
	    > _build/i18n.log 2>&1 & i=$$!; \
	$(MAKE) --no-print-directory build BUILD_NEEDS=; b=$$?; \
	wait $$i || { tail -40 _build/i18n.log; exit 1; }; exit $$b

# The book just built, in headless Debian Chromium (tests/browser): console errors, figures,
# verdicts, launch buttons, alt text, search, dark mode; screenshots in _build/screenshots.
# Skips without /usr/bin/chromium unless LIVINGDICT_REQUIRE_TOOLS=1 (.ci/run sets it).
BROWSER_NEEDS ?= build
browser: $(BROWSER_NEEDS)
	LIVINGDICT_BROWSER=1 LIVINGDICT_HTML=$(CURDIR)/_build/html \
	$(BIN)/python -m pytest -q -n 2 --dist loadgroup tests/browser

# The book's language model (livingdict.lm): train the two-layer model and the
# one-layer control, deterministically on one thread (seed 0 writes
# src/livingdict/lmdata/; another SEED only prints its numbers). `make corpus`
# re-extracts the corpus and the vocabulary (needs Python 3.11.7).
SEED ?= 0
model: install
	$(BIN)/python -m livingdict.lm_train --seed $(SEED)

corpus: install
	$(BIN)/python -c "from livingdict import lm_train; lm_train.write_corpus()"

lab: reader
	$(BIN)/jupyter lab notebooks

# JupyterLab on the Japanese notebooks (the same code, the prose in Japanese)
lab-ja: ja-notebooks
	$(BIN)/jupyter lab _build/ja/notebooks

# bench and sweep time what a reader runs: no second, Japanese drawing
bench: install
	LIVINGDICT_FIGURES= $(BIN)/python -m tools.nbrun bench $(NB)

# one ledger per lesson swept, so sweeps of different lessons can run at once
SWEEP_LEDGER = _build/sweep-ledger$(if $(NB),-$(subst /,_,$(basename $(notdir $(firstword $(NB)))))).jsonl
sweep: install
	LIVINGDICT_FIGURES= $(BIN)/python -m tools.nbrun sweep --jobs $(JOBS) \
	    --ledger $(SWEEP_LEDGER) $(SEEDS) $(NB)

lock: LOCK := /tmp/livingdict-lock/bin
lock:
	rm -rf /tmp/livingdict-lock && $(PYTHON) -m venv /tmp/livingdict-lock
	if $(LOCK)/python -c "import urllib.request as u; u.urlopen('$(TORCH_INDEX)/torch/', timeout=10)" 2>/dev/null; then \
	    $(LOCK)/pip install --quiet --no-deps --index-url $(TORCH_INDEX) "$(TORCH_PIN)"; \
	else $(LOCK)/pip install --quiet "$(TORCH_PIN)"; fi
	$(LOCK)/pip install --quiet -e ".[lab,book,test,dev]"
	$(LOCK)/pip freeze --all --exclude-editable | grep -v "^pip==" | sed 's/+cpu$$//' > constraints.new
	@echo "wrote constraints.new: review, then move over constraints.txt"

clean:
	rm -rf _build .pytest_cache .ruff_cache conf.py
