//! The config table, parser and schema, end to end.

use super::*;

#[test]
fn every_field_is_a_knob_and_every_knob_a_field() {
    let v = serde_json::to_value(BenchConfig::default()).unwrap();
    let mut fields: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    let mut keys: Vec<&str> = KNOBS.iter().map(|k| k.key).collect();
    fields.sort();
    keys.sort();
    assert_eq!(fields, keys);
    let mut flags: Vec<&str> = KNOBS.iter().map(|k| k.flag).collect();
    flags.sort();
    flags.dedup();
    assert_eq!(flags.len(), KNOBS.len(), "two knobs share a flag");
}

#[test]
fn defaults_are_the_spec_defaults() {
    let want = BenchConfig {
        track: "dynamics".into(),
        model: "rnn_small".into(),
        n_seeds: 8,
        n_sweep_seeds: 3,
        lrs: vec![0.001, 0.003, 0.01],
        epochs: 15,
        batch_size: 32,
        hidden_size: 32,
        tau: 0.08,
        k_max: 16,
        policy: Policy::OneStep,
        reversal_iters: 20,
        data_seed: 0,
        alpha: 0.05,
        permutations: 10_000,
        bootstrap_resamples: 10_000,
        rank_r0: 2,
        rank_max: 8,
        forget_bits: 3,
        enrich_window: 5,
        enrich_threshold: 0.05,
        train_size: 0,
        seq_len: 0,
    };
    assert_eq!(BenchConfig::default(), want);
}

#[test]
fn every_error_is_reported_with_its_field() {
    let errs = parse_texts([("lrs", "0.01,-1"), ("n_seeds", "100"), ("k_max", "81"), ("bogus", "1"), ("tau", "x")])
        .unwrap_err();
    let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["lrs", "n_seeds", "bogus", "tau", "k_max"], "{errs:?}");
    assert!(errs[0].message.contains("-1"));
    assert!(errs[1].message.contains("between 1 and 64"));
    assert!(errs[4].message.contains("between 2 and 80"), "{errs:?}");
    assert_eq!(errs[1].flag(), "--seeds");
    assert_eq!(errs[1].to_string(), "n_seeds (--seeds): must be between 1 and 64 (got 100)");
}

#[test]
fn a_later_text_overrides_an_earlier_error() {
    let cfg = parse_texts([("n_seeds", "0"), ("n_seeds", "12")]).unwrap();
    assert_eq!(cfg.n_seeds, 12);
}

#[test]
fn edge_values() {
    for (key, bad) in [
        ("n_seeds", "1.5"),
        ("n_seeds", "-3"),
        ("lrs", ""),
        ("lrs", "NaN"),
        ("lrs", "inf"),
        ("lrs", "0.01,0.01"),
        ("lrs", "0.01,1e-2"),
        // 0, subnormal and infinite in float32, which training runs in.
        ("lrs", "1e-320"),
        ("lrs", "1e-39"),
        ("lrs", "0.01,1e39"),
        ("lrs", "3.4028236e38"),
        ("lrs", "1.1754942e-38"),
        ("tau", "0"),
        ("tau", "inf"),
        ("alpha", "1"),
        ("batch_size", "321"),
        ("policy", "greedy"),
        ("model", "transformer"),
        ("track", "mnist"),
        ("data_seed", "9007199254740992"),
    ] {
        let errs = parse_texts([(key, bad)]).expect_err(bad);
        assert_eq!(errs[0].field, key, "{bad}: {errs:?}");
    }
    let ok = parse_texts([("batch_size", "320"), ("k_max", "80"), ("lrs", " 0.5 , 2 "), ("alpha", "0.999")]);
    assert_eq!(ok.unwrap().lrs, vec![0.5, 2.0]);
    assert_eq!(parse_texts([("lrs", "1.2e-38,1e30")]).unwrap().lrs, vec![1.2e-38, 1e30]);
    // float32's bounds as they print (the message's) are accepted: each rounds to a normal float32.
    assert_eq!(parse_texts([("lrs", "1.1754944e-38,3.4028235e38")]).unwrap().lrs, vec![1.1754944e-38, 3.4028235e38]);
    let errs = parse_texts([("lrs", "0.01,1e-2")]).unwrap_err();
    assert_eq!(errs[0].message, "bad lr: 1e-2 is listed twice (both are 0.01)");
    // The lr is named as typed, not as a 320-digit decimal.
    let errs = parse_texts([("lrs", "1e-320")]).unwrap_err();
    assert_eq!(
        errs[0].message,
        "bad lr: 1e-320 is outside float32's normal range, 1.1754944e-38 to 3.4028235e38 (training is float32)"
    );
    // Every bad entry is named at once, in the order typed.
    let errs = parse_texts([("lrs", "0, 0.01, -1, abc, 0.010")]).unwrap_err();
    assert_eq!(
        errs[0].message,
        "4 bad lrs: \"0\" is not a positive finite number; \"-1\" is not a positive finite number; \
         \"abc\" is not a positive finite number; 0.010 is listed twice (both are 0.01)"
    );
}

