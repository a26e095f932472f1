//! Every integration test of whose, in one test binary: each `tests/it/*.rs` is a module, so
//! the test crate is compiled and linked once instead of once per file, and the tests of all
//! files run in parallel with each other.

mod it {
    mod common;
    mod hermetic;

    mod architecture;
    mod auto_owner;
    mod bad_input;
    mod convert;
    mod decisive;
    mod design;
    mod diff;
    mod ecosystems;
    mod explain;
    mod flame;
    mod flame_browser;
    mod fleet;
    mod folded;
    mod frameworks;
    mod gate;
    mod goldens;
    mod hardening;
    mod html;
    mod html_browser;
    mod inline_live;
    mod jfr;
    mod memory;
    mod memory_caps;
    mod memory_each;
    mod mutations;
    mod names;
    mod node_python;
    mod output;
    mod perf_data;
    mod perf_data_corrupt;
    mod perf_dwarf;
    mod perf_habits;
    mod perf_inline;
    mod perf_live;
    mod perf_script;
    mod pprof;
    mod pprof_errors;
    mod pprof_rs;
    mod presets;
    mod properties;
    mod pyspy;
    mod quality;
    mod quality_live;
    mod readers;
    mod report;
    mod roundtrip;
    mod sampling_error;
    mod shape;
    mod speedscope;
    mod terminal;
    mod timeline;
    mod top;
    mod unclassified_guard;
    mod unfit;
    mod zero_config;
}
