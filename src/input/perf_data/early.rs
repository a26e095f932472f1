//! Symbols loaded while the records are read. The folding thread is the bound of the records
//! phase and the decoding thread waits on it for part of its time: a third thread, run at the
//! scheduler's idle priority, loads each module's files (the kernel's symbols first, then every
//! module the first time a sample falls in it) in the time the other two leave a core idle,
//! so that symbolisation finds most modules ready instead of loading them after the records.

use crate::symbolize::{self, ModuleKind, Preloaded, SymbolOptions};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender};

/// The modules to load ahead, and a flag that stops the loads once the records are read.
pub(super) struct EarlyLoads {
    requests: Sender<ModuleKind>,
}

/// What the loading thread keeps: each module it loaded with its files.
pub(super) type Ready = Vec<(ModuleKind, Preloaded)>;

impl EarlyLoads {
    /// Asks for a module's files to be loaded ahead; a no-op once the loader has stopped.
    pub(super) fn request(&self, kind: ModuleKind) {
        let _ = self.requests.send(kind);
    }
}

/// Starts the loading thread in `scope`; `reading_done` set (and the [`EarlyLoads`] dropped)
/// stops it after the module in hand: what it has not started is left to symbolisation, which
/// loads at full priority, in parallel.
pub(super) fn spawn<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    symbols: &'scope SymbolOptions,
    reading_done: &'scope AtomicBool,
) -> Option<(EarlyLoads, std::thread::ScopedJoinHandle<'scope, Ready>)> {
    let (requests, queue) = std::sync::mpsc::channel();
    let handle = std::thread::Builder::new()
        .name("whose-symbols".into())
        .spawn_scoped(scope, move || {
            load_while_reading(queue, symbols, reading_done)
        })
        .ok()?;
    Some((EarlyLoads { requests }, handle))
}

fn load_while_reading(
    queue: Receiver<ModuleKind>,
    symbols: &SymbolOptions,
    reading_done: &AtomicBool,
) -> Ready {
    run_only_when_idle();
    let mut ready = Ready::new();
    for kind in queue {
        if reading_done.load(Ordering::Relaxed) {
            break;
        }
        let loaded = symbolize::preload(&kind, symbols);
        ready.push((kind, loaded));
    }
    ready
}

/// `SCHED_IDLE` for the calling thread: it runs only when no other thread wants the core, so
/// the folding and decoding threads are never slowed by it.
fn run_only_when_idle() {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: pid 0 is the calling thread; the parameter outlives the call. Failure
        // leaves the thread at its normal priority, which is still correct.
        let _ = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A JIT module whose map file exists only for this test: loaded ahead, it resolves.
    fn jit_map(dir: &std::path::Path, pid: i32) -> (SymbolOptions, ModuleKind) {
        std::fs::write(
            dir.join(format!("perf-{pid}.map")),
            "1000 100 Lshop/Cart;::total\n",
        )
        .unwrap();
        let options = SymbolOptions {
            jit_map_dir: vec![dir.to_path_buf()],
            ..SymbolOptions::default()
        };
        (options, ModuleKind::Jit { pid })
    }

    #[test]
    fn a_module_asked_for_while_reading_is_loaded_and_resolves() {
        let dir = tempfile::tempdir().unwrap();
        let (options, kind) = jit_map(dir.path(), 4242);
        let done = AtomicBool::new(false);
        let ready = std::thread::scope(|scope| {
            let (loads, handle) = spawn(scope, &options, &done).unwrap();
            loads.request(kind.clone());
            drop(loads);
            handle.join().unwrap()
        });
        assert_eq!(ready.len(), 1);
        let (loaded_kind, loaded) = ready.into_iter().next().unwrap();
        assert!(loaded_kind.same_files(&kind));
        // the map file is gone: only what was loaded ahead can name the frame
        drop(dir);
        let result = loaded.resolve(&kind, &[0x1010]);
        assert_eq!(&*result.frames[0][0].name, "shop.Cart.total");
    }

    #[test]
    fn nothing_is_loaded_once_the_records_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let (options, kind) = jit_map(dir.path(), 4243);
        let done = AtomicBool::new(true);
        let ready = std::thread::scope(|scope| {
            let (loads, handle) = spawn(scope, &options, &done).unwrap();
            loads.request(kind);
            drop(loads);
            handle.join().unwrap()
        });
        assert!(ready.is_empty());
    }
}
