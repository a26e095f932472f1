//! Symbols loaded while the records are read. The folding thread is the bound of the records
//! phase and the decoding thread waits on it for part of its time: a third thread, run at the
//! scheduler's idle priority, loads each module's files (the kernel's symbols first, then every
//! module the first time a sample falls in it) in the time the other two leave a core idle,
//! so that symbolisation finds most modules ready instead of loading them after the records.

use crate::symbolize::{self, LoadedAhead, ModuleKind, SymbolOptions};
use std::sync::mpsc::{Receiver, Sender};

/// The modules to load ahead.
pub(super) struct EarlyLoads {
    requests: Sender<ModuleKind>,
}

impl EarlyLoads {
    /// Asks for a module's files to be loaded ahead; a no-op once the loader has stopped.
    pub(super) fn request(&self, kind: ModuleKind) {
        let _ = self.requests.send(kind);
    }
}

/// Starts the loading thread in `scope`, its loads kept in `ahead`. Closing `ahead` (and
/// dropping the [`EarlyLoads`]) stops it after the module in hand, which symbolisation then
/// waits for; what it has not started is symbolisation's to load, at full priority.
pub(super) fn spawn<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    symbols: &'scope SymbolOptions,
    ahead: &'scope LoadedAhead,
) -> Option<EarlyLoads> {
    let (requests, queue) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("whose-symbols".into())
        .spawn_scoped(scope, move || load_while_reading(queue, symbols, ahead))
        .ok()?;
    Some(EarlyLoads { requests })
}

fn load_while_reading(queue: Receiver<ModuleKind>, symbols: &SymbolOptions, ahead: &LoadedAhead) {
    run_only_when_idle();
    for kind in queue {
        if !ahead.start(&kind) {
            break;
        }
        // a load that panics must still end its wait in `LoadedAhead::take`
        let loaded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            symbolize::preload(&kind, symbols)
        }));
        ahead.finish(kind, loaded.ok());
    }
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
        let ahead = LoadedAhead::default();
        std::thread::scope(|scope| {
            let loads = spawn(scope, &options, &ahead).unwrap();
            loads.request(kind.clone());
            drop(loads);
        });
        // the map file is gone: only what was loaded ahead can name the frame
        drop(dir);
        let loaded = ahead.take(&kind).expect("loaded ahead");
        let result = loaded.resolve(&kind, &[0x1010]);
        assert_eq!(&*result.frames[0][0].name, "shop.Cart.total");
        assert!(ahead.take(&kind).is_none(), "taken once");
    }

    #[test]
    fn nothing_starts_loading_once_closed() {
        let dir = tempfile::tempdir().unwrap();
        let (options, kind) = jit_map(dir.path(), 4243);
        let ahead = LoadedAhead::default();
        ahead.close();
        std::thread::scope(|scope| {
            let loads = spawn(scope, &options, &ahead).unwrap();
            loads.request(kind.clone());
        });
        assert!(ahead.take(&kind).is_none());
    }

    #[test]
    fn a_module_being_loaded_is_waited_for() {
        let dir = tempfile::tempdir().unwrap();
        let (options, kind) = jit_map(dir.path(), 4244);
        let ahead = LoadedAhead::default();
        assert!(ahead.start(&kind));
        std::thread::scope(|scope| {
            let waiter = scope.spawn(|| ahead.take(&kind).is_some());
            std::thread::sleep(std::time::Duration::from_millis(50));
            ahead.finish(kind.clone(), Some(symbolize::preload(&kind, &options)));
            assert!(
                waiter.join().unwrap(),
                "the waiting request got the loaded files"
            );
        });
    }
}
