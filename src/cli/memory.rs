//! Memory before a bench: the estimate of each arm's peak (core's `footprint`), shown before
//! any work, and a config that will not fit this machine refused with the figure and the
//! longest T that fits, instead of a crash halfway.

use rdbench_core::context::BenchContext;
use rdbench_core::footprint::{self, Footprint};

/// Overrides the machine's available memory (bytes, or with a K, M or G suffix): for a
/// machine whose /proc/meminfo says more than a job may use (a Slurm allocation), and tests.
pub const LIMIT_VAR: &str = "RDBENCH_MEMORY_LIMIT";

/// Bytes from "123", "4G", "512M", "64k" (powers of 1024).
fn parse_bytes(text: &str) -> Option<u64> {
    let t = text.trim();
    let (num, mult) = match t.char_indices().last()? {
        (i, 'k' | 'K') => (&t[..i], 1u64 << 10),
        (i, 'm' | 'M') => (&t[..i], 1 << 20),
        (i, 'g' | 'G') => (&t[..i], 1 << 30),
        _ => (t, 1),
    };
    num.trim().parse::<u64>().ok().and_then(|n| n.checked_mul(mult)).filter(|&b| b > 0)
}

/// The memory this process may use: the override, else the kernel's MemAvailable (Linux);
/// None where neither is known (no check then).
fn limit() -> Result<Option<(u64, String)>, String> {
    if let Ok(v) = std::env::var(LIMIT_VAR) {
        return parse_bytes(&v).map(|b| Some((b, format!("the limit {LIMIT_VAR}={v}")))).ok_or_else(|| {
            format!("{LIMIT_VAR} must be a positive number of bytes, optionally with K, M or G (got {v:?})")
        });
    }
    let Ok(info) = std::fs::read_to_string("/proc/meminfo") else { return Ok(None) };
    let kb = info
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
    Ok(kb.map(|kb| (kb * 1024, "this machine's available memory".to_string())))
}

/// Estimate the bench on `threads` threads; refuse it when it will not fit.
pub fn check(bench: &BenchContext, threads: usize) -> Result<Footprint, String> {
    match limit()? {
        Some((bytes, what)) => footprint::check(bench, threads, bytes, false, &what).map_err(|too| {
            let flag = too.largest_seq_len.map(|t| format!(" (--seq-len {t})")).unwrap_or_default();
            format!("refused before any work: {}{flag}", too.message)
        }),
        None => Ok(Footprint::of(bench, threads)),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn byte_sizes_parse_with_suffixes() {
        assert_eq!(super::parse_bytes("123"), Some(123));
        assert_eq!(super::parse_bytes("4G"), Some(4 << 30));
        assert_eq!(super::parse_bytes(" 512m "), Some(512 << 20));
        assert_eq!(super::parse_bytes("0"), None);
        assert_eq!(super::parse_bytes("x"), None);
        assert_eq!(super::parse_bytes(""), None);
    }
}
