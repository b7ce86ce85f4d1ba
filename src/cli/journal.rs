//! A journal: records appended one JSON object per line (JSON Lines) as they finish, each
//! line flushed to the disk before the next, so that an interrupted bench keeps every run
//! it finished and the next one can reuse them. `rdbench run` journals its runs beside the
//! report (`bench_report.json.runs.jsonl`); `rdbench study` also journals each finished
//! bench report.
//!
//! Every complete record survives: a last line cut short (a kill or a full disk during a
//! write) is cut off when the journal is opened, so the next record starts a line of its
//! own, and an append that fails is cut back the same way at once. A journal is never
//! written through a symbolic link (refused, as every output is: `cli::atomic`), and is read
//! within the inputs' size cap.

use crate::cli::{atomic, input};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

/// The journal of a report written to `out`, under `kind` ("runs", "benches"): the report's
/// file name with `.{kind}.jsonl` appended, in the same directory.
pub fn path_beside(out: &Path, kind: &str) -> PathBuf {
    let mut name = out.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(format!(".{kind}.jsonl"));
    out.with_file_name(name)
}

/// An open journal of records of type `T`, appended to.
pub struct Journal<T> {
    path: PathBuf,
    file: File,
    /// Bytes of complete lines: a failed append is cut back to it.
    len: u64,
    /// Records the file holds.
    held: usize,
    /// Bytes of a last line cut short that opening cut off.
    cut: u64,
    _records: PhantomData<fn(&T)>,
}

/// The records of a journal's bytes, and how many bytes of them are complete lines: a last
/// line that does not parse (cut short) is left out; any other is an error naming it.
fn parse<T: DeserializeOwned>(bytes: &[u8], path: &Path) -> Result<(Vec<T>, usize), String> {
    let mut records = Vec::new();
    let mut complete = 0;
    let mut lines = bytes.split_inclusive(|&b| b == b'\n').enumerate().peekable();
    while let Some((i, line)) = lines.next() {
        let text = String::from_utf8_lossy(line);
        let text = if i == 0 { rdbench_core::report::without_bom(&text) } else { &text };
        if text.trim().is_empty() {
            if line.ends_with(b"\n") {
                complete += line.len();
            }
            continue;
        }
        // A record is only complete with its newline: a write cut just before it is cut off.
        match serde_json::from_str(text) {
            Ok(r) if line.ends_with(b"\n") => {
                records.push(r);
                complete += line.len();
            }
            Err(e) if lines.peek().is_some() => {
                return Err(format!(
                    "the journal {} is damaged at line {}: {e} (move it away to start afresh)",
                    path.display(),
                    i + 1
                ));
            }
            _ => {} // the last line, cut short by a write that was interrupted
        }
    }
    Ok((records, complete))
}

impl<T: Serialize + DeserializeOwned> Journal<T> {
    /// Open the journal at `path` for appending, creating it if it is not there, and read
    /// its records. A last line cut short is cut off the file ([`Journal::cut_note`] says
    /// so). A path that is a symbolic link, a folder or a special file is refused.
    pub fn open(path: &Path) -> Result<(Self, Vec<T>), String> {
        let cannot = |e: &dyn std::fmt::Display| format!("cannot open the journal {}: {e}", path.display());
        atomic::check_dest(path).map_err(|e| e.replacen("cannot write", "cannot open the journal", 1))?;
        let bytes = input::read_bytes(path, "the journal")?;
        let exists = bytes.is_some();
        let bytes = bytes.unwrap_or_default();
        let (records, complete) = parse::<T>(&bytes, path)?;
        // An existing file is opened without creating (a link planted since the check is
        // caught below, before anything is written); a new one is created new, never
        // through a link.
        let file = OpenOptions::new().append(true).create_new(!exists).open(path).map_err(|e| cannot(&e))?;
        same_file(&file, path).map_err(|e| cannot(&e))?;
        if complete < bytes.len() {
            file.set_len(complete as u64).map_err(|e| cannot(&format_args!("cannot cut its last line: {e}")))?;
        }
        let journal = Journal {
            path: path.to_path_buf(),
            file,
            len: complete as u64,
            held: records.len(),
            cut: (bytes.len() - complete) as u64,
            _records: PhantomData,
        };
        Ok((journal, records))
    }

