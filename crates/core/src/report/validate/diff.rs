//! Where a file's JSON differs from a rebuilt value, path by path.

use serde_json::Value;

/// A typed block as JSON, to compare it path by path.
pub(super) fn json<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).expect("a report block serialises")
}

/// A typed value as it reads in the file (`null`, `0.5`, `[0.1, 0.2]`), for a message.
pub(super) fn shown<T: serde::Serialize>(v: &T) -> String {
    show(&json(v))
}

/// A short rendering of a value for a message.
pub(super) fn show(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() <= 80 { s } else { format!("{}…", s.chars().take(79).collect::<String>()) }
}

/// Every path under `path` where `file` differs from `rebuilt`, with both values. A key the
/// file does not have is no claim of the file (an older report, or an optional field) and is
/// skipped; a key only the file has is listed. Numbers compare as the f64 they stand for, so
/// `1`, `1.0` and `1e0` are the same number; the bench writes every float in its shortest
/// round-trip form, so nothing else needs a tolerance.
pub(super) fn differences(file: &Value, rebuilt: &Value, path: &str, out: &mut Vec<(String, String)>) {
    match (file, rebuilt) {
        (Value::Object(f), Value::Object(r)) => {
            for (k, fv) in f {
                let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                match r.get(k) {
                    Some(rv) => differences(fv, rv, &p, out),
                    None => out.push((p, "the rebuilt report has no such key".into())),
                }
            }
        }
        (Value::Array(f), Value::Array(r)) if f.len() != r.len() => {
            out.push((path.into(), format!("{} items in the file, {} rebuilt", f.len(), r.len())));
        }
        (Value::Array(f), Value::Array(r)) => {
            for (i, (fv, rv)) in f.iter().zip(r).enumerate() {
                differences(fv, rv, &format!("{path}[{i}]"), out);
            }
        }
        (Value::Number(f), Value::Number(r)) if f.as_f64() == r.as_f64() => {}
        (f, r) if f == r => {}
        (f, r) => out.push((path.into(), format!("{} in the file, {} rebuilt", show(f), show(r)))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_each_differing_path_and_skips_what_the_file_lacks() {
        let file = json!({"a": 1, "b": {"c": [1.0, 2, 3]}, "d": "x", "e": true});
        let rebuilt = json!({"a": 1.0, "b": {"c": [1, 2.5, 3]}, "d": "y", "f": 7});
        let mut out = Vec::new();
        differences(&file, &rebuilt, "", &mut out);
        let paths: Vec<&str> = out.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["b.c[1]", "d", "e"]);
        assert_eq!(out[0].1, "2 in the file, 2.5 rebuilt");
        let mut out = Vec::new();
        differences(&json!([1, 2]), &json!([1]), "runs", &mut out);
        assert_eq!(out, [("runs".to_string(), "2 items in the file, 1 rebuilt".to_string())]);
    }
}