#[test]
fn a_negative_or_huge_whole_number_is_told_its_range_not_that_it_is_no_whole_number() {
    let msg = |key: &str, text: &str| parse_texts([(key, text)]).unwrap_err()[0].message.clone();
    assert_eq!(msg("n_seeds", "-3"), "must be between 1 and 64 (got -3)");
    assert_eq!(msg("n_seeds", "99999999999999999999999"), "must be between 1 and 64 (got 99999999999999999999999)");
    // A bound that depends on the track: the lower bound, or "too large".
    assert_eq!(msg("batch_size", "-3"), "must be at least 1 (got -3)");
    assert_eq!(msg("batch_size", "99999999999999999999999"), "is too large (got 99999999999999999999999)");
    for text in ["1.5", "abc", "-", "", "--3", "3-"] {
        assert_eq!(msg("n_seeds", text), format!("must be a whole number (got {text:?})"));
    }
    assert_eq!(parse_texts([("data_seed", "-0")]).unwrap().data_seed, 0);
}

#[test]
fn texts_round_trip() {
    let cfg = parse_texts([("lrs", "0.0003,0.1"), ("tau", "0.0125"), ("policy", "chained")]).unwrap();
    let v = serde_json::to_value(&cfg).unwrap();
    let texts: Vec<(String, String)> = KNOBS.iter().map(|k| (k.key.to_string(), value_text(&v[k.key]))).collect();
    assert_eq!(parse_texts(texts).unwrap(), cfg);
    let page = parse_page_texts(&serde_json::from_str(r#"{"tau": "0.0125", "n_seeds": "x"}"#).unwrap());
    assert!(page["config"].is_null());
    assert_eq!(page["errors"][0]["field"], "n_seeds");
    assert_eq!(page["texts"]["n_seeds"], "x");
    assert_eq!(page["texts"]["lrs"], "0.001,0.003,0.01");
}

#[test]
fn schema_lists_every_knob_with_resolved_limits_and_valid_presets() {
    let s = schema();
    let knobs = s["knobs"].as_array().unwrap();
    assert_eq!(knobs.len(), KNOBS.len());
    let k_max = knobs.iter().find(|k| k["key"] == "k_max").unwrap();
    assert_eq!(k_max["max"], 80);
    assert_eq!(k_max["default"], 16);
    let policy = knobs.iter().find(|k| k["key"] == "policy").unwrap();
    assert_eq!(policy["choices"][1]["value"], "chained");
    assert_eq!(s["presets"][0]["config"]["n_seeds"], 4);
    assert_eq!(s["presets"][1]["config"], s["defaults"]);
}

#[test]
fn model_limits_across_fields() {
    let errs = parse_texts([("model", "rev_ode_small"), ("hidden_size", "33")]).unwrap_err();
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].field, "hidden_size");
    assert!(errs[0].message.contains("must be even (got 33)"), "{errs:?}");
    // The GRU takes any hidden size in range.
    assert!(parse_texts([("hidden_size", "33")]).is_ok());
    assert!(parse_texts([("model", "rev_ode_small"), ("hidden_size", "34")]).is_ok());
    // rev_ode_small's rank is at most H/2 (each half is H/2 wide); the GRU ignores the rank.
    let errs = parse_texts([("model", "rev_ode_small"), ("hidden_size", "8"), ("rank_max", "64")]).unwrap_err();
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(
        errs[0].to_string(),
        "rank_max (--r-max): rev_ode_small maps each half of h (hidden_size / 2 = 4) through rank r_max: \
         r_max must be at most 4 (got 64)"
    );
    assert!(
        parse_texts([("model", "rev_ode_small"), ("hidden_size", "8"), ("rank_max", "4"), ("rank_r0", "2")]).is_ok()
    );
    assert!(parse_texts([("hidden_size", "8"), ("rank_max", "64")]).is_ok());
    let errs = parse_texts([("rank_r0", "5"), ("rank_max", "4")]).unwrap_err();
    assert_eq!(errs[0].field, "rank_r0");
    assert_eq!(errs[0].to_string(), "rank_r0 (--r0): must not exceed r_max (got r0 5 > r_max 4)");
}

