//! Ctrl-C and SIGTERM. The first one asks the bench to stop before its next training step
//! (the engine checks `Host::cancelled` before every step); the runs it finished are in the
//! journal already. A second one ends the process at once.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Exit code of an interrupted command (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: i32 = 130;

/// Install the handler (once per process).
pub fn install() -> Result<(), String> {
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            ctrlc::set_handler(|| {
                if INTERRUPTED.swap(true, Ordering::SeqCst) {
                    std::process::exit(EXIT_INTERRUPTED);
                }
                eprintln!("\ninterrupted: stopping before the next training step (again to quit at once)");
            })
            .map_err(|e| format!("cannot install the Ctrl-C handler: {e}"))
        })
        .clone()
}

/// Whether Ctrl-C or SIGTERM arrived.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}
