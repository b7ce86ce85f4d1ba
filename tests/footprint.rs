//! The memory estimate before a bench against what the bench then measures: `rdbench run`
//! prints the whole process's peak heap (its counting allocator) beside the estimate made
//! before any work. The estimate must not be below what ran by more than the allocator's
//! transients, nor so far above it that it refuses what fits.

use std::process::Command;

/// (measured, estimated) bytes from `run`'s "peak memory: X measured …, Y estimated" line.
fn peaks(args: &[&str]) -> (f64, f64) {
    let dir = std::env::temp_dir().join(format!("rdbench-footprint-{}-{}", std::process::id(), args.join("_")));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("r.json");
    let mut full = vec!["run", "--quiet", "--threads", "1", "--out", out.to_str().unwrap()];
    full.extend_from_slice(args);
    let o = Command::new(env!("CARGO_BIN_EXE_rdbench")).args(&full).output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let line = stdout.lines().find(|l| l.starts_with("peak memory:")).unwrap_or_else(|| panic!("{stdout}"));
    let bytes = |s: &str| -> f64 {
        let mut it = s.split_whitespace();
        let v: f64 = it.next().unwrap().parse().unwrap();
        v * match it.next().unwrap() {
            "GB" => 1e9,
            "MB" => 1e6,
            "kB" => 1e3,
            _ => 1.0,
        }
    };
    let measured = bytes(line.trim_start_matches("peak memory:").trim());
    let estimated = bytes(line.split("), ").nth(1).unwrap());
    std::fs::remove_dir_all(&dir).ok();
    (measured, estimated)
}

#[test]
fn the_estimate_brackets_the_measured_peak_as_the_length_grows() {
    let small: Vec<&str> =
        "--seeds 2 --sweep-seeds 1 --lrs 0.01 --epochs 1 --hidden 8 --k-max 4".split_whitespace().collect();
    let small = &small;
    // rev_gru: its information buffer (T / 8 words at 3 bits) is held besides the checkpoints.
    // The adding problem on 40 of its train sequences: the probes at long T (every schedule
    // of the frontier) stay seconds, and its states still dominate the peak.
    let cases = [
        ("adding", "1000", "rnn_small", "40"),
        ("adding", "2000", "rnn_small", "40"),
        ("dynamics", "1000", "rnn_small", "0"),
        ("dynamics", "1000", "rev_gru", "0"),
    ];
    // Each bench is a process of one thread: two at a time.
    let results: Vec<(String, f64, f64)> = cases
        .chunks(2)
        .flat_map(|pair| {
            std::thread::scope(|s| {
                let handles: Vec<_> = pair
                    .iter()
                    .map(|&(track, t, model, train)| {
                        s.spawn(move || {
                            let mut args =
                                vec!["--track", track, "--seq-len", t, "--model", model, "--train-size", train];
                            args.extend_from_slice(small);
                            let (measured, estimated) = peaks(&args);
                            (format!("{track} T = {t}, {model}"), measured, estimated)
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect::<Vec<_>>()
            })
        })
        .collect();
    for (what, measured, estimated) in results {
        println!("{what}: measured {measured:.3e} B, estimated {estimated:.3e} B");
        assert!(estimated >= 0.8 * measured, "{what}: estimate {estimated} far below the measured {measured}");
        assert!(estimated <= 4.0 * measured, "{what}: estimate {estimated} far above the measured {measured}");
    }
}