#[test]
fn a_config_without_the_rank_knobs_reads_with_their_defaults() {
    let mut v = serde_json::to_value(BenchConfig::default()).unwrap();
    for k in ["rank_r0", "rank_max", "enrich_window", "enrich_threshold"] {
        v.as_object_mut().unwrap().remove(k);
    }
    let cfg: BenchConfig = serde_json::from_value(v).unwrap();
    assert_eq!(cfg, BenchConfig::default());
}

#[test]
fn the_tracks_limits_follow_the_configured_track_and_train_size() {
    use crate::track::Track;
    // mnist1d seeds numpy's MT19937: 32 bits; dynamics takes any seed a page carries exactly.
    let errs = parse_texts([("track", "mnist1d"), ("data_seed", "4294967296")]).unwrap_err();
    assert_eq!(
        errs[0].to_string(),
        "data_seed (--data-seed): must be between 0 and 4294967295 (got 4294967296): the mnist1d track's limit"
    );
    assert!(parse_texts([("track", "mnist1d"), ("data_seed", "4294967295")]).is_ok());
    assert!(parse_texts([("data_seed", "4294967296")]).is_ok());
    // train_size: 0 (the track's default) or 5 up to the sequences the track generates.
    let errs = parse_texts([("train_size", "401")]).unwrap_err();
    assert_eq!(
        errs[0].to_string(),
        "train_size (--train-size): must be between 0 and 400 (got 401): the dynamics track's limit"
    );
    assert!(parse_texts([("track", "mnist1d"), ("train_size", "4000")]).is_ok());
    let errs = parse_texts([("train_size", "3")]).unwrap_err();
    assert!(errs[0].message.contains("0 (the track's default) or at least 5"), "{errs:?}");
    // The batch must fit the sweep's share (the first four fifths) of the train sequences.
    let errs = parse_texts([("train_size", "100"), ("batch_size", "81")]).unwrap_err();
    assert_eq!((errs[0].field.as_str(), errs[0].message.as_str()), ("batch_size", "must be between 1 and 80 (got 81)"));
    assert!(parse_texts([("track", "mnist1d"), ("batch_size", "800")]).is_ok(), "mnist1d's default 1000: 800 fit");
    // k_max is at most the track's T (40 for mnist1d).
    let errs = parse_texts([("track", "mnist1d"), ("k_max", "41")]).unwrap_err();
    assert_eq!(errs[0].field, "k_max");
    let cfg = parse_texts([("track", "mnist1d")]).unwrap();
    let n = cfg.resolve().unwrap().train_sequences;
    assert_eq!((cfg.train_size, n), (0, crate::track::Mnist1d::default().default_train()));
    assert_eq!(BenchConfig::default().resolve().unwrap().train_sequences, 400);
}

