#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pmukit_harness::describe(data));
