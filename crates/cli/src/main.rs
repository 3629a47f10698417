//! The `pmu` executable: the command line of `pmukit_cli`.

/// The machine models stream megabyte-sized blocks of spans; the system allocator
/// hands such memory back to the kernel and faults it in again for every loop
/// (a third of a `pmu stat` run went to page faults), mimalloc keeps it.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    pmukit_cli::main()
}
