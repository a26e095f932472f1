//! One input's share of memory and time (issue 23): `report --each` reads many inputs in one
//! process, and one input of 5 M distinct stacks or one that reads for ever must become that
//! input's error row, not the end of the run for every other input.
//!
//! Memory is counted where it grows with the input's distinct content: the profile's frames,
//! stacks, threads and rows ([`super::Profile`] charges each new one), which the readers'
//! caches follow. Time is the wall clock since the input was opened. Both are checked as the
//! input is read ([`Budget::check`], which every byte read through `input::Source` calls) and
//! as content is added, so a reader stops at its next read once a limit is passed; the
//! caller then names the limit from [`Budget::exceeded`].
//!
//! The budget of the input being read is the thread's current one ([`within`]): readers need
//! no parameter for it, and commands other than `--each` have none and pay one thread-local
//! look-up per new frame or stack.

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Which share an input went past.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exceeded {
    /// More than this many bytes of distinct content.
    Memory { limit: usize },
    /// Longer than this to read.
    Time { limit: Duration },
}

/// The limits of one input and what it has used.
#[derive(Debug)]
pub struct Budget {
    bytes: usize,
    deadline: Option<(Instant, Duration)>,
    used: AtomicUsize,
    /// Charges since the clock was last read: reading it on every new stack would cost more
    /// than interning the stack.
    charges: AtomicUsize,
    exceeded: OnceLock<Exceeded>,
}

/// The clock is read once per this many charges (and on every check).
const CHARGES_PER_CLOCK: usize = 4096;

impl Budget {
    /// A budget of `bytes` of distinct content and, when given, `time` from now.
    pub fn new(bytes: usize, time: Option<Duration>) -> Arc<Budget> {
        Arc::new(Budget {
            bytes,
            deadline: time.map(|t| (Instant::now() + t, t)),
            used: AtomicUsize::new(0),
            charges: AtomicUsize::new(0),
            exceeded: OnceLock::new(),
        })
    }

    /// Counts `bytes` of new distinct content.
    pub fn charge(&self, bytes: usize) {
        let used = self.used.fetch_add(bytes, Ordering::Relaxed) + bytes;
        if used > self.bytes {
            let _ = self.exceeded.set(Exceeded::Memory { limit: self.bytes });
        }
        if self.charges.fetch_add(1, Ordering::Relaxed) % CHARGES_PER_CLOCK == 0 {
            self.check_time();
        }
    }

    fn check_time(&self) {
        if let Some((deadline, limit)) = self.deadline
            && Instant::now() > deadline
        {
            let _ = self.exceeded.set(Exceeded::Time { limit });
        }
    }

    /// The limit passed, if any (the first one passed, when both are).
    pub fn exceeded(&self) -> Option<Exceeded> {
        self.check_time();
        self.exceeded.get().copied()
    }

    /// For readers: an I/O error once a limit is passed, so that the read stops there.
    pub fn check(&self) -> std::io::Result<()> {
        match self.exceeded() {
            None => Ok(()),
            Some(_) => Err(std::io::Error::other(
                "stopped: the input went past its share of memory or time",
            )),
        }
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<Budget>>> = const { RefCell::new(None) };
}

/// Runs `f` with `budget` as this thread's current one (restored after, also on a panic).
pub fn within<R>(budget: &Arc<Budget>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Arc<Budget>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            CURRENT.with(|c| *c.borrow_mut() = previous);
        }
    }
    let previous = CURRENT.with(|c| c.borrow_mut().replace(budget.clone()));
    let _restore = Restore(previous);
    f()
}

/// This thread's current budget: for a reader that reads on another thread.
pub fn current() -> Option<Arc<Budget>> {
    CURRENT.with(|c| c.borrow().clone())
}

/// Charges `bytes` of new distinct content to the current budget, if there is one.
pub fn charge(bytes: usize) {
    CURRENT.with(|c| {
        if let Some(b) = &*c.borrow() {
            b.charge(bytes);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_past_the_limit_is_exceeded_and_stops_reads() {
        let b = Budget::new(100, None);
        within(&b, || charge(60));
        assert_eq!(b.exceeded(), None);
        assert!(b.check().is_ok());
        within(&b, || charge(60));
        assert_eq!(b.exceeded(), Some(Exceeded::Memory { limit: 100 }));
        assert!(b.check().is_err());
        // outside `within` nothing is charged
        let other = Budget::new(100, None);
        within(&other, || {});
        charge(1000);
        assert_eq!(other.exceeded(), None);
        assert!(current().is_none());
    }

    #[test]
    fn time_past_the_deadline_is_exceeded() {
        let b = Budget::new(usize::MAX, Some(Duration::ZERO));
        std::thread::sleep(Duration::from_millis(2));
        assert_eq!(
            b.exceeded(),
            Some(Exceeded::Time {
                limit: Duration::ZERO
            })
        );
    }

    #[test]
    fn the_budget_is_restored_after_a_panic() {
        let b = Budget::new(10, None);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            within(&b, || panic!("reader bug"))
        }));
        assert!(r.is_err());
        assert!(current().is_none());
    }
}
