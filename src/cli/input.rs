//! Every file a command reads (a report, a plan, a run record, a journal) is read here: at
//! most [`MAX_REPORT_BYTES`] (a larger file, or `/dev/zero`, is refused without reading it
//! to the end), as UTF-8, less a leading byte-order mark.

use rdbench_core::report::{MAX_REPORT_BYTES, without_bom};
use std::io::Read;
use std::path::Path;

/// The bytes of the file at `path`, within the cap; `Ok(None)` when there is none.
pub(crate) fn read_bytes(path: &Path, what: &str) -> Result<Option<Vec<u8>>, String> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {what} {}: {e}", path.display())),
    };
    let too_large = || {
        format!(
            "{what} {} is larger than {MAX_REPORT_BYTES} bytes, the most any input may be: not read",
            path.display()
        )
    };
    // A file's size, where it has one, sizes the buffer (one read, not a doubling series: a
    // work reads thousands of small records) and refuses a large file unread; a device
    // (`/dev/zero`) is read up to the cap.
    let size = file.metadata().map_or(0, |m| m.len());
    if size > MAX_REPORT_BYTES as u64 {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(size as usize + 1);
    file.take(MAX_REPORT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {what} {}: {e}", path.display()))?;
    if bytes.len() > MAX_REPORT_BYTES {
        return Err(too_large());
    }
    Ok(Some(bytes))
}

/// The text of the file at `path`, which is `what` ("the plan", "the record") in messages.
pub(crate) fn read(path: &Path, what: &str) -> Result<String, String> {
    read_optional(path, what)?.ok_or_else(|| format!("cannot read {what} {}: no such file", path.display()))
}

/// The text of the file at `path`, as [`read`]; `Ok(None)` when there is none.
pub(crate) fn read_optional(path: &Path, what: &str) -> Result<Option<String>, String> {
    let Some(bytes) = read_bytes(path, what)? else { return Ok(None) };
    let mut text = String::from_utf8(bytes).map_err(|e| format!("{what} {} is not UTF-8 text: {e}", path.display()))?;
    let bom = text.len() - without_bom(&text).len();
    text.drain(..bom);
    Ok(Some(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_within_the_cap_and_skips_a_byte_order_mark() {
        let dir = std::env::temp_dir().join(format!("rdbench-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.json");
        std::fs::write(&path, "\u{feff}{\"a\": 1}").unwrap();
        assert_eq!(read(&path, "the report").unwrap(), "{\"a\": 1}");
        assert_eq!(read_optional(&dir.join("none"), "the journal").unwrap(), None);
        let e = read(&dir.join("none"), "the plan").unwrap_err();
        assert!(e.starts_with("cannot read the plan") && e.contains("no such file"), "{e}");
        let e = read(Path::new("/dev/zero"), "a run record").unwrap_err();
        assert!(e.contains("a run record /dev/zero is larger than 67108864 bytes"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
