# cpistack: the two commands a new user needs are `make demo` and `make verify`.
CARGO ?= cargo
BIN   := target/release/cpistack

.PHONY: all build release demo verify lint fmt test smoke bench clean

all: build

build:
	$(CARGO) build --workspace --all-targets

release:
	$(CARGO) build --release --bin cpistack

## demo: the main job on a built-in default.
demo: release
	$(BIN) check --random --seed 1 --cycles 200000 --variant both

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
	! $(BIN) check --random --set fmt_rows=48 2>/dev/null
	! $(BIN) replay Makefile 2>/dev/null

## bench: throughput figures (release).
bench: release
	$(BIN) bench --json

clean:
	$(CARGO) clean
