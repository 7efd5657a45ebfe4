//! Bit-accurate, clocked model of the FMT/sFMT counter unit. Being written.
