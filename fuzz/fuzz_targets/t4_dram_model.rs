#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pmukit_harness::t4_dram_model(data));
