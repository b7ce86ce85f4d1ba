//! What the page builds its form from: every knob with its limits resolved, the presets and
//! the defaults, as JSON.

use super::{BenchConfig, KNOBS, KnobKind, parse_page_texts, parse_texts};
use serde_json::{Value, json};

/// A named starting point of the page: overrides of the defaults, as texts.
pub struct Preset {
    /// Key (`quick`).
    pub name: &'static str,
    /// Button label.
    pub label: &'static str,
    /// What it is for.
    pub help: &'static str,
    /// `(key, text)` overrides.
    pub overrides: &'static [(&'static str, &'static str)],
}

/// The page's presets.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "quick",
        label: "Quick look",
        help: "A small bench that finishes in well under a minute on a laptop CPU.",
        overrides: &[
            ("n_seeds", "4"),
            ("n_sweep_seeds", "1"),
            ("lrs", "0.003,0.01"),
            ("epochs", "3"),
            ("hidden_size", "16"),
        ],
    },
    Preset {
        name: "seed",
        label: "Seed protocol",
        help: "The spec's defaults: 8 paired seeds, 3 lrs x 3 sweep seeds, 15 epochs.",
        overrides: &[],
    },
    Preset {
        name: "mnist1d",
        label: "MNIST-1D protocol",
        help: "The defaults on the mnist1d track: classify MNIST-1D sequences from the last hidden \
               state, test accuracy (higher is better), the track's default training set.",
        overrides: &[("track", "mnist1d")],
    },
    Preset {
        name: "long",
        label: "Long sequences",
        help: "The adding problem at T = 1000, where dense BPTT's memory matters, under a protocol \
               whose GRU baseline learns it: the track's 4800 training sequences x 15 epochs \
               (2250 optimizer steps a full run; the baseline leaves the trivial plateau after \
               about 700), lr 0.01, 4 paired seeds. Tens of minutes on a laptop CPU.",
        overrides: &[
            ("track", "adding"),
            ("seq_len", "1000"),
            ("n_seeds", "4"),
            ("n_sweep_seeds", "1"),
            ("lrs", "0.01"),
        ],
    },
];

/// The page's schema: knobs, presets and defaults as JSON (served by the charts wasm).
pub fn schema() -> Value {
    let defaults = serde_json::to_value(BenchConfig::default()).expect("config serialises");
    let (entry, default_track) = BenchConfig::default().track_for_checks().expect("default track");
    let knobs: Vec<Value> = KNOBS
        .iter()
        .map(|k| {
            let mut o = json!({
                "key": k.key, "label": k.label, "help": k.help, "unit": k.unit,
                "default": defaults[k.key], "flag": k.flag, "slider": k.slider, "advanced": k.advanced,
                "min": null, "max": null, "min_exclusive": false, "max_exclusive": false,
            });
            match k.kind {
                KnobKind::Int { min, max } => {
                    o["kind"] = json!("int");
                    o["min"] = json!(min);
                    o["max"] = json!(max.resolve(entry, &*default_track, 0));
                }
                KnobKind::Float { min, max } => {
                    o["kind"] = json!("float");
                    o["min"] = json!(min);
                    o["min_exclusive"] = json!(true);
                    o["max"] = json!(max);
                    o["max_exclusive"] = json!(max.is_some());
                }
                KnobKind::Choice(choices) => {
                    o["kind"] = json!("choice");
                    o["choices"] =
                        choices().iter().map(|(value, label)| json!({"value": value, "label": label})).collect();
                }
                KnobKind::LrList { max_len } => {
                    o["kind"] = json!("lr_list");
                    o["min"] = json!(0.0);
                    o["min_exclusive"] = json!(true);
                    o["max_len"] = json!(max_len);
                }
            }
            o
        })
        .collect();
    let presets: Vec<Value> = PRESETS
        .iter()
        .map(|p| {
            let cfg = parse_texts(p.overrides.iter().copied()).expect("presets are valid");
            // The form shows the texts (a training size left at 0 stays 0 there, so it follows
            // the track and T); the config is what they parse to.
            let overrides: serde_json::Map<String, Value> =
                p.overrides.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
            let texts = parse_page_texts(&overrides)["texts"].clone();
            json!({"name": p.name, "label": p.label, "help": p.help, "config": cfg, "texts": texts})
        })
        .collect();
    json!({"knobs": knobs, "presets": presets, "defaults": defaults})
}
