# The Living Dictionary — every entry point of the project.
#   make book   build the HTML book (executes the notebooks through jupyter-cache)
#   make test   unit tests, static checks, every notebook under nbval, the strict book build
# Both create .venv and install the pinned dependencies first (once per lock change).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
SEEDS  ?= 0 1 2 3 4
export PYTHONHASHSEED := 0
# No MPLBACKEND here: a kernel started with MPLBACKEND=Agg draws nothing on the page
# (ipykernel only selects the inline backend when it is unset); headless runs pick Agg anyway.
unexport MPLBACKEND
# one BLAS thread per process: tiny matrices gain nothing from more, and nbval runs two kernels
export OMP_NUM_THREADS := 1

.PHONY: install book test unit static notebooks build-strict browser lab bench sweep lock clean

install: $(STAMP)

$(STAMP): constraints.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check -c constraints.txt \
	    -e ".[lab,book,test,dev]" > $(VENV)/pip.log 2>&1 || { tail -40 $(VENV)/pip.log; exit 1; }
	$(BIN)/python -c "import livingdict, torch, jupyter_book, nbval"
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

book: install
	$(BIN)/jupyter-book build . -n -W --keep-going
	@echo "Book: $(CURDIR)/_build/html/index.html"

test: install unit static notebooks build-strict browser
	@echo "make test: all passed"

unit: install
	$(BIN)/python -m pytest -q tests

static: install
	$(BIN)/ruff check src tests notebooks tools book/_ext
	$(BIN)/ruff format --check src tests notebooks tools book/_ext
	$(BIN)/python -m tools.static_checks

notebooks: install
	LIVINGDICT_LEDGER=$(CURDIR)/_build/nbval-ledger.jsonl \
	$(BIN)/python -m pytest -q --nbval-lax -n 2 --dist loadfile notebooks

build-strict: install
	$(BIN)/jupyter-book build . -n -W --keep-going

# The book just built, in headless Debian Chromium (tests/browser): console errors, figures,
# verdicts, launch buttons, alt text, search, dark mode; screenshots in _build/screenshots.
# Skips without /usr/bin/chromium unless LIVINGDICT_REQUIRE_TOOLS=1 (.ci/run sets it).
browser: build-strict
	LIVINGDICT_BROWSER=1 LIVINGDICT_HTML=$(CURDIR)/_build/html $(BIN)/python -m pytest -q tests/browser

lab: install
	$(BIN)/jupyter lab notebooks

bench: install
	$(BIN)/python -m tools.bench $(NB)

sweep: install
	$(BIN)/python -m tools.sweep $(SEEDS) $(NB)

lock:
	rm -rf /tmp/livingdict-lock && $(PYTHON) -m venv /tmp/livingdict-lock
	/tmp/livingdict-lock/bin/pip install --quiet -e ".[lab,book,test,dev]"
	/tmp/livingdict-lock/bin/pip freeze --all --exclude-editable | grep -v "^pip==" | sed 's/+cpu$$//' > constraints.new
	@echo "wrote constraints.new: review, then move over constraints.txt"

clean:
	rm -rf _build .jupyter_cache .pytest_cache .ruff_cache
