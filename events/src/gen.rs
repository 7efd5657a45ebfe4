//! Random legal stimulus. Being written.
