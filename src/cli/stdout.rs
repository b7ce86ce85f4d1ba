//! Standard output that a closed pipe does not break: `rdbench run … | head -1` ends the
//! reader, not the command (a plain `println!` panics on the broken pipe). After the first
//! write that fails, nothing more is printed; the work goes on.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

static CLOSED: AtomicBool = AtomicBool::new(false);

/// Write `args` to stdout, unless stdout is closed.
pub fn write(args: std::fmt::Arguments) {
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    if out.write_fmt(args).and_then(|_| out.flush()).is_err() {
        CLOSED.store(true, Ordering::Relaxed);
    }
}

/// `print!` to a stdout that may be a closed pipe.
#[macro_export]
macro_rules! out {
    ($($t:tt)*) => { $crate::cli::stdout::write(format_args!($($t)*)) };
}

/// `println!` to a stdout that may be a closed pipe.
#[macro_export]
macro_rules! outln {
    () => { $crate::cli::stdout::write(format_args!("\n")) };
    ($($t:tt)*) => { $crate::cli::stdout::write(format_args!("{}\n", format_args!($($t)*))) };
}
