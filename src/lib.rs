//! The `cpistack` library: lock-step checker, CLI support, stacks and reports.
