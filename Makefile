# cpistack: the two commands a new user needs are `make demo` and `make verify`.
CARGO ?= cargo
BIN   := target/release/cpistack
# The shared ChampSim traces live beside the repository.
TRACES ?= ../shared/traces

.PHONY: all build release demo verify lint fmt test smoke bench clean

all: build

build:
	$(CARGO) build --workspace --all-targets

release:
	$(CARGO) build --release --bin cpistack

## demo: the main job on a built-in default: the core simulator on the `server`
## mixture, FMT and sFMT attached, golden model in lock step.
demo: release
	$(BIN) run --workload server --instructions 1000000 --check

## verify: the regression (what CI runs).
verify: lint test smoke
	@echo "make verify: all checks passed"

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

fmt:
	$(CARGO) fmt --all

test:
	$(CARGO) test --workspace

## smoke: the CLI end to end, release build, including its error paths.
smoke: release
	$(BIN) check --random --seed 7 --cycles 300000 --variant both --mix stress
	$(BIN) check --random --seed 8 --cycles 100000 --variant both --mix stress --set fmt_rows=4 --set local_bits=3 --set global_bits=8
	$(BIN) gen --seed 3 --cycles 20000 -o target/smoke.bin
	$(BIN) replay target/smoke.bin --variant both --check
	$(BIN) gen --seed 3 --cycles 2000 -o target/smoke.jsonl
	$(BIN) replay target/smoke.jsonl --check --json > /dev/null
	$(BIN) cost
	$(BIN) run --workload branchy --instructions 50000 --warmup 10000 --check --json > /dev/null
	! $(BIN) run --workload no-such-workload 2>/dev/null
	$(BIN) run --trace $(TRACES)/xz6_x86_skip50M_13M.champsimtrace.xz --warmup 100000 --instructions 1000000 --check
	$(BIN) run --trace $(TRACES)/sqlite3_x86_skip100M_13M.champsimtrace.xz --warmup 100000 --instructions 1000000 --check
	! $(BIN) run --trace Makefile.champsimtrace 2>/dev/null
	! $(BIN) check --random --set fmt_rows=48 2>/dev/null
	! $(BIN) replay Makefile 2>/dev/null

## bench: throughput figures (release).
bench: release
	$(BIN) bench --json

clean:
	$(CARGO) clean
