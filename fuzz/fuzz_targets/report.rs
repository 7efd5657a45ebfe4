#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| cpistack::fuzz::report(data));
