//! Text to config: one knob's text to its value, and a set of `(key, text)` pairs over the
//! defaults to a [`BenchConfig`] with every error collected.

use super::{BenchConfig, ConfigError, IntBound, KNOBS, Knob, KnobKind, knob};
use serde_json::{Map, Value, json};
use std::fmt;

pub(super) fn range_msg(lo: impl fmt::Display, hi: impl fmt::Display, got: impl fmt::Display) -> String {
    format!("must be between {lo} and {hi} (got {got})")
}

/// Parse one knob's text into its JSON value (range checks that need the track come later).
pub fn parse_value(k: &Knob, text: &str) -> Result<Value, String> {
    let t = text.trim();
    match k.kind {
        KnobKind::Int { min, max } => {
            let v: u64 = match t.parse() {
                Ok(v) => v,
                Err(_) => {
                    // "-3" is a whole number, only out of range: say the range it misses.
                    let digits = t.strip_prefix('-').unwrap_or(t);
                    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                        return Err(format!("must be a whole number (got {t:?})"));
                    }
                    if digits.bytes().any(|b| b != b'0') {
                        return Err(match max {
                            IntBound::Fixed(hi) => range_msg(min, hi, t),
                            _ if t.starts_with('-') => format!("must be at least {min} (got {t})"),
                            _ => format!("is too large (got {t})"),
                        });
                    }
                    0 // "-0"
                }
            };
            // Track-dependent upper bounds are checked in `problems`, which knows the track.
            match max {
                IntBound::Fixed(hi) if v < min || v > hi => Err(range_msg(min, hi, v)),
                _ if v < min => Err(format!("must be at least {min} (got {v})")),
                _ => Ok(json!(v)),
            }
        }
        KnobKind::Float { min, max } => {
            let v: f64 = t.parse().map_err(|_| format!("must be a number (got {t:?})"))?;
            let above = v.is_finite() && v > min;
            let below = max.is_none_or(|m| v < m);
            if !(above && below) {
                return Err(match max {
                    Some(m) => format!("must be above {min} and below {m} (got {t})"),
                    None => format!("must be a finite number above {min} (got {t})"),
                });
            }
            Ok(json!(v))
        }
        KnobKind::Choice(choices) => {
            let names: Vec<&str> = choices().iter().map(|c| c.0).collect();
            if names.contains(&t) {
                Ok(json!(t))
            } else {
                Err(format!("must be one of {} (got {t:?})", names.join(", ")))
            }
        }
        KnobKind::LrList { max_len } => {
            if t.is_empty() {
                return Err("the learning-rate list is empty".into());
            }
            // Every bad entry is named at once: a list with two typos is fixed in one go.
            let mut lrs: Vec<f64> = Vec::new();
            let mut bad: Vec<String> = Vec::new();
            for part in t.split(',').map(str::trim) {
                // Training is float32: an lr whose float32 is not normal is 0, subnormal or
                // infinite there. Huge finite ones are accepted: they are how divergence is
                // tested. The bounds are float32's own, as they print (3.4028235e38 rounds to
                // f32::MAX, though as an f64 it lies just above it).
                let Some(lr) = part.parse::<f64>().ok().filter(|v| v.is_finite() && *v > 0.0) else {
                    bad.push(format!("{part:?} is not a positive finite number"));
                    continue;
                };
                if !(lr as f32).is_normal() {
                    bad.push(format!(
                        "{part} is outside float32's normal range, {:e} to {:e} (training is float32)",
                        f32::MIN_POSITIVE,
                        f32::MAX
                    ));
                } else if let Some(same) = lrs.iter().find(|&&l| l == lr) {
                    bad.push(format!("{part} is listed twice (both are {same})"));
                } else {
                    lrs.push(lr);
                }
            }
            match bad.as_slice() {
                [] => {}
                [one] => return Err(format!("bad lr: {one}")),
                many => return Err(format!("{} bad lrs: {}", many.len(), many.join("; "))),
            }
            if lrs.len() > max_len {
                return Err(format!("at most {max_len} learning rates (got {})", lrs.len()));
            }
            Ok(json!(lrs))
        }
    }
}

/// The canonical text of a knob's value (what the page's URL and controls show).
pub fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => a.iter().map(value_text).collect::<Vec<_>>().join(","),
        Value::Number(n) => match (n.as_u64(), n.as_f64()) {
            (Some(u), _) => u.to_string(),
            (None, Some(f)) => format!("{f}"),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

/// Parse `(key, text)` pairs over the defaults into a config, collecting every error: an
/// unknown key, a text that does not parse, a value out of range (limits that depend on the
/// track use the configured track). Later pairs override earlier ones.
pub fn parse_texts<K: AsRef<str>, T: AsRef<str>>(
    pairs: impl IntoIterator<Item = (K, T)>,
) -> Result<BenchConfig, Vec<ConfigError>> {
    let mut values = Map::new();
    for k in KNOBS {
        values.insert(k.key.into(), parse_value(k, k.default).expect("knob defaults parse"));
    }
    let mut errors: Vec<ConfigError> = Vec::new();
    for (key, text) in pairs {
        let (key, text) = (key.as_ref(), text.as_ref());
        errors.retain(|e| e.field != key);
        match knob(key) {
            None => errors.push(ConfigError::new(key, "unknown setting")),
            Some(k) => match parse_value(k, text) {
                Ok(v) => {
                    values.insert(k.key.into(), v);
                }
                Err(m) => errors.push(ConfigError::new(key, m)),
            },
        }
    }
    // Fields that failed keep their defaults, so the checks that need the whole config (the
    // track's limits) still run and every problem is reported at once.
    let cfg = serde_json::from_value::<BenchConfig>(Value::Object(values))
        .map_err(|e| vec![ConfigError::new("(config)", format!("does not fit the config: {e}"))])?
        .for_new_bench();
    for e in cfg.problems() {
        if !errors.iter().any(|x| x.field == e.field) {
            errors.push(e);
        }
    }
    if errors.is_empty() { Ok(cfg) } else { Err(errors) }
}

/// What the page's `parse_config` returns for `{key: text}`: the config (when valid), every
/// error, and the canonical text of every knob (the URL hash).
pub fn parse_page_texts(texts: &Map<String, Value>) -> Value {
    let pairs: Vec<(String, String)> =
        texts.iter().map(|(k, v)| (k.clone(), v.as_str().map_or_else(|| value_text(v), str::to_string))).collect();
    match parse_texts(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()))) {
        Ok(cfg) => {
            let v = serde_json::to_value(&cfg).expect("config serialises");
            let mut canon: Map<String, Value> =
                KNOBS.iter().map(|k| (k.key.into(), json!(value_text(&v[k.key])))).collect();
            // A training size left at 0 stays 0 in the form and the URL (the track's default
            // follows the track and T), though the config holds the count it resolved to.
            if pairs.iter().rev().find(|(k, _)| k == "train_size").is_none_or(|(_, t)| t.trim() == "0") {
                canon.insert("train_size".into(), json!("0"));
            }
            json!({"config": v, "errors": [], "texts": canon})
        }
        Err(errors) => {
            // Texts as typed for the fields with errors, canonical defaults elsewhere.
            let mut canon = Map::new();
            for k in KNOBS {
                let typed = pairs.iter().rev().find(|(key, _)| key == k.key).map(|(_, t)| t.clone());
                canon.insert(k.key.into(), json!(typed.unwrap_or_else(|| k.default.to_string())));
            }
            json!({"config": null, "errors": errors, "texts": canon})
        }
    }
}