    /// Append `record` as one line and wait until it is on the disk. A write that fails is
    /// cut back off the file, so the next one starts a line of its own.
    pub fn append(&mut self, record: &T) -> io::Result<()> {
        let mut line = serde_json::to_string(record).map_err(io::Error::other)?;
        line.push('\n');
        let written = self.file.write_all(line.as_bytes()).and_then(|_| self.file.sync_data());
        match written {
            Ok(()) => {
                self.len += line.len() as u64;
                self.held += 1;
                Ok(())
            }
            Err(e) => {
                let _ = self.file.set_len(self.len);
                Err(e)
            }
        }
    }

    /// Where the journal is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many records the journal holds: those read when it was opened and those appended.
    pub fn held(&self) -> usize {
        self.held
    }

    /// What opening cut off, in words: a last line cut short (a write interrupted).
    pub fn cut_note(&self) -> Option<String> {
        (self.cut > 0).then(|| {
            let (n, s) = (self.held, if self.held == 1 { "" } else { "s" });
            format!(
                "the journal {} ended in a line cut short ({} bytes: a write was interrupted); it is cut back to its \
                 last complete record, and holds {n} record{s}",
                self.path.display(),
                self.cut
            )
        })
    }
}

/// Whether the open `file` is the one at `path` itself (not a link put there since `path`
/// was checked).
fn same_file(file: &File, path: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let (open, there) = (file.metadata().map_err(|e| e.to_string())?, std::fs::symlink_metadata(path));
    match there {
        Ok(m) if m.dev() == open.dev() && m.ino() == open.ino() => Ok(()),
        _ => Err("it changed while being opened (a symbolic link put there?): not written".into()),
    }
}

/// Remove the journal at `path` (its report is written); no journal is no error.
pub fn remove(path: &Path) -> Result<(), String> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => {
            Err(format!("cannot remove the journal {}: {e}", path.display()))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("rdbench-journal-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn open(path: &Path) -> (Journal<Vec<u32>>, Vec<Vec<u32>>) {
        Journal::open(path).unwrap()
    }

    #[test]
    fn appends_reads_back_cuts_a_cut_last_line_and_names_a_damaged_one() {
        let dir = dir("lines");
        let path = path_beside(&dir.join("r.json"), "runs");
        assert_eq!(path.file_name().unwrap(), "r.json.runs.jsonl");
        let (mut j, prior) = open(&path);
        assert!(prior.is_empty() && j.cut_note().is_none());
        j.append(&vec![1, 2]).unwrap();
        j.append(&vec![3]).unwrap();
        drop(j);
        // Reopened, it appends after what is there.
        let (mut j, prior) = open(&path);
        assert_eq!(prior.len(), 2);
        j.append(&vec![4]).unwrap();
        drop(j);
        // A kill during a write: the cut line is cut off on open, and what is appended next
        // starts a line of its own, so every complete record reads back.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"[5, 6").unwrap();
        let (mut j, prior) = open(&path);
        assert_eq!(prior, vec![vec![1, 2], vec![3], vec![4]]);
        let note = j.cut_note().unwrap();
        assert!(note.contains("cut short (5 bytes") && note.contains("holds 3 records"), "{note}");
        j.append(&vec![7]).unwrap();
        assert_eq!(j.held(), 4);
        drop(j);
        let (j, prior) = open(&path);
        assert_eq!(prior, vec![vec![1, 2], vec![3], vec![4], vec![7]]);
        assert!(j.cut_note().is_none());
        // A complete record that lost only its newline is cut too: the file holds whole lines.
        f.write_all(b"[8]").unwrap();
        assert_eq!(open(&path).1.len(), 4);
        // Damage before the last line is an error naming the line.
        f.write_all(b"[5, 6\n[7]\n").unwrap();
        let e = Journal::<Vec<u32>>::open(&path).err().unwrap();
        assert!(e.contains("damaged at line 5"), "{e}");
        remove(&path).unwrap();
        assert!(!path.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_journal_is_never_written_through_a_link_nor_read_past_the_cap() {
        let dir = dir("link");
        let (target, path) = (dir.join("elsewhere"), dir.join("r.json.runs.jsonl"));
        std::os::unix::fs::symlink(&target, &path).unwrap();
        let e = Journal::<Vec<u32>>::open(&path).err().unwrap();
        assert!(e.contains("cannot open the journal") && e.contains("symbolic link"), "{e}");
        assert!(!target.exists(), "nothing was created through the link");
        std::fs::remove_file(&path).unwrap();
        // A journal past the inputs' cap (a sparse file) is refused unread.
        let big = File::create(&path).unwrap();
        big.set_len(rdbench_core::report::MAX_REPORT_BYTES as u64 + 1).unwrap();
        let e = Journal::<Vec<u32>>::open(&path).err().unwrap();
        assert!(e.contains("larger than 67108864 bytes"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