/// `seq_len` 0 is each track's default T; another length is the track's T, within the
/// track's range, and the knobs bounded by T follow it (the message says why).
#[test]
fn the_length_is_a_knob_with_each_tracks_default_and_range() {
    for (track, default) in [("dynamics", 80), ("mnist1d", 40), ("adding", 200)] {
        let cfg = parse_texts([("track", track)]).unwrap();
        let ctx = cfg.resolve().unwrap();
        assert_eq!((cfg.seq_len, ctx.seq_len, ctx.track.seq_len()), (0, default, default), "{track}");
        let long = parse_texts([("track", track), ("seq_len", "10000")]).unwrap();
        assert_eq!(long.resolve().unwrap().track.seq_len(), 10_000, "{track}: the range reaches 10,000");
        let errs = parse_texts([("track", track), ("seq_len", "20001")]).unwrap_err();
        assert_eq!(errs[0].field, "seq_len");
        assert!(errs[0].message.contains(&format!("the {track} track's limit")), "{errs:?}");
    }
    let errs = parse_texts([("track", "adding"), ("seq_len", "1")]).unwrap_err();
    assert_eq!(errs[0].field, "seq_len");
    assert!(errs[0].message.contains("between 2 and 20000"), "{errs:?}");
    // k_max follows T: 16 does not fit T = 10, and the message names T.
    let errs = parse_texts([("seq_len", "10")]).unwrap_err();
    assert_eq!(errs[0].field, "k_max");
    assert!(errs[0].message.contains("at most the sequence length T = 10"), "{errs:?}");
    assert!(parse_texts([("seq_len", "1000"), ("k_max", "500")]).is_ok(), "k_max up to T = 1000");
    // The CLI names the flag.
    assert_eq!(ConfigError::new("seq_len", "x").flag(), "--seq-len");
}

#[test]
fn a_config_without_seq_len_reads_as_the_tracks_default() {
    let mut v = serde_json::to_value(BenchConfig::default()).unwrap();
    v.as_object_mut().unwrap().remove("seq_len");
    let cfg: BenchConfig = serde_json::from_value(v).unwrap();
    assert_eq!(cfg, BenchConfig::default());
}

#[test]
fn a_config_without_train_size_reads_as_the_tracks_default() {
    let mut v = serde_json::to_value(BenchConfig::default()).unwrap();
    v.as_object_mut().unwrap().remove("train_size");
    let cfg: BenchConfig = serde_json::from_value(v).unwrap();
    assert_eq!(cfg, BenchConfig::default());
}

/// A new adding bench that leaves `train_size` at 0 gets the count whose steps let the
/// baseline learn (3200 up to T = 200, 4800 above), written into its config; a stored config
/// that says 0 keeps the 200 it meant when it was written; the other tracks keep 0; the form
/// and the URL keep showing 0.
#[test]
fn a_new_adding_bench_gets_its_learning_count_and_a_stored_zero_keeps_its_meaning() {
    for (t, n) in [("0", 3200), ("200", 3200), ("201", 4800), ("1000", 4800)] {
        let cfg = parse_texts([("track", "adding"), ("seq_len", t)]).unwrap();
        assert_eq!((cfg.train_size, cfg.resolve().unwrap().train_sequences), (n, n), "T = {t}");
    }
    assert_eq!(parse_texts([("track", "adding"), ("train_size", "0")]).unwrap().train_size, 3200);
    assert_eq!(parse_texts([("track", "adding"), ("train_size", "500")]).unwrap().train_size, 500);
    assert_eq!(parse_texts([("track", "mnist1d")]).unwrap().train_size, 0);
    let stored = BenchConfig { track: "adding".into(), ..BenchConfig::default() };
    assert_eq!((stored.train_size, stored.resolve().unwrap().train_sequences), (0, 200));
    let page = parse_page_texts(&serde_json::from_value(serde_json::json!({"track": "adding"})).unwrap());
    assert_eq!((page["config"]["train_size"].as_u64(), page["texts"]["train_size"].as_str()), (Some(3200), Some("0")));
    let typed =
        parse_page_texts(&serde_json::from_value(serde_json::json!({"track": "adding", "train_size": "640"})).unwrap());
    assert_eq!(typed["texts"]["train_size"], "640");
    // The Long sequences preset: adding at T = 1000 on 4800 sequences, its form showing 0.
    let long = schema()["presets"].as_array().unwrap().iter().find(|p| p["name"] == "long").unwrap().clone();
    assert_eq!((long["config"]["seq_len"].as_u64(), long["config"]["train_size"].as_u64()), (Some(1000), Some(4800)));
    assert_eq!(long["texts"]["train_size"], "0");
    // The study's adding benches are new benches too.
    let benches = crate::study::bench_configs(&BenchConfig::default(), &["adding".to_string()]).unwrap();
    assert!(
        benches.iter().all(|b| b.train_size == 3200),
        "{:?}",
        benches.iter().map(|b| b.train_size).collect::<Vec<_>>()
    );
}
