//! The run hash: which computation a run is, beyond its arm, phase, lr, seed and backend.
//! It hashes exactly the knobs the table marks `run`, so a knob added to the table is in the
//! hash when it changes a run's numbers, and a resumed bench cannot reuse a stale run.

use super::{BenchConfig, KNOBS};

impl BenchConfig {
    /// A short hash of the knobs that change a single run's numbers ([`super::Knob::run`]).
    /// Two runs with equal arm, phase, lr, seed, backend and `run_hash` are the same
    /// computation, so a resumed bench may reuse one.
    pub fn run_hash(&self) -> String {
        self.run_hash_of(&|_| true)
    }

    /// The run hash over the `run` knobs for which `named` holds: a report written before a
    /// knob existed hashed without it, so its runs' hashes are recomputed from the knobs its
    /// config names.
    pub fn run_hash_of(&self, named: &dyn Fn(&str) -> bool) -> String {
        let mut v = serde_json::to_value(self).expect("config serialises");
        // The length as it runs (0 and the track's default are one computation). At the
        // track's default it is left out, so runs at the default length keep the hashes
        // they had before the length was a knob (their journals and reports stay valid).
        let default_len = crate::track::entry(&self.track).map(|e| e.seq_lens.default);
        let len = self.resolved_seq_len();
        v["seq_len"] = serde_json::json!(len.unwrap_or(self.seq_len));
        // The forgetting cap changes only a model with an information buffer: left out for
        // the others, so their runs keep the hashes they had before the cap was a knob.
        let buffered = crate::models::info(&self.model).is_some_and(|m| m.info_buffer);
        let fields: Vec<(&str, &serde_json::Value)> = KNOBS
            .iter()
            .filter(|k| k.run && named(k.key) && !(k.key == "seq_len" && len.is_some() && len == default_len))
            .filter(|k| k.key != "forget_bits" || buffered)
            .map(|k| (k.key, &v[k.key]))
            .collect();
        // FNV-1a 64: stable across platforms and builds (std's hasher is not).
        let hash = serde_json::to_string(&fields)
            .expect("values serialise")
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3));
        format!("{hash:016x}")
    }
}

#[cfg(test)]
mod tests {
    use super::super::{KNOBS, KnobKind};
    use super::BenchConfig;
    use serde_json::{Value, json};

    /// The default config with knob `key` set to another value of its type (not validated:
    /// the hash is a function of the values, whatever they are).
    fn with_another(key: &str) -> BenchConfig {
        let mut v = serde_json::to_value(BenchConfig::default()).unwrap();
        v[key] = match &v[key] {
            Value::Number(n) if n.is_u64() => json!(n.as_u64().unwrap() + 2),
            Value::Number(n) => json!(n.as_f64().unwrap() * 0.5),
            // Another choice where the knob has one; else a name only this test uses.
            Value::String(s) => match super::super::knob(key).map(|k| k.kind) {
                Some(KnobKind::Choice(choices)) => {
                    json!(choices().iter().map(|c| c.0).find(|c| c != s).map_or(format!("{s}_other"), String::from))
                }
                _ => json!(format!("{s}_other")),
            },
            Value::Array(_) => json!([0.02, 0.2]),
            other => panic!("{key}: no other value for {other}"),
        };
        serde_json::from_value(v).unwrap()
    }

    /// The track's default length hashes as 0 does, and as a config from before the length
    /// was a knob did (its hash, computed then, is pinned here); any other length changes it.
    #[test]
    fn the_default_length_keeps_the_hash() {
        let base = BenchConfig::default();
        assert_eq!(base.run_hash(), "33a5d60ab0c4e16e");
        assert_eq!(BenchConfig { seq_len: 80, ..base.clone() }.run_hash(), base.run_hash());
        assert_ne!(BenchConfig { seq_len: 81, ..base.clone() }.run_hash(), base.run_hash());
        let mnist = BenchConfig { track: "mnist1d".into(), ..base.clone() };
        assert_eq!(mnist.run_hash(), "5864424129811542");
        assert_eq!(BenchConfig { seq_len: 40, ..mnist.clone() }.run_hash(), mnist.run_hash());
        assert_ne!(BenchConfig { seq_len: 80, ..mnist.clone() }.run_hash(), mnist.run_hash());
    }

    /// Changing a knob the table marks `run` changes the hash; changing any other does not.
    #[test]
    fn the_hash_follows_the_table() {
        let base = BenchConfig::default().run_hash();
        for k in KNOBS.iter().filter(|k| k.key != "forget_bits") {
            let cfg = with_another(k.key);
            assert_ne!(cfg, BenchConfig::default(), "{}: the test changed nothing", k.key);
            assert_eq!(cfg.run_hash() != base, k.run, "{}: run = {}, but the hash says otherwise", k.key, k.run);
        }
        // The forgetting cap changes the runs of a model with an information buffer only.
        let cap = |model: &str, bits: usize| {
            BenchConfig { model: model.into(), forget_bits: bits, ..BenchConfig::default() }.run_hash()
        };
        assert_ne!(cap("rev_gru", 3), cap("rev_gru", 5));
        assert_eq!(cap("rnn_small", 3), cap("rnn_small", 5));
        assert_eq!(cap("rnn_small", 5), base);
    }
}
