//! perf's conventions for naming modules and placing addresses, in one place so that every
//! reader (perf script text, perf.data, pprof written from perf) and the symboliser give a
//! frame the same kind for the same module.
//!
//! `[vdso]` is user code: the kernel maps it into every process and perf records it as a user
//! mapping, symbolises it like any shared library and shows its samples as user (`[.]`), so its
//! frames are native. Kernel frames are those of `[kernel.kallsyms]`, of kernel modules (which
//! perf names `[nf_tables]`) and of addresses in the kernel's half of the address space.

use super::FrameKind;
use super::UNKNOWN;
use super::Unit;

/// The module perf gives the kernel's own frames.
pub const KERNEL_MODULE: &str = "[kernel.kallsyms]";

/// x86-64 and arm64 kernels live in the upper half of the address space.
pub fn is_kernel_address(addr: u64) -> bool {
    addr >= 0xffff_8000_0000_0000
}

/// `perf-1234.map` and perf's jitdump images `jitted-1234-5.so`, by file name.
pub fn is_jit_module(basename: &str) -> bool {
    (basename.starts_with("perf-") && basename.ends_with(".map"))
        || (basename.starts_with("jitted-") && basename.ends_with(".so"))
}

/// `[kernel.kallsyms]` (and perf's `[kernel.*]` variants) or a kernel module, which perf shows
/// in brackets (`[nf_tables]`); the bracketed names of user mappings are a known short list.
pub fn is_kernel_module(module: &str) -> bool {
    module.starts_with("[kernel.")
        || (module.starts_with('[')
            && !matches!(
                module,
                "[vdso]"
                    | "[vdso32]"
                    | "[vdsox32]"
                    | "[vsyscall]"
                    | "[heap]"
                    | "[stack]"
                    | UNKNOWN
                    | "[uprobes]"
                    | "[vectors]"
            )
            && !module.starts_with("[anon"))
}

/// The kind of a frame whose module is `module` (a path or perf's bracketed name), as far as
/// the name says: JIT maps and jitdump images are `jit`, the kernel and its modules `kernel`,
/// everything else `native`.
pub fn module_kind(module: &str) -> FrameKind {
    let basename = module.rsplit('/').next().unwrap_or(module);
    if is_jit_module(basename) {
        FrameKind::Jit
    } else if is_kernel_module(module) {
        FrameKind::Kernel
    } else {
        FrameKind::Native
    }
}

/// The sample type name of a perf event: modifiers dropped (`cpu-clock:ppp` → `cpu-clock`),
/// PMU events kept whole (`cpu/event=0x3c/`).
pub fn event_type_name(event: &str) -> &str {
    if event.contains('/') {
        return event;
    }
    event.split(':').next().unwrap_or(event)
}

/// Software clock events count nanoseconds; every other event counts itself.
pub fn event_unit(name: &str) -> Unit {
    match name {
        "cpu-clock" | "task-clock" => Unit::Nanoseconds,
        other => Unit::Other(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_names_say_one_kind() {
        assert_eq!(module_kind("[kernel.kallsyms]"), FrameKind::Kernel);
        assert_eq!(module_kind("[nf_tables]"), FrameKind::Kernel);
        assert_eq!(module_kind("[vdso]"), FrameKind::Native);
        assert_eq!(module_kind("[vsyscall]"), FrameKind::Native);
        assert_eq!(module_kind("[anon:dalvik]"), FrameKind::Native);
        assert_eq!(module_kind("/tmp/perf-1.map"), FrameKind::Jit);
        assert_eq!(
            module_kind("/root/.debug/jit/jitted-7-1.so"),
            FrameKind::Jit
        );
        assert_eq!(module_kind("/usr/lib/libc.so.6"), FrameKind::Native);
    }

    #[test]
    fn the_upper_half_is_the_kernels() {
        assert!(is_kernel_address(0xffff_ffff_8100_0000));
        assert!(!is_kernel_address(0x7fff_ffff_f000));
    }
}
